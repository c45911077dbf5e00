"""Reading WebShop's data files: products, sale prices, goals and splits, as WebShop's loader builds them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from strata.envs.errors import CatalogError, UnknownNameError
from strata.envs.webshop.catalog import (
    ATTRIBUTE_FILES,
    NO_PRICE_CAP,
    PRODUCT_FILES,
    build_catalog,
    load_catalog,
    load_products,
    parse_pricing,
    price_cap,
)
from strata.envs.webshop.generate import write_catalog


def raw(asin: str, **changes) -> dict:
    base = {"asin": asin, "name": "Acme Shorts", "category": "fashion", "query": " Men's Shorts ",
            "product_category": "Clothing › Men › Shorts", "full_description": "Shorts.",
            "small_description": ["Machine wash."], "pricing": "$20.00",
            "customization_options": {"Color": [{"value": " Navy/Blue ", "image": None}, {"value": "Red"}],
                                      "Size": [{"value": "L"}], "Style": None},
            "images": ["x.jpg"]}
    return base | changes


@pytest.mark.parametrize(("pricing", "prices", "tag"), [
    (None, (100.0,), "$100.0"),
    ("", (100.0,), "$100.0"),
    ("$12.99", (12.99,), "$12.99"),
    ("$15.00", (15.0,), "$15.0"),
    ("$5.00 - $9.99", (5.0, 9.99), "$5.0 to $9.99"),
    ("$1,299.00 - $1,499.00 - $2.00", (1299.0, 1499.0), "$1299.0 to $1499.0"),
])
def test_prices_are_read_as_webshop_reads_them(pricing, prices, tag) -> None:
    assert parse_pricing(pricing) == (prices, tag)


def test_a_product_record() -> None:
    attributes = {"B1": {"attributes": ["machine wash"], "instruction": "Find me shorts",
                         "instruction_attributes": ["machine wash"]}}
    products = load_products([raw("B1", small_description="One bullet."), raw("B2")], attributes)
    first, second = products["B1"], products["B2"]
    assert first.options == {"color": ("navy | blue", "red"), "size": ("l",)}  # lower-cased, "/" -> " | "
    assert first.query == "men's shorts" and first.bullet_points == ("One bullet.",)
    assert (first.attributes, first.instruction, first.instruction_attributes) == (
        ("machine wash",), "Find me shorts", ("machine wash",))
    assert second.attributes == ("DUMMY_ATTR",) and second.instruction is None


def test_asins_webshop_skips() -> None:
    products = load_products([raw("nan"), raw("B12345678901"), raw("B1", name="first"), raw("B1", name="second"),
                              raw("B2")], {})
    assert list(products) == ["B1", "B2"] and products["B1"].title == "first"
    assert list(load_products([raw("B1"), raw("B2")], {}, num_products=1)) == ["B1"]


def test_price_caps() -> None:
    rng = random.Random(0)
    caps = {price_cap(23.5, rng)[0] for _ in range(200)}
    assert caps == {40.0, 50.0, 60.0}  # the larger of two of 30, 40, 50, 60
    cap, clause = price_cap(23.5, random.Random(1))
    assert clause == f", and price lower than {cap:.2f} dollars"
    assert price_cap(975.0, rng) == (990.0, ", and price lower than 990.00 dollars")  # 980 and 990 above it
    assert price_cap(985.0, rng) == (NO_PRICE_CAP, "")  # only 990 above it


def test_synthetic_goals_one_per_option_combination() -> None:
    attributes = {"B1": {"attributes": ["machine wash", "cotton"], "instruction": "Find me shorts",
                         "instruction_attributes": ["machine wash"]},
                  "B2": {"attributes": ["cotton"], "instruction": "Find me a shirt",
                         "instruction_attributes": ["cotton"]}}
    catalog = build_catalog([raw("B1"), raw("B2", customization_options=None)], attributes, None, goals="synthetic")
    goals = sorted(catalog.goals, key=lambda g: (g.asin, g.options))
    assert [g.options for g in goals] == [(("color", "navy | blue"), ("size", "l")), (("color", "red"), ("size", "l")),
                                          ()]
    cap = goals[0].price_upper
    assert goals[0].instruction_text == (
        f"Find me shorts with color: navy | blue, and size: l, and price lower than {cap:.2f} dollars")
    assert goals[2].instruction_text.startswith("Find me a shirt, and price lower than")
    # weight: the mean over a goal's attributes of 1 / (goals naming it): "machine wash" is in 2 goals, "cotton" in 1
    assert [g.weight for g in goals] == [0.5, 0.5, 1.0]
    assert goals[0].name == "Acme Shorts" and goals[0].query == "men's shorts"


def test_human_goals_and_the_fixed_goal_order(tmp_path: Path) -> None:
    write_catalog(tmp_path, num_products=30, seed=3)
    one, other = load_catalog(tmp_path, goals="human", seed=0), load_catalog(tmp_path, goals="human", seed=1)
    assert len(one.goals) == 60  # two human instructions a product
    # The order comes from the seed-233 shuffle alone; the seed only moves sale prices and price caps.
    assert [(g.asin, g.options) for g in one.goals] == [(g.asin, g.options) for g in other.goals]
    assert [g.price_upper for g in one.goals] != [g.price_upper for g in other.goals]
    human = json.loads((tmp_path / "items_human_ins.json").read_text())
    first = one.goals[0]
    record = next(r for r in human[first.asin] if r["instruction_options"] == list(first.options)
                  and r["instruction_attributes"] == list(first.attributes))
    assert first.instruction_text.startswith(record["instruction"].strip("."))


def test_the_1000_product_files_split_as_verl_agent_and_agentgym(tmp_path: Path) -> None:
    """Synthetic goals by default, goals 0-499 test and the rest train (no valid); human goals on these files take
    the same split, since WebShop's own numbers its full catalogue's goals."""
    folder = write_catalog(tmp_path, num_products=1000)
    synthetic, human = load_catalog(folder), load_catalog(folder, goals="human")
    assert (synthetic.goal_kind, synthetic.full_catalogue, len(human.goals)) == ("synthetic", False, 2000)
    for catalog in (synthetic, human):
        assert (catalog.split("test"), catalog.split("train")) == (range(0, 500), range(500, len(catalog.goals)))
        with pytest.raises(CatalogError, match=f"the {catalog.goal_kind} goals of the 1,000-product files "
                           r"\(train 500-, test 0-499\) have no valid split"):
            catalog.split("valid")
    with pytest.raises(UnknownNameError, match="unknown WebShop split 'dev'; known splits: train, valid, test"):
        synthetic.split("dev")


def test_the_full_catalogue_s_human_goals_take_webshop_s_own_split(tmp_path: Path) -> None:
    folder = write_catalog(tmp_path, num_products=1000)
    for small, full in (PRODUCT_FILES, ATTRIBUTE_FILES):  # the full set's file names
        (folder / small).rename(folder / full)
    human, synthetic = load_catalog(folder, goals="human"), load_catalog(folder)
    assert human.full_catalogue and human.describe() == (
        "human goals of the full catalogue (train 1500-, valid 500-1499, test 0-499)")
    assert (human.split("test"), human.split("valid"), human.split("train")) == (
        range(0, 500), range(500, 1500), range(1500, 2000))
    assert synthetic.ranges == {"train": (500, None), "test": (0, 500)}


def test_a_folder_without_the_files_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="holds none of items_shuffle_1000.json, items_shuffle.json"):
        load_catalog(tmp_path)
    with pytest.raises(ValueError, match="unknown WebShop goals 'mixed'; valid: synthetic, human"):
        build_catalog([], {}, None, goals="mixed")


def test_the_full_set_s_file_names_and_fields_as_webshop_s_setup_downloads_them(tmp_path: Path, capsys) -> None:
    """A tree in WebShop's data/ layout with the full set's file names and the scraped fields WebShop drops."""
    from strata.cli import main

    products = [raw(f"B{i:09d}", brand="Acme", list_price="$30.00", product_information={"Weight": "1 lb"},
                    pricing=["$20.00", "$12.50 - $19.99", None][i % 3]) for i in range(3)]
    (tmp_path / "items_shuffle.json").write_text(json.dumps(products))
    (tmp_path / "items_ins_v2.json").write_text(json.dumps({p["asin"]: {"attributes": ["machine wash"]}
                                                            for p in products}))
    human = {p["asin"]: [{"asin": p["asin"], "instruction": "i need shorts.", "worker_id": "w",
                          "instruction_attributes": ["machine wash"], "instruction_options": ["red"]}]
             for p in products}
    (tmp_path / "items_human_ins.json").write_text(json.dumps(human))
    catalog = load_catalog(tmp_path, goals="human")
    assert [p.price_tag for p in catalog.products.values()] == ["$20.0", "$12.5 to $19.99", "$100.0"]
    assert len(catalog.goals) == 3 and all(g.instruction_text.startswith("i need shorts, and price lower than")
                                           for g in catalog.goals)
    assert main(["prepare-data", "--env", "webshop", "--data-path", str(tmp_path), "--out", str(tmp_path / "lists"),
                 "--splits", "test", "--goals", "human"]) == 0
    assert capsys.readouterr().out.startswith(
        "WebShop: human goals of the full catalogue (train 1500-, valid 500-1499, test 0-499)\n"
        "test        3 human goals")


def test_a_truncated_data_file_is_one_error_line(tmp_path: Path, capsys) -> None:
    from strata.cli import main

    folder = write_catalog(tmp_path / "data", 6, 0)
    products = folder / "items_shuffle_1000.json"
    products.write_text(products.read_text()[:200])
    for argv in (["prepare-data", "--env", "webshop", "--data-path", str(folder), "--out", str(tmp_path / "lists")],
                 ["play", "--env", "webshop", "--data-path", str(folder), "--split", "test", "--policy", "random"]):
        assert main(argv) == 2
        printed = capsys.readouterr()
        text = printed.out + printed.err
        assert f"{products} is not readable WebShop data" in text and "Traceback" not in text, text
    assert not (tmp_path / "lists").exists()


def test_a_catalogue_too_small_for_a_split_writes_no_task_list(tmp_path: Path, capsys) -> None:
    from strata.cli import main

    folder = write_catalog(tmp_path / "data", 40, 0)  # 80 human goals: all in test (0-499)
    out = tmp_path / "lists"
    assert main(["prepare-data", "--env", "webshop", "--data-path", str(folder), "--goals", "human",
                 "--out", str(out)]) == 2
    printed = capsys.readouterr()
    assert "has 80 human goals and none in train (goal indices: train 500-, test 0-499)" in printed.out + printed.err
    assert "strata make-webshop --products N" in printed.out + printed.err
    assert not out.exists() or list(out.iterdir()) == []
