"""Resolve a training configuration to flat ``dotted.key -> value`` pairs, from a file or from Hydra.

Three kinds of source name the same thing:

* a recipe script plus its extra arguments, resolved as ``DRY_RUN=1`` resolves it
  (`strata.report.recipe_config`);
* a resolved config saved as YAML or JSON (a run's ``.hydra/config.yaml``, or any ``OmegaConf.save``);
* a Hydra config name plus command-line overrides, exactly what a recipe passes to
  ``python -m strata.trainer.main``; it is composed by the trainer's own loader (Hydra's compose API on
  the project's ``configs/``, whose configs add ``pkg://verl.trainer.config`` to the search path).

Whatever does not resolve to a non-empty mapping is a ValueError whose message is one line.

Interpolations are resolved (``ray_kwargs.ray_init.num_gpus: ${trainer.n_gpus_per_node}`` compares as
the number it becomes); mandatory values left unset (``???``) compare as that literal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strata.recipes import WHAT_A_RECIPE_IS
from strata.report.recipe_config import is_recipe, resolve_recipe

_FILE_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class ConfigSource:
    """Where a configuration comes from.

    Args:
        spec: a recipe script (``.sh``), a ``.yaml``/``.yml``/``.json`` file of a resolved config, or a Hydra
            config name.
        overrides: Hydra overrides (``key=value``, ``+new_key=value``) for a config name, or a recipe's extra
            arguments; not for a resolved file.
        config_dir: the Hydra config folder; defaults to the project's ``configs/``.
    """

    spec: str
    overrides: tuple[str, ...] = field(default_factory=tuple)
    config_dir: str | None = None

    @property
    def is_recipe(self) -> bool:
        return is_recipe(self.spec)

    @property
    def is_file(self) -> bool:
        return self.spec.endswith(_FILE_SUFFIXES) or Path(self.spec).is_file()

    @property
    def label(self) -> str:
        extra = f" + {len(self.overrides)} override(s)" if self.overrides else ""
        return f"{self.spec}{extra}"


def resolve_config(source: ConfigSource) -> dict[str, Any]:
    """The fully resolved configuration of ``source`` as a flat mapping, keys in config order."""
    if source.is_recipe:
        return flatten(resolve_recipe(source.spec, source.overrides))
    if source.is_file:
        if source.overrides:
            raise ValueError(f"overrides apply to a Hydra config name or a recipe, not to the resolved file "
                             f"{source.spec}")
        try:
            return _flatten_saved(Path(source.spec))
        except ValueError as error:
            if source.spec.endswith(_FILE_SUFFIXES):
                raise
            # A file named neither as a config nor as a script, e.g. a Makefile: read, never run.
            raise ValueError(f"{error}; {WHAT_A_RECIPE_IS}") from None
    return flatten(compose_config(source.spec, source.overrides, source.config_dir))


def _flatten_saved(path: Path) -> dict[str, Any]:
    from omegaconf.errors import OmegaConfBaseException

    try:
        return flatten(load_config_file(path))
    except OmegaConfBaseException as error:  # e.g. an interpolation to a key the file lacks
        raise ValueError(f"{path}: {' '.join(str(error).split())}") from None


def load_config_file(path: Path) -> Mapping[str, Any]:
    """A resolved config saved as YAML or JSON; anything but a non-empty mapping is a one-line ValueError."""
    import yaml
    from omegaconf import OmegaConf

    if not path.is_file():
        raise FileNotFoundError(f"no config file at {path}")
    kind = "JSON" if path.suffix == ".json" else "YAML"
    try:
        text = path.read_text()
        data = json.loads(text) if kind == "JSON" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as error:  # ValueError: bad JSON or UTF-8
        raise ValueError(f"{path} is not a {kind} config: {' '.join(str(error).split())}") from None
    if not isinstance(data, Mapping) or not data:
        found = "nothing" if data is None else "an empty mapping" if data == {} else f"a {type(data).__name__}"
        raise ValueError(f"{path} is not a config: it holds {found}, not a mapping of config keys")
    # OmegaConf's own YAML loader reads `1e-6` as a float, as Hydra does (PyYAML reads a string).
    return data if kind == "JSON" else OmegaConf.load(path)


def compose_config(config_name: str, overrides: Sequence[str] = (), config_dir: str | Path | None = None):
    """Compose ``config_name`` with ``overrides`` through the trainer's own loader (a DictConfig).

    Going through :func:`strata.trainer.config.load_config` means a recipe diffs exactly as it runs,
    with the same did-you-mean errors for mistyped keys.
    """
    from strata.trainer.config import CONFIG_DIR, load_config

    return load_config(config_name, overrides, config_dir or CONFIG_DIR)


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings to ``a.b.c`` keys; lists and empty mappings stay whole values."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(config, DictConfig):
        config = OmegaConf.to_container(config, resolve=True, throw_on_missing=False)
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, DictConfig | ListConfig):
            value = OmegaConf.to_container(value, resolve=True, throw_on_missing=False)
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, name))
        else:
            flat[name] = value
    return flat
