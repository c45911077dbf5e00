"""The nouns of a product title, for the reward's type term.

WebShop keeps the tokens spaCy tags NOUN or PROPN. Its English models are not on any package registry this
project installs from (users get them with ``python -m spacy download en_core_web_lg``), so:

- `spacy_nouns` uses the official model when it is installed (`strata doctor` says whether it is);
- `word_nouns` is the fallback without it: every lower-cased word of two or more letters that is not an English
  stop word (spaCy's own list, which needs no model). Measured against a trained ``en_core_web_sm`` (2.2.5, the
  one spaCy English model a package registry serves, run under spaCy 2 in another Python) on generated
  Title-Case titles, it gives the same noun set for 67% of titles and the same type factor ``r_type`` for 99.4%
  of purchases, more than textblob's Pattern tagger (53%, 99.3%), the registry-served tagger `make install` could
  add; the model tags capitalised adjectives PROPN, and the fallback keeps them too
  (benchmarks/RESULTS_webshop_nouns.md).
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping

from strata.envs.webshop.reward import NounTagger

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "en_core_web_lg"  # the model the StraTA issue names and AgentGym's WebShop loads
NOUN_TAGS = ("NOUN", "PROPN")
WORD = re.compile(r"[a-z][a-z']+")


def word_nouns(title: str) -> list[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return [word for word in WORD.findall(title.lower()) if word not in STOP_WORDS]


def model_installed(model: str = DEFAULT_MODEL) -> bool:
    import importlib.util

    return importlib.util.find_spec(model) is not None


@functools.cache
def spacy_nouns(model: str = DEFAULT_MODEL) -> NounTagger:
    """A tagger on spaCy's ``model`` (loaded once per process)."""
    import spacy

    nlp = spacy.load(model)

    def nouns(title: str) -> list[str]:
        return [token.text.lower() for token in nlp(title) if token.pos_ in NOUN_TAGS]

    return nouns


def noun_tagger(model: str | None = DEFAULT_MODEL) -> NounTagger:
    """spaCy's ``model`` when it is installed, else `word_nouns` (with one warning); None asks for the fallback."""
    if model is not None and model_installed(model):
        return spacy_nouns(model)
    if model is not None:
        logger.warning("spaCy model %s is not installed (python -m spacy download %s): the WebShop reward's "
                       "title nouns come from the word fallback", model, model)
    return word_nouns


def host_check(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """What WebShop needs beyond Python packages (`strata.envs.registry`): spaCy's English model for the reward's
    title nouns, a download no package registry serves; without it the documented word fallback scores them."""
    if model_installed(DEFAULT_MODEL):
        return [("ok", f"webshop: the reward's title nouns from spaCy's {DEFAULT_MODEL}")]
    return [("warning", f"webshop: spaCy's {DEFAULT_MODEL} is not installed (python -m spacy download "
                        f"{DEFAULT_MODEL}): the reward's title nouns come from the word fallback "
                        "(the same type reward as a trained spaCy tagger for 99.4% of measured purchases: "
                        "benchmarks/RESULTS_webshop_nouns.md)")]
