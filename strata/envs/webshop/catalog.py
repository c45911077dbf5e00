"""WebShop's product catalogue and goals, read from the files WebShop's own setup downloads.

What `load_catalog` reproduces of WebShop (princeton-nlp/WebShop @ 64fa2a5, ``web_agent_site/engine``):

- products: ``items_shuffle*.json`` (a list, file order kept), with ``items_ins_v2*.json`` (attributes and the
  synthetic instruction, by ASIN) and, for human goals, ``items_human_ins.json`` (instructions by ASIN). An
  ASIN that is ``nan``, longer than 10 characters or seen before is skipped; a missing price is $100.0; a
  price string holds one price or a range (the first two ``$`` amounts); option names and values are
  lower-cased, a ``/`` in a value becomes `` | ``; a product without attributes gets ``DUMMY_ATTR``.
- the price a product sells at: its price, or for a range one uniform draw in it (``generate_product_prices``);
- goals: for human goals one per human instruction with attributes (its options a list of values); for
  synthetic ones, one per combination of the product's options (options as (name, value) pairs). Each gets
  a price cap drawn from the first four multiples of 10 above the price (the larger of two), and the goal list
  is shuffled with seed 233, which fixes the goal order every WebShop split refers to.

WebShop draws the range prices and price caps from Python's unseeded global random stream, so they change
from run to run; here they come from ``random.Random(seed)`` (``seed``, default 0), so a catalogue and its goals
are the same in every worker and every run. That is the one deliberate difference.

Splits (`strata.envs.webshop.tasks.goal_ranges`): on the 1,000-product files, which verl-agent and AgentGym load,
goals 0-499 are ``test`` and the rest ``train`` (their split; synthetic goals are their default and ours). WebShop's
own split (its ``baseline_models``: 0-499 ``test``, 500-1499 ``valid``, the rest ``train``) holds for the human
goals of the full catalogue, the only setting it was made for.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strata.envs.errors import CatalogError
from strata.envs.webshop.tasks import (
    DEFAULT_GOALS,
    GOAL_KINDS,
    GoalRanges,
    check_split,
    describe_ranges,
    goal_ranges,
    parse_game_id,
    task_name,
)

if TYPE_CHECKING:
    from strata.envs.tasks import Task

# Names of the files WebShop's setup.sh downloads into its data/ folder (the small set, then the full one).
PRODUCT_FILES = ("items_shuffle_1000.json", "items_shuffle.json")
ATTRIBUTE_FILES = ("items_ins_v2_1000.json", "items_ins_v2.json")
HUMAN_INSTRUCTION_FILE = "items_human_ins.json"

DEFAULT_PRICE = 100.0
PRICE_CAPS = tuple(10.0 * i for i in range(1, 100))  # WebShop's PRICE_RANGE
NO_PRICE_CAP = 1_000_000.0  # what a goal gets when fewer than two caps lie above the price
GOAL_SHUFFLE_SEED = 233


@dataclass(frozen=True)
class Product:
    """One product as the site shows it and the reward reads it."""

    asin: str
    title: str
    description: str
    bullet_points: tuple[str, ...]
    price_tag: str  # what the pages show: "$12.99" or "$5.0 to $9.99"
    pricing: tuple[float, ...]  # one price or the two ends of a range
    options: dict[str, tuple[str, ...]]  # option name -> values, both lower-case
    attributes: tuple[str, ...]
    category: str
    query: str
    product_category: str  # Amazon's breadcrumb, "A › B › C"
    instruction: str | None = None  # the synthetic instruction (items_ins_v2), if any
    instruction_attributes: tuple[str, ...] = ()
    human_instructions: tuple[dict[str, Any], ...] = ()


GoalOption = str | tuple[str, str]  # a human goal's option value, or a synthetic goal's (name, value)


@dataclass(frozen=True)
class Goal:
    """What a shopper asks for: the instruction shown, and what the reward compares the purchase with."""

    asin: str  # the product the goal was written from
    instruction_text: str
    attributes: tuple[str, ...]
    options: tuple[GoalOption, ...]
    price_upper: float
    name: str  # the goal product's title (the type reward's nouns come from it)
    query: str
    category: str
    product_category: str
    weight: float = 1.0


@dataclass
class Catalog:
    """Products by ASIN (in file order), the price each sells at, and the goals in WebShop's order: ``goal_kind``
    (synthetic or human) of the 1,000-product files, or of the full catalogue (``full_catalogue``)."""

    products: dict[str, Product]
    prices: dict[str, float]
    goals: list[Goal] = field(default_factory=list)
    goal_kind: str = DEFAULT_GOALS
    full_catalogue: bool = False

    @property
    def ranges(self) -> GoalRanges:
        return goal_ranges(self.goal_kind, self.full_catalogue)

    def describe(self) -> str:
        """``synthetic goals of the 1,000-product files (train 500-, test 0-499)``: which goals and split."""
        return f"{self.goal_kind} goals of {describe_catalogue(self.goal_kind, self.full_catalogue)}"

    def split(self, name: str) -> range:
        """Goal indices of split ``name``; a split this catalogue's goals do not have is a `CatalogError`."""
        if check_split(name) not in self.ranges:
            raise CatalogError(f"the {self.describe()} have no {name} split")
        start, stop = self.ranges[name]
        return range(min(start, len(self.goals)), len(self.goals) if stop is None else min(stop, len(self.goals)))


