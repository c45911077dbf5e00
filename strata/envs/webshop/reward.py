"""WebShop's reward for a purchase, term by term (Yao et al., 2022; ``web_agent_site/engine/goal.py`` at
princeton-nlp/WebShop 64fa2a5, whose code this follows in behaviour, not in text).

    R = r_type * (attribute matches + option matches + [price <= cap]) / (#attributes + #options + 1)

- attributes: a goal attribute matches when one of the product's attributes scores > 85 on thefuzz's
  ``token_set_ratio`` with it, or else when it is a substring of the lower-cased title, bullet points or
  description;
- options: after colour normalisation (the first colour word a value contains), a goal option matches when
  a chosen option scores > 85 with it. A synthetic goal's option is a (name, value) pair and is scored as
  WebShop scores it: thefuzz 0.19 turns the pair into its text, so ``("size", "x-large")`` reads
  "size x-large", and colour normalisation of a pair only maps a value that *is* a colour word;
- price: the price the product sells at (one per product, whatever the options) against the goal's cap;
- r_type: 1, or 0.5 when neither the query, the category breadcrumb (>= 2 shared pieces) nor the title
  nouns (share > 0.2) match; 0.1 when the title-noun share is < 0.1; 0 when it is 0. The share is
  |nouns(bought title) ∩ nouns(goal title)| / len(nouns(goal title)), 0.2 when the goal title has none.

Success is R = 1. thefuzz is pinned at WebShop's own 0.19.0 (pure Python, difflib's matcher), so every score
is the one WebShop computes. Title nouns come from a `NounTagger` (`strata.envs.webshop.nouns`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from strata.envs.webshop.catalog import Goal, GoalOption, Product

with warnings.catch_warnings():  # thefuzz 0.19 warns that it uses difflib: WebShop's own scores come from it
    warnings.simplefilter("ignore", UserWarning)
    from thefuzz import fuzz

FUZZY_MATCH = 85  # a score must exceed this
NounTagger = Callable[[str], list[str]]

# WebShop's colour words, in its order: normalisation keeps the first one a value contains.
COLORS = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black", "blue", "blush",
    "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel", "champagne", "charcoal", "cheetah",
    "chestnut", "chocolate", "christmas", "coffee", "cognac", "copper", "coral", "cranberry", "cream", "crystal",
    "dark", "denim", "eggplant", "elephant", "espresso", "fuchsia", "gold", "granite", "grape", "graphite",
    "grass", "gray", "green", "grey", "heather", "indigo", "ivory", "ivy", "khaki", "lavender", "lemon",
    "leopard", "light", "lilac", "lime", "magenta", "maroon", "mauve", "merlot", "midnight", "mint", "mocha",
    "multicolor", "mushroom", "mustard", "natural", "navy", "nude", "olive", "orange", "peach", "pewter", "pink",
    "plum", "purple", "rainbow", "red", "rose", "royal", "rust", "sand", "sapphire", "seashell", "silver",
    "skull", "slate", "steel", "stone", "stonewash", "sunflower", "tan", "taupe", "teal", "tiger", "turquoise",
    "violet", "walnut", "wheat", "white", "wine", "yellow",
)


@dataclass(frozen=True)
class RewardTerms:
    """Every term of one purchase's reward, so a report can say why a purchase scored what it did."""

    reward: float
    r_type: float
    query_match: bool
    category_match: bool
    title_score: float
    attribute_matches: int
    num_attributes: int
    option_matches: int
    num_options: int
    price_ok: bool

    @property
    def success(self) -> bool:
        return self.reward == 1.0


def normalize_color(option: GoalOption) -> GoalOption:
    """The first colour word ``option`` contains (for a pair: equals), else ``option`` unchanged."""
    return next((color for color in COLORS if color in option), option)


def title_score(bought_title: str, goal_title: str, nouns: NounTagger) -> float:
    wanted = nouns(goal_title)
    if not wanted:
        return 0.2
    return len(set(nouns(bought_title)) & set(wanted)) / len(wanted)


def type_reward(product: Product, goal: Goal, nouns: NounTagger) -> tuple[float, bool, bool, float]:
    """(r_type, query match, category match, title score)."""
    query_match = product.query == goal.query
    pieces = [{piece.strip() for piece in crumbs.split("›")} for crumbs in (product.product_category,
                                                                          goal.product_category)]
    category_match = len(pieces[0] & pieces[1]) >= 2
    score = title_score(product.title, goal.name, nouns)
    r_type = 1.0 if (query_match or category_match or score > 0.2) else 0.5
    if score < 0.1:
        r_type = 0.1
    if score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, score


def attribute_matches(product: Product, goal: Goal) -> int:
    texts = (product.title.lower(), " ".join(product.bullet_points).lower(), product.description.lower())
    return sum(
        any(fuzz.token_set_ratio(have, wanted) > FUZZY_MATCH for have in product.attributes)
        or any(wanted in text for text in texts)
        for wanted in goal.attributes
    )


def option_matches(chosen: Mapping[str, str], goal: Goal) -> int:
    picked = [normalize_color(value) for value in chosen.values()]
    return sum(
        any(fuzz.token_set_ratio(have, wanted) > FUZZY_MATCH for have in picked)
        for wanted in (normalize_color(option) for option in goal.options)
    )


def purchase_reward(product: Product, price: float, chosen: Mapping[str, str], goal: Goal,
                    nouns: NounTagger) -> RewardTerms:
    """The reward of buying ``product`` at ``price`` with options ``chosen`` (name -> value) for ``goal``."""
    r_type, query_match, category_match, score = type_reward(product, goal, nouns)
    attributes, options = attribute_matches(product, goal), option_matches(chosen, goal)
    price_ok = price <= goal.price_upper
    total = (attributes + options + price_ok) / (len(goal.attributes) + len(goal.options) + 1)
    return RewardTerms(
        reward=r_type * total, r_type=r_type, query_match=query_match, category_match=category_match,
        title_score=score, attribute_matches=attributes, num_attributes=len(goal.attributes),
        option_matches=options, num_options=len(goal.options), price_ok=price_ok,
    )
