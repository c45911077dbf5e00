"""A generated WebShop catalogue in WebShop's own file layout, for tests and the offline demo.

`write_catalog` writes ``items_shuffle_1000.json`` (products), ``items_ins_v2_1000.json`` (attributes and a
synthetic instruction for most products) and ``items_human_ins.json`` (instructions in the human-goal format)
into a folder, so everything downstream (`strata.envs.webshop.catalog.load_catalog`, the search, the site)
reads it exactly as it reads the real download. Products come from five categories, as WebShop's do (beauty,
electronics, fashion, food, furniture), each with its product types, attributes and options; titles are a brand,
adjectives and the type's nouns, so the reward's type term sees real differences between products. The same
``seed`` writes the same files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from strata.envs.webshop.catalog import ATTRIBUTE_FILES, HUMAN_INSTRUCTION_FILE, PRODUCT_FILES

# category -> (breadcrumb root, product types (query, title nouns), attributes, options (name -> values))
CATEGORIES: dict[str, tuple[str, tuple[tuple[str, str], ...], tuple[str, ...], dict[str, tuple[str, ...]]]] = {
    "beauty": (
        "Beauty & Personal Care",
        (("face cream", "face cream"), ("shampoo", "hair shampoo"), ("lipstick", "lipstick stick"),
         ("body scrub", "body scrub")),
        ("paraben free", "cruelty free", "natural ingredients", "long lasting", "sensitive skin", "tea tree"),
        {"scent": ("lavender", "citrus", "unscented"), "size": ("2 ounce", "8 ounce")},
    ),
    "electronics": (
        "Electronics",
        (("headphones", "headphones headset"), ("usb cable", "usb cable charger"), ("speaker", "bluetooth speaker"),
         ("power bank", "power bank battery")),
        ("fast charging", "noise cancelling", "easy to carry", "high definition", "water resistant", "wireless"),
        {"color": ("black", "white", "navy blue"), "pack": ("1 pack", "2 pack")},
    ),
    "fashion": (
        "Clothing, Shoes & Jewelry",
        (("men's shorts", "shorts"), ("women's dress", "dress"), ("running shoes", "shoes sneakers"),
         ("t-shirt", "shirt tee")),
        ("machine wash", "elastic waist", "slim fit", "cotton spandex", "button closure", "rubber sole"),
        {"color": ("red", "heather grey", "olive green"), "size": ("small", "medium", "x-large")},
    ),
    "food": (
        "Grocery & Gourmet Food",
        (("green tea", "tea bags"), ("protein bar", "protein bars"), ("coffee beans", "coffee beans"),
         ("dark chocolate", "chocolate")),
        ("gluten free", "low sugar", "non gmo", "keto friendly", "individually wrapped", "high protein"),
        {"flavor": ("vanilla", "mint", "original"), "size": ("12 count", "24 count")},
    ),
    "furniture": (
        "Home & Kitchen",
        (("office chair", "office chair"), ("bookshelf", "bookshelf shelves"), ("coffee table", "coffee table"),
         ("bed frame", "bed frame")),
        ("easy assembly", "solid wood", "living room", "metal frame", "storage space", "height adjustable"),
        {"color": ("walnut", "white", "espresso"), "size": ("queen", "full")},
    ),
}
BRANDS = ("Acme", "Borealis", "Cobalt", "Dune", "Ember", "Fjord", "Granite", "Harbor", "Iris", "Juniper")
HUMAN_INSTRUCTIONS_PER_PRODUCT = 2  # 1,000 products -> 2,000 human goals: every WebShop split has goals
ADJECTIVES = ("classic", "premium", "compact", "deluxe", "everyday", "modern", "portable", "soft")


def _product(index: int, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """(raw product, its attribute record, its human instructions) for product ``index``."""
    category = sorted(CATEGORIES)[index % len(CATEGORIES)]
    root, types, attribute_pool, option_pool = CATEGORIES[category]
    query, nouns = rng.choice(types)
    attributes = rng.sample(attribute_pool, rng.randint(2, 4))
    options = {name: rng.sample(values, rng.randint(1, len(values)))
               for name, values in option_pool.items() if rng.random() < 0.8}
    asin = f"B{index:09d}"
    title = f"{rng.choice(BRANDS)} {' '.join(rng.sample(ADJECTIVES, 2)).title()} {nouns.title()}"
    low = round(rng.uniform(3, 120), 2)
    pricing = f"${low}" if rng.random() < 0.7 else f"${low} - ${round(low * rng.uniform(1.1, 1.8), 2)}"
    raw = {
        "asin": asin, "name": title, "category": category, "query": query,
        "product_category": f"{root} › {category.title()} › {query.title()}",
        "full_description": f"This {query} is {' and '.join(attributes)}.",
        "small_description": [f"{attribute.capitalize()}." for attribute in attributes],
        "pricing": pricing,
        "customization_options": {name: [{"value": value, "image": None} for value in values]
                                  for name, values in options.items()} or None,
        "images": [f"https://example.invalid/{asin}.jpg"],
    }
    wanted = rng.sample(attributes, 2)
    record: dict[str, Any] = {"attributes": attributes}
    if rng.random() < 0.8:
        record |= {"instruction": f"Find me {query} with {', '.join(wanted)}", "instruction_attributes": wanted}
    human = []
    for _ in range(HUMAN_INSTRUCTIONS_PER_PRODUCT):
        wanted = rng.sample(attributes, 2)
        picked = [rng.choice(values) for values in options.values()]
        in_options = f" in {' and '.join(picked)}" if picked else ""
        instruction = f"i am looking for {query} that is {' and '.join(wanted)}{in_options}"
        human.append({"asin": asin, "instruction": instruction, "instruction_attributes": wanted,
                      "instruction_options": picked})
    return raw, record, human


def write_catalog(folder: str | Path, num_products: int = 1000, seed: int = 0) -> Path:
    """Write a catalogue of ``num_products`` products into ``folder`` (WebShop's small-set file names)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    products, attributes, human = [], {}, {}
    for index in range(num_products):
        raw, record, instructions = _product(index, rng)
        products.append(raw)
        attributes[raw["asin"]] = record
        human[raw["asin"]] = instructions
    for name, content in ((PRODUCT_FILES[0], products), (ATTRIBUTE_FILES[0], attributes),
                          (HUMAN_INSTRUCTION_FILE, human)):
        (folder / name).write_text(json.dumps(content, indent=1), encoding="utf-8")
    return folder