def describe_catalogue(goals: str, full_catalogue: bool) -> str:
    """``the 1,000-product files (train 500-, test 0-499)``: which files, and the split of their ``goals`` goals."""
    files = "full catalogue" if full_catalogue else "1,000-product files"
    return f"the {files} ({describe_ranges(goal_ranges(goals, full_catalogue))})"


def parse_pricing(pricing: str | None) -> tuple[tuple[float, ...], str]:
    """(prices, price tag) of a product's ``pricing`` string, as WebShop's loader reads it."""
    if not pricing:
        return (DEFAULT_PRICE,), f"${DEFAULT_PRICE}"
    prices = [float(Decimal(re.sub(r"[^\d.]", "", piece))) for piece in pricing.split("$")[1:]]
    if len(prices) == 1:
        return (prices[0],), f"${prices[0]}"
    return (prices[0], prices[1]), f"${prices[0]} to ${prices[1]}"


def parse_product(raw: dict[str, Any], attributes: dict[str, Any], human: dict[str, Any] | None) -> Product:
    """One entry of ``items_shuffle*.json`` with its attribute record and (optionally) human instructions."""
    asin = raw["asin"]
    pricing, price_tag = parse_pricing(raw.get("pricing"))
    options: dict[str, tuple[str, ...]] = {}
    for name, contents in (raw.get("customization_options") or {}).items():
        if contents is None:
            continue
        options[name.lower()] = tuple(c["value"].strip().replace("/", " | ").lower() for c in contents)
    bullets = raw["small_description"]
    record = attributes.get(asin, {})
    return Product(
        asin=asin, title=raw["name"], description=raw["full_description"],
        bullet_points=tuple(bullets) if isinstance(bullets, list) else (bullets,),
        price_tag=price_tag, pricing=pricing, options=options,
        attributes=tuple(record.get("attributes", ["DUMMY_ATTR"])),
        category=raw["category"], query=raw["query"].lower().strip(), product_category=raw["product_category"],
        instruction=record.get("instruction"), instruction_attributes=tuple(record.get("instruction_attributes") or ()),
        human_instructions=tuple((human or {}).get(asin, ())),
    )


