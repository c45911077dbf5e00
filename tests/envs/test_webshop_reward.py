"""WebShop's purchase reward, term by term, on hand-worked cases (each score in a comment is thefuzz 0.19's)."""

from __future__ import annotations

import dataclasses

import pytest

from strata.envs.webshop.catalog import Goal, Product
from strata.envs.webshop.reward import normalize_color, purchase_reward, title_score, type_reward


def every_word(title: str) -> list[str]:
    """A tagger that calls every word a noun, so title shares can be worked out by hand."""
    return title.lower().split()


SHORTS = Product(
    asin="B000000001", title="Cotton Shorts", description="Comfortable shorts for the gym.",
    bullet_points=("Machine wash.", "Elastic waist."), price_tag="$20.0", pricing=(20.0,),
    options={"color": ("navy blue", "dark red"), "size": ("large", "x-large")},
    attributes=("machine washable", "elastic waist"), category="fashion", query="men's shorts",
    product_category="Clothing › Men › Shorts",
)
GOAL = Goal(
    asin="B000000001", instruction_text="i need cotton shorts", attributes=("machine wash", "elastic waist"),
    options=(("color", "navy blue"), ("size", "x-large")), price_upper=30.0, name="Cotton Shorts",
    query="men's shorts", category="fashion", product_category="Clothing › Men › Shorts",
)
CHOSEN = {"color": "navy blue", "size": "x-large"}


def reward(product=SHORTS, price=20.0, chosen=CHOSEN, **goal_changes) -> float:
    return purchase_reward(product, price, chosen, dataclasses.replace(GOAL, **goal_changes), every_word).reward


def test_the_goal_product_with_the_goal_options_under_the_cap_scores_1() -> None:
    terms = purchase_reward(SHORTS, 20.0, CHOSEN, GOAL, every_word)
    assert terms.success and terms.reward == 1.0
    # "machine washable" vs "machine wash": 86 > 85, a fuzzy attribute match.
    assert (terms.attribute_matches, terms.num_attributes, terms.option_matches, terms.num_options) == (2, 2, 2, 2)
    assert (terms.r_type, terms.query_match, terms.category_match, terms.title_score, terms.price_ok) == (
        1.0, True, True, 1.0, True)


def test_price_over_the_cap_loses_the_price_term() -> None:
    assert reward(price=30.0) == 1.0  # at the cap is under it
    assert reward(price=30.01) == pytest.approx(4 / 5)  # (2 attributes + 2 options + 0) / (2 + 2 + 1)


def test_attributes_match_fuzzily_or_as_a_substring_of_the_texts() -> None:
    assert reward(attributes=("comfortable",)) == 1.0  # in the description only
    assert reward(attributes=("cotton",)) == 1.0  # in the title only ("Cotton Shorts".lower())
    assert reward(attributes=("elastic",)) == 1.0  # {"elastic"} within {"elastic", "waist"}: 100
    assert reward(attributes=("slim fit", "elastic waist")) == pytest.approx(4 / 5)  # "slim fit" nowhere
    # Only the goal's side is searched for in the texts, and the texts are lower-cased, not the attribute.
    assert reward(attributes=("Comfortable",)) == pytest.approx(3 / 4)


def test_options_after_colour_normalisation() -> None:
    # The chosen "navy blue" normalises to "blue" (blue comes before navy in WebShop's colour list); the goal's
    # pair ("color", "navy blue") is no colour word itself, so it is scored as "color navy blue": {blue} within it.
    assert normalize_color("navy blue") == "blue" and normalize_color(("color", "navy blue")) == ("color", "navy blue")
    assert reward(chosen={"color": "dark red", "size": "x-large"}) == pytest.approx(4 / 5)  # "dark" vs the pair: 11
    # A pair whose value is a colour word becomes that word; the chosen "dark red" becomes "dark" (first in the
    # list): "dark" vs "red" scores 29, no match.
    assert normalize_color(("color", "red")) == "red"
    assert reward(chosen={"color": "dark red", "size": "x-large"}, options=(("color", "red"), ("size", "x-large"))) \
        == pytest.approx(4 / 5)
    assert reward(chosen={"size": "x-large"}) == pytest.approx(4 / 5)  # no colour chosen


