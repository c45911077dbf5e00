"""Generation speed of the `hf` rollout server on the tiny model: prefill and per-token decode.

    .venv/bin/python benchmarks/bench_hf_server.py

On a CPU, verl's whole StraTA loop waits on this server, and with the real 151k-token Qwen2.5
vocabulary its cost is the LM head and the sampling over that vocabulary, not the tiny transformer.
Reports milliseconds per prefill for several prompt lengths (one new token) and per decoded token with
the training (temperature 1) and the evaluation (0.7 / top-p 0.8 / top-k 20) settings. Not a test:
results depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from strata.assets import build_tiny_model
from strata.backends.hf_server import HFGenerationServer

SETTINGS = {
    "training (T=1)": {"temperature": 1.0},
    "evaluation (T=0.7, top-p 0.8, top-k 20)": {"temperature": 0.7, "top_p": 0.8, "top_k": 20},
}


def ms_per_call(server: HFGenerationServer, prompt: list[int], params: dict, repeats: int) -> tuple[float, int]:
    server.generate(prompt_ids=prompt, sampling_params={**params, "seed": repeats})  # warm up
    began, tokens = time.perf_counter(), 0
    for seed in range(repeats):
        tokens += len(server.generate(prompt_ids=prompt, sampling_params={**params, "seed": seed}).token_ids)
    return 1000 * (time.perf_counter() - began) / repeats, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--decode-tokens", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        server = HFGenerationServer(str(build_tiny_model(scratch)), response_length=args.decode_tokens)
        # Ordinary token ids: any sequence of non-special tokens costs the same.
        for length in (60, 500, 1000):
            ms, _ = ms_per_call(server, list(range(1000, 1000 + length)), {"max_tokens": 1}, args.repeats)
            print(f"prefill {length:5d} prompt tokens: {ms:7.1f} ms")
        prompt = list(range(1000, 1060))
        for name, params in SETTINGS.items():
            params = {**params, "max_tokens": args.decode_tokens}
            ms, tokens = ms_per_call(server, prompt, params, args.repeats)
            print(f"decode, {name}: {ms * args.repeats / tokens:5.1f} ms/token ({tokens} tokens)")


if __name__ == "__main__":
    main()
