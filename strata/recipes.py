"""What counts as a strata recipe, decided by reading the file, never by running it.

`strata doctor RECIPE` and `strata config-diff RECIPE ...` run the recipe with bash (``DRY_RUN=1``) to see
the config it trains with, so whatever they are given runs as a shell script: a Makefile's ``clean`` or the
demo's set-up steps would delete or build files. A training or evaluation recipe therefore declares itself
in its opening comment lines (the shebang and the comments before the first command)::

    #!/usr/bin/env bash
    # strata-recipe: train          (or: # strata-recipe: evaluate)

Every ``recipes/train-*.sh`` and ``recipes/evaluate-*.sh`` carries the line. ``recipes/demo-cpu.sh`` (it
deletes and builds its output folders), ``recipes/smoke-*.sh`` (no dry run: it would train) and
``recipes/lib/*`` (it needs its wrapper's variables) do not. Every strata tool that runs a recipe named by the
user calls :func:`check_recipe` first. Standard library only, so the doctor stays fast.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from pathlib import Path

RECIPE_KINDS = ("train", "evaluate")
_MARKER = re.compile(rf"#\s*strata-recipe:\s*({'|'.join(RECIPE_KINDS)})")
_HEADER_BYTES = 64 * 1024  # the opening comments are far shorter; a large binary file is not read whole

WHAT_A_RECIPE_IS = ("strata runs only recipes: training and evaluation scripts such as recipes/train-*.sh and "
                    "recipes/evaluate-*.sh, each declared by a `# strata-recipe: train` or "
                    "`# strata-recipe: evaluate` line at its top")


class RecipeError(ValueError):
    """A file that is not a recipe, or a recipe whose dry run gave no config.

    The message is one line (the CLIs print it as ``error: ...`` and exit 2); ``output`` holds all a dry run
    printed.
    """

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


def declared_kind(text: str) -> str | None:
    """The kind a script's opening comment lines declare (``train``/``evaluate``), or None.

    Only the header counts: the lines from the top that are blank or comments (the shebang included), up to
    the first command, so a marker quoted further down (in a heredoc, an ``echo``) declares nothing.
    """
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return None
        match = _MARKER.fullmatch(line)
        if match:
            return match.group(1)
    return None


def check_recipe(path: str | Path) -> str:
    """Refuse anything but a strata recipe, before anything runs it; return its kind.

    ``path`` must be a regular file (not a folder, FIFO or device; a link to one is followed) whose opening
    comment lines hold ``# strata-recipe: train`` or ``# strata-recipe: evaluate``. The file is read as text,
    never executed.

    Raises:
        RecipeError: a one-line message naming ``path``, why it is refused and what a recipe is.
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):  # checked before opening: reading a FIFO would wait forever
            why = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        else:
            with path.open("rb") as file:
                kind = declared_kind(file.read(_HEADER_BYTES).decode("utf-8", errors="replace"))
            if kind is not None:
                return kind
            why = "no `# strata-recipe:` line in its opening comments"
    except FileNotFoundError:
        raise RecipeError(f"no recipe script at {path}{_did_you_mean(path)}; {WHAT_A_RECIPE_IS}") from None
    except OSError as error:
        why = f"cannot read it: {error.strerror}"
    raise RecipeError(f"{path} is not a strata recipe ({why}); {WHAT_A_RECIPE_IS}")


def _did_you_mean(path: Path) -> str:
    """`` (did you mean X?)`` for the recipe a mistyped path most likely means: the name with ``.sh``, or the closest
    name in the same folder; empty when there is none."""
    with_suffix = path.with_name(path.name + ".sh")
    if path.suffix != ".sh" and with_suffix.is_file():
        return f" (did you mean {with_suffix}?)"
    try:
        names = [p.name for p in path.parent.glob("*.sh")]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=1)
    return f" (did you mean {path.parent / close[0]}?)" if close else ""