def load_products(raw_products: list[dict[str, Any]], attributes: dict[str, Any],
                  human: dict[str, Any] | None = None, num_products: int | None = None) -> dict[str, Product]:
    """Products by ASIN in file order, skipping the ASINs WebShop skips."""
    products: dict[str, Product] = {}
    for raw in raw_products[:num_products]:
        asin = raw["asin"]
        if asin == "nan" or len(asin) > 10 or asin in products:
            continue
        products[asin] = parse_product(raw, attributes, human)
    return products


def sale_prices(products: dict[str, Product], rng: random.Random) -> dict[str, float]:
    """The price each product sells at: its only price, or a uniform draw within its range."""
    return {asin: p.pricing[0] if len(p.pricing) == 1 else rng.uniform(*p.pricing[:2]) for asin, p in products.items()}


def price_cap(price: float, rng: random.Random) -> tuple[float, str]:
    """(cap, the instruction's price clause): the larger of two of the four multiples of 10 above ``price``."""
    above = [cap for cap in PRICE_CAPS if cap > price][:4]
    if len(above) < 2:
        return NO_PRICE_CAP, ""
    cap = max(rng.sample(above, 2))
    return cap, f", and price lower than {cap:.2f} dollars"


def human_goals(products: dict[str, Product], prices: dict[str, float], rng: random.Random) -> list[Goal]:
    """One goal per human instruction that names attributes; its options are a list of values."""
    goals = []
    for product in products.values():
        for instruction in product.human_instructions:
            if not instruction["instruction_attributes"]:
                continue
            cap, clause = price_cap(prices[product.asin], rng)
            goals.append(Goal(
                asin=product.asin, instruction_text=instruction["instruction"].strip(".") + clause,
                attributes=tuple(instruction["instruction_attributes"]),
                options=tuple(instruction["instruction_options"]), price_upper=cap, name=product.title,
                query=product.query, category=product.category, product_category=product.product_category,
            ))
    return goals


def synthetic_goals(products: dict[str, Product], prices: dict[str, float], rng: random.Random) -> list[Goal]:
    """One goal per combination of a product's option values, for each product with a synthetic instruction;
    a goal's weight is the mean over its attributes of 1 / (goals naming that attribute)."""
    goals = []
    for product in products.values():
        if product.instruction is None:
            continue
        if not product.instruction_attributes:
            raise ValueError(f"{product.asin}: a synthetic instruction without instruction_attributes")
        cap, clause = price_cap(prices[product.asin], rng)
        names = sorted(product.options)
        for values in itertools.product(*(product.options[name] for name in names)):
            chosen = tuple(zip(names, values, strict=True))
            with_options = " with " + ", and ".join(f"{n}: {v}" for n, v in chosen) if chosen else ""
            goals.append(Goal(
                asin=product.asin, instruction_text=f"{product.instruction}{with_options}{clause}",
                attributes=product.instruction_attributes, options=chosen, price_upper=cap, name=product.title,
                query=product.query, category=product.category, product_category=product.product_category,
            ))
    counts = Counter(attribute for goal in goals for attribute in goal.attributes)
    return [dataclasses.replace(goal, weight=sum(1 / counts[a] for a in goal.attributes) / len(goal.attributes))
            for goal in goals]


def build_catalog(raw_products: list[dict[str, Any]], attributes: dict[str, Any], human: dict[str, Any] | None,
                  *, goals: str = DEFAULT_GOALS, seed: int = 0, num_products: int | None = None,
                  full_catalogue: bool = False) -> Catalog:
    """Products, sale prices and ``goals`` goals (human or synthetic) in WebShop's order (shuffled with seed 233);
    ``full_catalogue``: the products are WebShop's full set (which split its goals have: `Catalog.ranges`)."""
    if goals not in GOAL_KINDS:
        raise ValueError(f"unknown WebShop goals {goals!r}; valid: {', '.join(GOAL_KINDS)}")
    products = load_products(raw_products, attributes, human if goals == "human" else None, num_products)
    rng = random.Random(seed)
    prices = sale_prices(products, rng)
    goal_list = (human_goals if goals == "human" else synthetic_goals)(products, prices, rng)
    random.Random(GOAL_SHUFFLE_SEED).shuffle(goal_list)
    return Catalog(products, prices, goal_list, goals, full_catalogue)


