"""``strata_manifest.json``: what a complete save wrote, so damage found later is named, not loaded.

A shard can be a valid zip archive and still be damaged (a flipped block, a copy that went wrong, a file
replaced by another): ``zipfile.is_zipfile`` only checks the archive's end record, and ``torch.load`` then
fails deep inside a worker (``RuntimeError: Expected hasRecord("version")``) or, worse, loads wrong
numbers. The trainer therefore records, once verl's save of ``global_step_N`` has returned, every file of
the step with its size and SHA-256 in ``global_step_N/strata_manifest.json``, written last and atomically
(temporary file in the same folder, fsync, ``os.replace``). A step with a manifest is complete only if
every listed file is there with its size (cheap, always checked) and, where a tool is about to load it
(resume, export, reshard, ``strata inspect-checkpoint`` of one step), its checksum.

A step without a manifest (written before strata recorded them, or by verl alone) falls back to the
structural check of `strata.checkpoint.inspect` (every rank's shards present and whole zip archives).

Format (version 1)::

    {"format": 1, "step": N, "algorithm": "sha256",
     "files": {"actor/model_world_size_2_rank_0.pt": {"size": 123, "sha256": "..."}, ...}}

The manifest is the only file of the step it does not list. Verify one by hand with ``sha256sum``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from strata.checkpoint.layout import MANIFEST_FILE, parse_step
from strata.checkpoint.pointer import fsync_directory

logger = logging.getLogger(__name__)

MANIFEST_FORMAT = 1
ALGORITHM = "sha256"
_CHUNK = 1 << 22

# (path, size, mtime_ns, inode) -> hex digest: a resume checks the same step in find_latest_checkpoint and
# check_resumable, and a large checkpoint should be read once per process, not twice.
_digests: dict[tuple[str, int, int, int], str] = {}


class ManifestError(ValueError):
    """The manifest itself is unreadable (bad JSON, wrong structure, unknown format)."""


def file_digest(path: Path) -> str:
    """SHA-256 of ``path`` as hex, cached per (path, size, mtime, inode) within this process."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    if key not in _digests:
        with open(path, "rb") as handle:
            _digests[key] = hashlib.file_digest(handle, ALGORITHM).hexdigest()
    return _digests[key]


def file_digests(paths: list[Path]) -> dict[Path, str]:
    """`file_digest` of each path, several files at once (hashlib releases the GIL): the per-rank shards
    of a large model are hashed in parallel, at the disk's or the page cache's speed."""
    workers = max(1, min(8, os.cpu_count() or 1, len(paths)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(paths, pool.map(file_digest, paths), strict=True))


def step_files(step_dir: Path) -> list[str]:
    """Every file under ``step_dir``, relative and sorted, except the manifest and its temporaries."""
    return sorted(
        str(file.relative_to(step_dir)) for file in step_dir.rglob("*")
        if file.is_file() and not _is_manifest_name(file.relative_to(step_dir))
    )


def write_manifest(step_dir: str | Path, step: int | None = None) -> Path:
    """Record every file of ``step_dir`` (size and SHA-256) in its manifest, atomically; returns its path.

    Call it only once every file of the step is on disk (after verl's ``_save_checkpoint`` returned) and
    before the pointer names the step. ``step`` defaults to the one in the folder's name (pass it for a
    folder assembled under a temporary name).
    """
    step_dir = Path(step_dir)
    step = parse_step(step_dir) if step is None else step
    names = step_files(step_dir)
    digests = file_digests([step_dir / name for name in names])
    files = {name: {"size": (step_dir / name).stat().st_size, ALGORITHM: digests[step_dir / name]} for name in names}
    content = json.dumps({"format": MANIFEST_FORMAT, "step": step, "algorithm": ALGORITHM, "files": files},
                         indent=1, sort_keys=True)
    target = step_dir / MANIFEST_FILE
    temporary = step_dir / f".{MANIFEST_FILE}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, target)
    fsync_directory(step_dir)
    logger.info("checkpoint manifest %s: %d files, %.1f MiB", target, len(files),
                sum(entry["size"] for entry in files.values()) / 2**20)
    return target


def read_manifest(step_dir: str | Path) -> dict[str, dict] | None:
    """The manifest's ``files`` (relative path -> size and checksum); None when the step has none.

    Raises `ManifestError` when the file exists but cannot be used.
    """
    file = Path(step_dir) / MANIFEST_FILE
    if not file.is_file():
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ManifestError(f"{MANIFEST_FILE} is unreadable ({error})") from error
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT or not isinstance(data.get("files"), dict):
        raise ManifestError(f"{MANIFEST_FILE} is not a format-{MANIFEST_FORMAT} strata manifest")
    files = data["files"]
    for name, entry in files.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("size"), int) or \
                not isinstance(entry.get(ALGORITHM), str):
            raise ManifestError(f"{MANIFEST_FILE} has no size and {ALGORITHM} for {name}")
    return files


def manifest_problems(step_dir: str | Path, files: dict[str, dict], checksums: bool) -> list[str]:
    """Each file of ``files`` (a read manifest) that is absent or differs from what the save wrote.

    Sizes are always compared; checksums only with ``checksums`` (it reads every byte). Returns one
    ``"relative/path (what is wrong)"`` per problem.
    """
    step_dir = Path(step_dir)
    problems, to_hash = [], []
    for name, entry in sorted(files.items()):
        path = step_dir / name
        if not path.is_file():
            problems.append(f"{name} (listed in {MANIFEST_FILE}, absent)")
            continue
        size = path.stat().st_size
        if size != entry["size"]:
            problems.append(f"{name} ({size} bytes, the save wrote {entry['size']})")
        elif checksums:
            to_hash.append(name)
    digests = file_digests([step_dir / name for name in to_hash]) if to_hash else {}
    problems += [f"{name} (damaged: {ALGORITHM} differs from {MANIFEST_FILE})"
                 for name in to_hash if digests[step_dir / name] != files[name][ALGORITHM]]
    return sorted(problems)


def _is_manifest_name(relative: Path) -> bool:
    name = str(relative)
    return name == MANIFEST_FILE or (name.startswith(f".{MANIFEST_FILE}.") and name.endswith(".tmp"))
