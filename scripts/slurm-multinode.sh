#!/usr/bin/env bash
# A multi-node strata run under SLURM: a Ray head on the first node, a Ray worker on each other node, then the
# recipe on the head with NNODES and N_GPUS from the allocation (docs/gpu-training.md, "More than one node").
#
#   sbatch scripts/slurm-multinode.sh                                   # the 7B recipe on 2 nodes x 8 GPUs
#   sbatch --nodes=4 scripts/slurm-multinode.sh recipes/train-strata-alfworld-text-qwen2.5-7b.sh trainer.total_training_steps=300
#
# Every node must see this repository, its .venv, the task lists, the game data, the model and the checkpoint
# folder at the same paths (shared storage; `strata doctor RECIPE.sh trainer.nnodes=2` on a login node checks
# the paths). Resume after a stop by submitting the same command again: the recipe resumes from the newest
# complete global_step_N in its checkpoint folder. NET_IFACE=ib0 (or eth0...) names the network the nodes share:
# Ray binds to it and NCCL and gloo use it (scripts/ray-node.sh); without it the head's first address is used.
#SBATCH --job-name=strata-multinode
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=64
#SBATCH --exclusive
# All of each node's memory: the 7B recipe offloads parameters and optimizer state and keeps the reference model,
# ~120 GB of host RAM a node; a site default of a few GB per CPU ends it in the first update.
#SBATCH --mem=0
#SBATCH --output=strata-multinode-%j.log
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"

RECIPE=${1:-recipes/train-strata-alfworld-text-qwen2.5-7b.sh}
shift $(( $# > 0 ? 1 : 0 ))
PORT=${RAY_PORT:-6379}
mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
HEAD=${NODES[0]}
if [ -n "${NET_IFACE:-}" ]; then   # the head's IPv4 address on that interface, as scripts/ray-node.sh binds it
  HEAD_IP=$(srun --nodes=1 --ntasks=1 -w "$HEAD" ip -4 -o addr show "$NET_IFACE" | awk '{split($4, a, "/"); print a[1]; exit}' || true)
  export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-$NET_IFACE} GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-$NET_IFACE}
else                               # the head's first IPv4 address (hostname -I may list IPv6 and docker0 too)
  HEAD_IP=$(srun --nodes=1 --ntasks=1 -w "$HEAD" hostname -I | tr ' ' '\n' | grep -m1 -E '^[0-9]+(\.[0-9]+){3}$' || true)
fi
[ -n "$HEAD_IP" ] || { echo "error: no IPv4 address for the head $HEAD${NET_IFACE:+ on $NET_IFACE}" >&2; exit 2; }
# One token for this job's cluster, in the environment srun passes to every step (no shared home needed).
export RAY_AUTH_MODE=token RAY_AUTH_TOKEN=${RAY_AUTH_TOKEN:-$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')}
export BLOCK=1 CPUS=${SLURM_CPUS_PER_TASK:-}

srun --nodes=1 --ntasks=1 -w "$HEAD" bash scripts/ray-node.sh head "$PORT" &
sleep 10
for node in "${NODES[@]:1}"; do
  srun --nodes=1 --ntasks=1 -w "$node" bash scripts/ray-node.sh worker "$HEAD_IP:$PORT" &
done
# No `ray stop` at the end: when this script returns, SLURM ends the job and with it the nodes' Ray steps.

# Wait until every node has joined (Ray counts alive nodes), at most 5 minutes.
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}
RAY_ADDRESS="$HEAD_IP:$PORT" timeout 300 "$PY" - "${#NODES[@]}" <<'PY'
import sys, time, ray
ray.init()
while sum(node["Alive"] for node in ray.nodes()) < int(sys.argv[1]):
    time.sleep(5)
print(f"ray cluster: {sys.argv[1]} nodes")
PY

RAY_ADDRESS="$HEAD_IP:$PORT" NNODES=${#NODES[@]} N_GPUS=${SLURM_GPUS_ON_NODE:-8} bash "$RECIPE" "$@"
