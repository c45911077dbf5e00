#!/usr/bin/env bash
# Start one node of a Ray cluster for a multi-node strata run (docs/gpu-training.md, "More than one node").
#
#   bash scripts/ray-node.sh head [PORT]          # on the first node; prints the address the others join
#   bash scripts/ray-node.sh worker HEAD:PORT     # on every other node
#   RAY_ADDRESS=HEAD:PORT NNODES=2 bash recipes/train-strata-alfworld-text-qwen2.5-7b.sh   # then, on the head
#   bash scripts/ray-node.sh stop                 # on every node, when the run is over
#
# Every node must see the repository, the task lists, the game data, the model and the checkpoint folder at
# the same paths (shared storage; `strata doctor RECIPE.sh trainer.nnodes=2` checks them). scripts/slurm-multinode.sh
# does all of this under SLURM.
#
# Environment:
#   PLATFORM=gpu (default) or cpu. A GPU node offers its GPUs as Ray detects them. A cpu-platform node offers
#                SLOTS logical GPUs, one per rank it hosts (the cpu platform's placement asks each rank's
#                bundle for one: strata/backends/cpu_platform.py), and CPUS logical CPUs.
#   SLOTS        ranks on this node for PLATFORM=cpu (trainer.n_gpus_per_node; default 1).
#   CPUS         logical CPUs Ray offers (default: as Ray detects; 16 for PLATFORM=cpu, as configs/platform/cpu.yaml).
#   RAY_TMPDIR   Ray's temporary folder on this node (default: Ray's, /tmp/ray). Keep it short: Ray's socket
#                paths must fit 107 characters.
#   NET_IFACE    the network interface the nodes reach each other on (e.g. ib0, eth0): Ray binds to its IPv4
#                address, and NCCL and gloo are told to use it (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME). Without it,
#                Ray picks an address itself, which on a node with docker0, IPoIB or IPv6 may be the wrong one.
#   NODE_IP      the address Ray binds to on this node, when NET_IFACE cannot say it.
#   BLOCK=1      stay in the foreground until the node stops (`ray start --block`): what a SLURM step needs,
#                since SLURM ends a step's processes when its command returns.
#   RAY_AUTH_MODE, RAY_AUTH_TOKEN
#                Ray 2.60 turns token authentication on for a cluster started with `ray start --head`; every
#                process joining it (worker nodes, the trainer) must run with RAY_AUTH_MODE=token and the same
#                token: RAY_AUTH_TOKEN when set (scripts/slurm-multinode.sh makes one per job), else the file
#                ~/.ray/auth_token that the head writes (the same on every node only with a shared home).
#                This script exports RAY_AUTH_MODE=token; export it, and the token, where the recipe runs too.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python )}
RAY=${RAY:-$(dirname "$PY")/ray}
command -v "$RAY" >/dev/null || RAY=ray
PLATFORM=${PLATFORM:-gpu}
export RAY_AUTH_MODE=${RAY_AUTH_MODE:-token} RAY_DISABLE_USAGE_STATS=1

resources=()
case "$PLATFORM" in
  cpu) resources=(--num-gpus "${SLOTS:-1}" --num-cpus "${CPUS:-16}") ;;
  gpu) [ -n "${CPUS:-}" ] && resources=(--num-cpus "$CPUS") ;;
  *) echo "error: PLATFORM=$PLATFORM: use gpu or cpu" >&2; exit 2 ;;
esac
if [ -n "${NET_IFACE:-}" ]; then
  NODE_IP=${NODE_IP:-$(ip -4 -o addr show "$NET_IFACE" 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}' || true)}
  [ -n "$NODE_IP" ] || { echo "error: NET_IFACE=$NET_IFACE has no IPv4 address on $(hostname)" >&2; exit 2; }
  export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-$NET_IFACE} GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-$NET_IFACE}
fi
options=()
[ -n "${NODE_IP:-}" ] && options+=(--node-ip-address "$NODE_IP")
[ -n "${RAY_TMPDIR:-}" ] && options+=(--temp-dir "$RAY_TMPDIR")
[ "${BLOCK:-0}" = 1 ] && options+=(--block)

case "${1:-}" in
  head)
    port=${2:-6379}
    echo "other nodes join with: bash scripts/ray-node.sh worker ${NODE_IP:-$(hostname -I 2>/dev/null | awk '{print $1}')}:$port"
    # The GCS keeps this many tasks' events (Ray's default 100,000 grows it by ~330 MB; configs/strata_trainer.yaml
    # sets the same for a local cluster).
    export RAY_task_events_max_num_task_in_gcs=${RAY_task_events_max_num_task_in_gcs:-10000}
    "$RAY" start --head --port "$port" --include-dashboard false "${resources[@]}" "${options[@]}"
    ;;
  worker)
    [ -n "${2:-}" ] || { echo "error: worker needs the head's address: bash scripts/ray-node.sh worker HEAD:PORT" >&2; exit 2; }
    "$RAY" start --address "$2" "${resources[@]}" "${options[@]}"
    ;;
  stop)
    "$RAY" stop
    ;;
  *)
    echo "usage: bash scripts/ray-node.sh head [PORT] | worker HEAD:PORT | stop" >&2
    exit 2
    ;;
esac