def find_data_file(folder: Path, names: tuple[str, ...]) -> Path:
    """The first of ``names`` present in ``folder`` (the small set is preferred), or a clear error."""
    for name in names:
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"{folder} holds none of {', '.join(names)}: download WebShop's data "
                            "(its setup.sh) or generate a catalogue with `strata make-webshop`")


def catalog_files(folder: str | Path, goals: str = DEFAULT_GOALS, small: bool = True) -> list[Path]:
    """The files `load_catalog` reads for ``goals``: products, attributes, and for human goals the instructions;
    ``small`` prefers the 1,000-product files."""
    folder = Path(folder)
    order = slice(None) if small else slice(None, None, -1)
    files = [find_data_file(folder, PRODUCT_FILES[order]), find_data_file(folder, ATTRIBUTE_FILES[order])]
    if goals == "human":
        files.append(find_data_file(folder, (HUMAN_INSTRUCTION_FILE,)))
    return files


def catalog_digest(folder: str | Path, goals: str = DEFAULT_GOALS) -> str:
    """SHA-256 of the bytes of the files the engine's catalogue is built from (`catalog_files`): with a goal's
    kind and index it names the goal, wherever the folder lies, and another catalogue gives another digest."""
    digest = hashlib.sha256()
    for path in catalog_files(folder, goals):
        with path.open("rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


def is_full_catalogue(products_file: Path) -> bool:
    """Whether ``products_file`` (the first of `catalog_files`) is WebShop's full product set."""
    return products_file.name == PRODUCT_FILES[1]


def load_catalog(folder: str | Path, *, goals: str = DEFAULT_GOALS, small: bool = True, seed: int = 0,
                 num_products: int | None = None) -> Catalog:
    """The catalogue in ``folder`` (WebShop's data/ layout): ``small`` reads the 1,000-product files."""
    products_file, attributes_file, *human_file = catalog_files(folder, goals, small)
    human = _read_json(human_file[0]) if human_file else None
    return build_catalog(_read_json(products_file), _read_json(attributes_file), human, goals=goals, seed=seed,
                         num_products=num_products, full_catalogue=is_full_catalogue(products_file))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CatalogError(f"{path} is not readable WebShop data ({error}); download it again or regenerate the "
                           "catalogue with `strata make-webshop`") from None


def task_set(tasks: Sequence[Task]) -> str:
    """Which goals a task list holds, for evaluation output (`strata.envs.registry`): ``synthetic goals 0-499 (500)
    of the 1,000-product files, split test (train 500-, test 0-499)``. A WebShop number means little without it."""
    parsed = [parse_game_id(task.game_file) for task in tasks]
    kinds = sorted({goals for _, goals, _ in parsed})
    indices = [index for *_, index in parsed]
    files = []
    for folder in sorted({folder for folder, *_ in parsed}):
        try:
            files.append(describe_catalogue(kinds[0], is_full_catalogue(catalog_files(folder, kinds[0])[0])))
        except FileNotFoundError:  # read elsewhere than where it was evaluated
            files.append(f"the catalogue in {folder} (not found here)")
    return (f"WebShop {'+'.join(kinds)} goals {min(indices)}-{max(indices)} ({len(indices)}), split "
            f"{'+'.join(sorted({task.split for task in tasks}))}, of {'; '.join(files)}")


def game_fingerprint(task: Task, memo: dict) -> str:
    """What a WebShop goal is (`strata.envs.registry`): its kind and index with its catalogue's `catalog_digest`
    (each catalogue read once per ``memo``)."""
    folder, goals, _ = parse_game_id(task.game_file)
    if (folder, goals) not in memo:
        memo[folder, goals] = catalog_digest(folder, goals)
    return f"{task_name(task)}\t{memo[folder, goals]}"
