"""Compose the project's Hydra configs (which extend verl's ``ppo_trainer``) with clear errors.

The recipes, the tests and the config-diff tool all resolve configs through `load_config`, so a
recipe that composes here is exactly what the trainer will run.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def package_file(relative: str) -> str:
    """``${strata_file:PATH}`` in a config: the absolute path of a file shipped in the strata package.

    verl reads some files by path in Ray workers, which may run in another folder than the driver; the
    trainer resolves the config before handing it to verl, so workers never see the interpolation.
    """
    return str(PACKAGE_DIR / relative)


OmegaConf.register_new_resolver("strata_file", package_file, replace=True)


class ConfigError(ValueError):
    """A configuration that cannot run; the message says what to change."""


def _leaf_keys(config: DictConfig) -> list[str]:
    flat = OmegaConf.to_container(config, resolve=False)
    keys: list[str] = []

    def walk(node: object, prefix: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        else:
            keys.append(prefix)

    walk(flat, "")
    return keys


def _unknown_key_message(key: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.75)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return (
        f"Unknown config key {key!r}.{hint} "
        f"Keys outside verl's schema must be added with a leading '+' (+{key}=...)."
    )


def _parse_error_message(err) -> str:
    """Hydra's override parse error (several lines, a caret under the column) as one line."""
    lines = [line.strip() for line in err.message.splitlines()]
    reason = next((line for line in lines if line and not line.startswith(("See ", "^"))), "not valid")
    return (f"cannot parse the override {err.override!r}: {reason}; quote values with brackets, braces or "
            f"spaces as Hydra's override grammar says (https://hydra.cc/docs/advanced/override_grammar/basic)")


def load_config(
    config_name: str, overrides: Sequence[str] = (), config_dir: str | Path = CONFIG_DIR
) -> DictConfig:
    """Compose ``config_name`` from ``config_dir`` (plus verl's configs) with command-line ``overrides``.

    Raises `ConfigError` with a did-you-mean hint for a mistyped key, and names the config folder when
    the config itself does not exist.
    """
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException

    config_dir = Path(config_dir).resolve()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        try:
            return compose(config_name=config_name, overrides=list(overrides))
        except OverrideParseException as err:
            raise ConfigError(_parse_error_message(err)) from err
        except MissingConfigException as err:
            names = sorted(p.stem for p in config_dir.glob("*.yaml"))
            raise ConfigError(f"No config {config_name!r} in {config_dir}; available: {names}") from err
        except ConfigCompositionException as err:
            cause = err.__cause__
            bad_key = getattr(cause, "full_key", None)
            if bad_key and "not in struct" in str(cause):
                base = compose(config_name=config_name)
                raise ConfigError(_unknown_key_message(bad_key, _leaf_keys(base))) from err
            raise ConfigError(str(err)) from err