def test_size_options_match_by_token_sets_both_ways_differently() -> None:
    # "large" vs ("size", "x-large"): {"large"} is within {"size", "x", "large"}: 100, a match;
    # "x-large" vs ("size", "large"): 83, no match.
    assert reward(chosen={"color": "navy blue", "size": "large"}) == 1.0
    assert reward(chosen=CHOSEN, options=(("color", "navy blue"), ("size", "large"))) == pytest.approx(4 / 5)


def test_human_goal_options_are_plain_values() -> None:
    assert reward(options=("navy blue", "x-large")) == 1.0
    assert reward(options=("navy blue", "small")) == pytest.approx(4 / 5)
    assert reward(options=()) == 1.0  # (2 + 0 + 1) / (2 + 0 + 1)


@pytest.mark.parametrize(("bought_title", "goal_title", "query", "category", "r_type", "score"), [
    ("Cotton Shorts", "Cotton Shorts", "men's shorts", "Clothing › Men › Shorts", 1.0, 1.0),
    # no query or category match, but the title share 1/2 > 0.2
    ("Cotton Shirt", "Cotton Shorts", "t-shirt", "Toys › Games", 1.0, 0.5),
    # share exactly 0.2 (1 of 5) is no match: 0.5 without a query or category match ...
    ("Cotton Shirt", "cotton a b c d", "t-shirt", "Toys › Games", 0.5, 0.2),
    # ... and 1.0 with one; a category match needs two shared breadcrumb pieces
    ("Cotton Shirt", "cotton a b c d", "t-shirt", "Clothing › Men › Shirts", 1.0, 0.2),
    ("Cotton Shirt", "cotton a b c d", "t-shirt", "Clothing › Women", 0.5, 0.2),
    # a share under 0.1 is 0.1 whatever else matches; a share of 0 is 0
    ("Cotton Shirt", "cotton a b c d e f g h i j", "men's shorts", "Clothing › Men › Shorts", 0.1, 1 / 11),
    ("Silk Shirt", "Cotton Shorts", "men's shorts", "Clothing › Men › Shorts", 0.0, 0.0),
    # a goal title without nouns counts as a share of 0.2
    ("Silk Shirt", "", "men's shorts", "Toys", 1.0, 0.2),
    ("Silk Shirt", "", "t-shirt", "Toys", 0.5, 0.2),
])
def test_type_reward(bought_title, goal_title, query, category, r_type, score) -> None:
    product = dataclasses.replace(SHORTS, title=bought_title, query=query, product_category=category)
    got = type_reward(product, dataclasses.replace(GOAL, name=goal_title), every_word)
    assert got[0] == r_type and got[3] == pytest.approx(score)


def test_the_type_term_multiplies_the_rest() -> None:
    half = dataclasses.replace(SHORTS, title="Cotton Shirt", query="t-shirt", product_category="Toys")
    assert reward(product=half, name="cotton a b c d") == pytest.approx(0.5)
    assert reward(product=dataclasses.replace(SHORTS, title="Silk Shirt")) == 0.0


def test_title_score_counts_repeated_goal_nouns_in_the_denominator() -> None:
    assert title_score("shorts", "shorts shorts cotton", every_word) == pytest.approx(1 / 3)


def test_the_word_fallback_and_when_it_is_used(caplog) -> None:
    from strata.envs.webshop.nouns import noun_tagger, word_nouns

    assert word_nouns("The Soft Cotton Shorts for Men, 2-Pack") == ["soft", "cotton", "shorts", "men", "pack"]
    assert noun_tagger(None) is word_nouns and not caplog.records
    with caplog.at_level("WARNING", logger="strata.envs.webshop.nouns"):
        assert noun_tagger("no_such_spacy_model") is word_nouns
    assert [r.getMessage() for r in caplog.records] == [
        "spaCy model no_such_spacy_model is not installed (python -m spacy download no_such_spacy_model): the "
        "WebShop reward's title nouns come from the word fallback"]
