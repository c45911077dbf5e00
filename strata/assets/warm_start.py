"""A brief supervised warm start of a tiny model on the magic-word game, for the learning check.

Why: a randomly initialised model with the real 151k-token Qwen2.5 vocabulary almost never writes a
well-formed ``<strategy>`` or ``<action>`` tag, so every reward is 0 and RL has no signal to follow
(design/TESTING.md, "The learning check"). A few hundred AdamW steps on formatted text fix the format
while leaving the *choice* of word to chance:

- strategy prompt (exactly as the rollout renders it) -> ``<strategy>say {w}</strategy>``
- first action prompt, conditioned on strategy ``say {w}`` -> ``<action>say {w}</action>``

with ``w`` running over every word of every game, so the word is uniform over the K candidates and the
starting success rate is about 1/K, while the action follows the strategy: success is then decided by
the strategy, and RL can only raise it by moving probability onto the right strategy (and action) tokens.

Prompts go through the same builders (`strata.core.prompting`) and the same chat tokenisation
(`strata.workflow.chat.ChatTokens`) as the rollout, so the warm-started model sees at RL time exactly the
token sequences it was trained on. The loss covers response tokens only, and the LM head runs only at
the positions that predict them: over ~400-token prompts the full 151k-way logits would cost gigabytes
for nothing.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strata.core.config import StrataConfig
from strata.core.prompting import PromptTemplates, build_action_messages, build_strategy_messages
from strata.envs.magic_word.game import MagicWordGame, load_game
from strata.envs.tasks import Task
from strata.workflow.chat import ChatTokens

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Example:
    """One supervised pair: the prompt as the rollout tokenises it, and the response ending in EOS."""

    prompt_ids: list[int]
    response_ids: list[int]


def magic_word_examples(tokenizer: Any, games: Sequence[MagicWordGame],
                        templates: PromptTemplates | None = None) -> tuple[list[Example], list[Example]]:
    """(strategy examples, action examples): one of each for every word of every game (see the module
    docstring). ``templates`` default to the ones the rollout uses with a default ``strata`` config.
    """
    templates = templates or StrataConfig().prompts.templates()
    chat = ChatTokens(tokenizer)

    def response(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False) + [tokenizer.eos_token_id]

    strategies, actions = [], []
    for game in games:
        strategy_prompt = chat.prompt(
            build_strategy_messages(templates, game.task_description, game.initial_observation))
        for word in game.words:
            strategy = f"say {word}"
            action_prompt = chat.prompt(build_action_messages(
                templates, game.task_description, strategy, [], game.initial_observation, game.admissible_commands))
            strategies.append(Example(strategy_prompt, response(f"<strategy>{strategy}</strategy>")))
            actions.append(Example(action_prompt, response(f"<action>say {word}</action>")))
    return strategies, actions


@dataclass(frozen=True)
class SampledSoftmax:
    """The softmax over the tokens the data uses plus ``negatives`` others drawn per batch (uniformly, with
    the importance weight ``log(others / negatives)``), instead of over all 151,936 entries.

    Why: at the target positions the LM head and its softmax over the whole vocabulary cost ~3/4 of a warm
    start step of a width-64 model. Dropping the unused tokens altogether would leave their logits
    untrained, and together they can hold most of the mass at sampling time; the sampled ones keep
    pushing them down, so the full-vocabulary distribution the rollout samples from stays the trained one.
    """

    used: Any  # sorted token ids that occur in the examples (prompts and responses), a LongTensor
    negatives: int = 2048

    @classmethod
    def of(cls, examples: Sequence[Example], negatives: int = 2048) -> SampledSoftmax:
        import torch

        used = sorted({t for e in examples for t in (*e.prompt_ids, *e.response_ids)})
        return cls(torch.tensor(used, dtype=torch.long), negatives)

    def loss(self, head_weight: Any, hidden: Any, targets: Any, generator: Any, reduction: str = "mean") -> Any:
        import math

        import torch
        import torch.nn.functional as F

        vocab = head_weight.shape[0]
        unused = torch.ones(vocab, dtype=torch.bool)
        unused[self.used] = False
        others = unused.nonzero().squeeze(1)
        k = min(self.negatives, len(others))
        sampled = others[torch.randperm(len(others), generator=generator)[:k]]
        logits = hidden @ head_weight[torch.cat([self.used, sampled])].T
        if k:
            logits[:, len(self.used):] += math.log(len(others) / k)
        return F.cross_entropy(logits.float(), torch.searchsorted(self.used, targets), reduction=reduction)


def response_loss(model: Any, batch: Sequence[Example], pad_token_id: int, softmax: SampledSoftmax | None = None,
                  generator: Any = None, reduction: str = "mean") -> Any:
    """Cross-entropy of the response tokens of ``batch`` (their mean, or with ``reduction="sum"`` their sum);
    the LM head runs only where it is needed, over the whole vocabulary, or over ``softmax``'s sample of it."""
    import torch
    import torch.nn.functional as F

    sequences = [e.prompt_ids + e.response_ids for e in batch]
    width = max(map(len, sequences))
    input_ids = torch.full((len(batch), width), pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((len(batch), width), dtype=torch.long)
    rows, positions, targets = [], [], []
    for row, (example, sequence) in enumerate(zip(batch, sequences, strict=True)):
        input_ids[row, : len(sequence)] = torch.tensor(sequence)
        attention_mask[row, : len(sequence)] = 1  # right padding: positions stay 0..len-1
        start = len(example.prompt_ids)
        for offset, token in enumerate(example.response_ids):
            rows.append(row)
            positions.append(start + offset - 1)  # the position whose next-token logits predict `token`
            targets.append(token)
    hidden = model.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    hidden = hidden[torch.tensor(rows), torch.tensor(positions)]
    if softmax is not None:
        return softmax.loss(model.lm_head.weight, hidden, torch.tensor(targets), generator, reduction)
    return F.cross_entropy(model.lm_head(hidden).float(), torch.tensor(targets), reduction=reduction)


def backward_in_parts(model: Any, parts: Sequence[Sequence[Example]], pad_token_id: int,
                      softmax: SampledSoftmax | None = None, generator: Any = None) -> float:
    """Accumulate the gradient of the mean response-token cross-entropy over all of ``parts``' examples, one
    forward and backward pass per part (each padded to its own longest example); return that mean."""
    targets = sum(len(e.response_ids) for part in parts for e in part)
    total = 0.0
    for part in (part for part in parts if part):
        loss = response_loss(model, part, pad_token_id, softmax, generator, reduction="sum") / targets
        loss.backward()
        total += loss.item()
    return total


def fit_responses(
    model_dir: str | Path,
    out_dir: str | Path,
    mixture: Sequence[tuple[Sequence[Example], int]],
    steps: int,
    lr: float,
    seed: int = 0,
    negatives: int | None = None,
) -> Path:
    """Train the model in ``model_dir`` on response tokens and save it (with its tokenizer) to ``out_dir``.

    ``mixture`` lists (examples, how many of them each batch draws, with replacement). Each component's draws
    run as a micro-batch of their own, padded to their own longest example, and the gradients add up to the
    batch's mean over all response tokens: the components differ in length (the ALFWorld agent's strategies
    ~160 tokens, actions ~250, judgments ~280), and one batch padded to its longest wasted ~30% of its tokens.
    The learning rate is constant, then decays linearly to 0 over the last quarter, so the final distribution
    is the average the data asks for, not the last batches' noise. ``negatives`` switches to a `SampledSoftmax`
    with that many sampled tokens (None: the full vocabulary). Deterministic for a given ``seed`` on a given
    machine.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    torch.manual_seed(seed)
    sampler = random.Random(seed)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    softmax = None if negatives is None else SampledSoftmax.of([e for examples, _ in mixture for e in examples],
                                                               negatives)
    generator = torch.Generator().manual_seed(seed)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, 4.0 * (1.0 - step / steps)))
    for step in range(1, steps + 1):
        parts = [sampler.choices(examples, k=count) for examples, count in mixture if examples]
        optimizer.zero_grad(set_to_none=True)
        loss = backward_in_parts(model, parts, tokenizer.pad_token_id, softmax, generator)
        optimizer.step()
        schedule.step()
        if step % 50 == 0 or step == steps:
            logger.info("warm start step %d/%d: response loss %.4f", step, steps, loss)
    out = Path(out_dir)
    model.eval().save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def warm_start(
    model_dir: str | Path,
    out_dir: str | Path,
    tasks: Sequence[Task],
    steps: int = 400,
    batch_size: int = 16,
    lr: float = 3e-3,
    seed: int = 0,
    templates: PromptTemplates | None = None,
) -> Path:
    """Train the model in ``model_dir`` on ``tasks``' magic-word games and save it (with its tokenizer).

    ``templates`` must be the ones the rollout will use (default: those of a default ``strata`` config).
    Three quarters of each batch are action examples: following the strategy needs an attention pattern
    that appears only after a plateau (about 300 steps at the defaults, measured), while the strategy's
    word distribution is learnt within a few dozen steps. Returns ``out_dir``.
    """
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    games = list(dict.fromkeys(load_game(task.game_file) for task in tasks))
    strategies, actions = magic_word_examples(tokenizer, games, templates)
    num_actions = max(1, batch_size * 3 // 4)
    return fit_responses(model_dir, out_dir, [(actions, num_actions), (strategies, batch_size - num_actions)],
                         steps, lr, seed)
