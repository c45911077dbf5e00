#!/usr/bin/env bash
# strata-recipe: train
# StraTA on ALFWorld (text) with Qwen2.5-7B-Instruct on one node of 2 GPUs (2x A100 80GB), training a LoRA
# adapter instead of every weight (the 8-GPU full fine-tune is train-strata-alfworld-text-qwen2.5-7b.sh).
#
# The StraTA keys are configs/strata_trainer.yaml's, like every recipe; this one differs from the full 7B
# recipe in infrastructure (`strata config-diff` lists it) and in four optimisation keys, checked by
# tests/recipes/test_recipes.py:
# - LoRA rank 64, alpha 64 on every linear layer of the decoder (q/k/v/o, gate/up/down; not lm_head), as
#   verl-agent trains Qwen2.5-7B on ALFWorld with LoRA (examples/gigpo_trainer/run_alfworld_lora.sh): 161.5M
#   trainable parameters, 2.1% of 7.62B.
# - Learning rate 1e-5, 10x the full fine-tune's 1e-6: a LoRA update moves the weights through a rank-64
#   product initialised at zero, and its best learning rate is about 10x full fine-tuning's ("LoRA Without
#   Regret", Schulman et al. 2025); verl's LoRA reference settings use 3e-5 (Qwen2.5-72B, rank 32), verl-agent
#   3e-6 (without a KL loss).
# - The KL loss keeps its reference: with LoRA, verl computes reference log-probs with the actor's adapter
#   switched off (the base model), so no separate reference model is loaded.
#
# Memory, per GPU (A100 80 GiB):
# - Training (vLLM asleep: KV cache dropped, its weights offloaded): the fp32 base sharded over 2 GPUs is
#   28.4/2 = 14.2 GiB; adapter + grads + Adam in fp32 are 161.5M x 16 B / 2 = 1.2 GiB; no reference model.
#   A 32k-token micro-batch adds its logits (32768 x 152,064 x 4 B = 18.6 GiB fp32, twice with their grad)
#   and bf16 layer checkpoints (28 x 32768 x 3584 x 2 B = 6.1 GiB): ~59 GiB of 80.
#   (Full fine-tuning would need fp32 params, grads and Adam for 7.62B: 122 GiB over 2 GPUs before any
#   activation, hence 8 GPUs with offload in the full recipe.)
# - Rollout: one vLLM replica at TP2 (the 7.1 GiB of bf16 weights per GPU leave room for the KV cache; two
#   TP1 replicas would hold 14.2 GiB each and half the cache). The actor's parameters and optimizer are
#   offloaded to host memory during rollout (14.2 + 0.6 GiB per rank), so vLLM gets
#   0.85 x 80 = 68 GiB: - 7.1 GiB weights - ~3 GiB activations, CUDA graphs and the LoRA slot (rank 64,
#   bf16: 0.15 GiB per GPU) = 57.9 GiB = 2.17M tokens at 28 KiB per token per GPU (Qwen2.5-7B: 2 (K,V) x
#   28 layers x 4 KV heads x 128 x 2 B = 56 KiB per token, halved by TP2).
#   In flight: 16 tasks x N*M = 32 episodes = 512 episodes on the one replica; an episode's context grows ~520
#   tokens a turn from ~1k to the row budget (2048 + 30720), ~16.9k on average, so vLLM runs at most 128 at
#   once (128 x 16.9k = 2.16M tokens fit) and queues the rest.
# - Weight sync: vLLM loads the base weights from the checkpoint itself (load_format=safetensors), so every
#   sync sends only the adapter (161.5M x 4 B = 0.6 GiB), gathered one decoder layer at a time
#   (layered_summon), not the 15 GiB model.
# Checkpoints: the 7B recipe's KEEP_CKPTS=2, each ~30 GiB rather than its ~85: verl's model shard is the whole
# state dict, the frozen base included, in fp32 ((7.62B + 161.5M) x 4 B), and Adam's moments cover only the
# trainable adapter (161.5M x 8 B); `strata doctor` estimates it so.
# Prefill (chunked): 16384 tokens per engine step. Environment: 8 agent-loop workers x 6 = 48 game processes
# for a 64-core node, as the 1.5B recipe.
{  # one block, read whole before it runs: editing this file meanwhile cannot change what a run does
set -euo pipefail
cd "$(dirname "$0")/.."

# The full 7B recipe's command on 2 GPUs, with the adapter, its rate, and adapter-only weight sync.
N_GPUS=${N_GPUS:-2} CKPT=${CKPT:-checkpoints/strata-alfworld-qwen2.5-7b-lora} \
  exec bash recipes/train-strata-alfworld-text-qwen2.5-7b.sh \
  actor_rollout_ref.model.lora_rank=64 \
  actor_rollout_ref.model.lora_alpha=64 \
  actor_rollout_ref.model.target_modules=all-linear \
  actor_rollout_ref.actor.optim.lr=1e-5 \
  actor_rollout_ref.rollout.load_format=safetensors \
  actor_rollout_ref.rollout.layered_summon=true \
  actor_rollout_ref.rollout.agent.num_workers=8 \
  trainer.experiment_name=strata-alfworld-qwen2.5-7b-lora \
  "$@"
exit
}
