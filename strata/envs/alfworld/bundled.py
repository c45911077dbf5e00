"""The bundled game set: small, generated, verified games for tests and the CPU demo.

Built by ``scripts/make_bundled_games.py`` with the generator and `BUNDLE_RECIPE` (fixed seed), and
committed as one ``.tar.xz`` (every game file repeats the same 30 KB domain and grammar, which xz
stores once: ~2.5 MB of games become ~0.1 MB). `bundled_data_path` unpacks it once into a cache folder
with the standard ALFWorld layout (``json_2.1.1/<split>/...``), so it loads through the same functions
as the real data (`load_split`, `strata prepare-data`, `strata play`).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from strata.envs.alfworld.discovery import DATA_VERSION_DIR

ARCHIVE = Path(__file__).parent / "bundled_games" / "bundled_games.tar.xz"


@dataclass(frozen=True)
class BundleRecipe:
    """How the bundled set is generated: seed, grammar version and games per split."""

    seed: int
    grammar_version: str
    counts: tuple[tuple[str, int], ...]


# train: 4 games per subtask; valid_seen: 2 per subtask (ALFRED's training floor plans, as in ALFWorld);
# valid_unseen: 1 per subtask on held-out floor plans.
BUNDLE_RECIPE = BundleRecipe(
    seed=20260101, grammar_version="2.1.2", counts=(("train", 24), ("valid_seen", 12), ("valid_unseen", 6))
)


def build_bundle(data_path: str | Path, recipe: BundleRecipe = BUNDLE_RECIPE, workers: int = 1) -> None:
    """Generate the bundled games into ``data_path`` (must not hold them already), in ``workers`` processes
    (the same files with any number: `generate_split`)."""
    from strata.envs.alfworld.engine import AlfworldEngine
    from strata.envs.alfworld.gen.generate import generate_split

    engine = AlfworldEngine() if workers <= 1 else None
    for split, count in recipe.counts:
        generate_split(data_path, split, count, seed=recipe.seed, grammar_version=recipe.grammar_version, engine=engine,
                       workers=workers)


def pack_bundle(data_path: str | Path, archive: str | Path = ARCHIVE) -> Path:
    """Write ``data_path/json_2.1.1`` into a reproducible ``.tar.xz`` (sorted, no times or owners)."""
    root = Path(data_path)
    files = sorted(p for p in (root / DATA_VERSION_DIR).rglob("*") if p.is_file())
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=9) as tar:
        for path in files:
            info = tarfile.TarInfo(path.relative_to(root).as_posix())
            data = path.read_bytes()
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    out = Path(archive)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buffer.getvalue())
    return out


def bundled_data_path(cache_dir: str | Path | None = None, archive: str | Path = ARCHIVE) -> Path:
    """A folder holding the unpacked bundled games (``json_2.1.1/...``); unpacks once per archive version.

    ``cache_dir`` defaults to ``$STRATA_CACHE`` or ``~/.cache/strata``.
    """
    source = Path(archive)
    if not source.is_file():
        raise FileNotFoundError(f"bundled games archive {source} is missing; run scripts/make_bundled_games.py")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    base = Path(cache_dir or os.environ.get("STRATA_CACHE") or Path.home() / ".cache" / "strata")
    target = base / f"bundled_games-{digest}"
    if (target / DATA_VERSION_DIR).is_dir():
        return target
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".bundled_games-", dir=base))
    with tarfile.open(source, mode="r:xz") as tar:
        tar.extractall(staging, filter="data")
    try:
        staging.rename(target)
    except OSError:  # another process unpacked it first
        shutil.rmtree(staging)
        if not (target / DATA_VERSION_DIR).is_dir():
            raise
    return target
