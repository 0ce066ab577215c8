"""Decode speed: hierplan's model path vs plain fp32 ``model.generate`` on the same prompt and token count.

hierplan: ``load_chat_model()`` then ``chat.invoke(...)`` with the agent's sampling
settings (hierplan/config.py: temperature 0.2, top_p 0.9, repetition_penalty 1.05), the number of new
tokens forced with ``min_new_tokens = max_new_tokens``. Baseline: the tutorial's way, the same GGUF
loaded with ``AutoModelForCausalLM.from_pretrained(..., gguf_file=..., dtype=float32)`` and
``model.generate`` called directly with the same settings and prompt (chat template applied).
Runs alternate between the paths in a rotating order (so load from other processes, and the cache
eviction by the fp32 model's 540 MB of weights, hit each path alike); medians are reported.

Also checks that greedy outputs of hierplan's weights (bf16, with int4 linears for a 4-bit GGUF) agree with
fp32 on a few prompts.

    python bench/decode.py [--tokens 64] [--repeats 3] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import machine_line, write_section  # noqa: E402

PROMPT = "Plan the steps to compute the average of a list of numbers in Python, then explain each step."
AGREEMENT_PROMPTS = [
    "What is 2+3?",
    "List three primary colors.",
    "Explain what a hash table is in one sentence.",
    "Write a Python function that reverses a string.",
    "Name the capital of France.",
    "Write a haiku about the sea.",
]
AGENT = {"do_sample": True, "temperature": 0.2, "top_p": 0.9, "repetition_penalty": 1.05}


def _generate(model, inputs, settings):
    import torch

    with torch.inference_mode():
        return model.generate(**inputs, **settings, pad_token_id=2)


def _greedy(model, ids, tokens):
    return _generate(model, ids, {"do_sample": False, "max_new_tokens": tokens})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--agree-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    n = args.tokens

    import hierplan  # noqa: F401  (first: its OpenMP settings apply only if set before torch starts)
    import torch
    from langchain_core.messages import HumanMessage

    from hierplan.models import load_chat_model

    if args.threads:
        torch.set_num_threads(args.threads)
    from hierplan.models import torch_thread
    from hierplan.models.loader import _from_pretrained
    from hierplan.models.resolve import resolve_model

    chat = load_chat_model()  # converts into the user's cache on first use
    info = chat.metadata["hierplan_model"]
    weights = info["dtype"] + (f" + {info['quantized']} linears" if info.get("quantized", "none") != "none" else "")
    pipe_model = chat.llm.pipeline.model
    tokenizer = chat.tokenizer

    gguf = Path(resolve_model().path)
    t0 = time.perf_counter()
    # All torch work of this process on hierplan's torch thread, the plain path's too: kernels on a second
    # thread would slow both paths (docs/benchmarks.md, "Generation thread").
    base = torch_thread.run(_from_pretrained, str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32).eval()
    base_load = time.perf_counter() - t0

    messages = [{"role": "user", "content": PROMPT}]
    inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)

    def run_hierplan() -> float:
        kwargs = {"temperature": AGENT["temperature"], "top_p": AGENT["top_p"], "seed": 0,
                  "repetition_penalty": AGENT["repetition_penalty"], "max_tokens": n, "min_tokens": n}
        start, cpu = time.perf_counter(), time.process_time()
        chat.invoke([HumanMessage(PROMPT)], **kwargs)
        cpu_rates["hierplan"].append(n / (time.process_time() - cpu))
        return n / (time.perf_counter() - start)

    def run_plain(model=None) -> float:
        model = base if model is None else model
        torch.manual_seed(0)
        start, cpu = time.perf_counter(), time.process_time()
        out = torch_thread.run(_generate, model, inputs, {**AGENT, "max_new_tokens": n, "min_new_tokens": n})
        assert out.shape[1] - inputs["input_ids"].shape[1] == n
        cpu_rates["plain" if model is base else "plain_chosen"].append(n / (time.process_time() - cpu))
        return n / (time.perf_counter() - start)

    cpu_rates: dict[str, list[float]] = {"hierplan": [], "plain": [], "plain_chosen": []}
    run_hierplan(), run_plain(), run_plain(pipe_model)  # warm-up (first-call kernel setup)
    cpu_rates = {k: [] for k in cpu_rates}
    rates: dict[str, list[float]] = {"hierplan": [], "plain": [], "plain_chosen": []}
    paths = {"plain": run_plain, "hierplan": run_hierplan, "plain_chosen": lambda: run_plain(pipe_model)}
    order = list(paths)
    for i in range(args.repeats):
        # Rotate the order: a run right after the fp32 model (540 MB of weights through the caches) is slower,
        # and a fixed order would charge that to whichever path always comes second.
        for name in order[i % 3:] + order[: i % 3]:
            rates[name].append(paths[name]())
        print(f"repeat {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} tok/s" for k, v in rates.items()), flush=True)
    med = {k: statistics.median(v) for k, v in rates.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpu_rates.items()}
    ratio = med["hierplan"] / med["plain"]
    cpu_ratio = cpu_med["hierplan"] / cpu_med["plain"]

    # Greedy agreement: the chosen dtype (the hierplan model) vs fp32 (baseline), same prompts.
    agree_rows = []
    for prompt in AGREEMENT_PROMPTS:
        ids = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        outs = []
        for model in (base, pipe_model):
            out = torch_thread.run(_greedy, model, ids, args.agree_tokens)
            outs.append(out[0, ids["input_ids"].shape[1] :].tolist())
        a, b = outs
        same = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
        agree_rows.append((prompt, same, len(a), a == b))
        print(f"agree {prompt!r}: identical={a == b} common prefix {same}/{len(a)}", flush=True)

    target = "met" if ratio >= 1.4 else "NOT met"
    print(f"plain fp32 {med['plain']:.1f} tok/s, hierplan {weights} {med['hierplan']:.1f} tok/s, ratio {ratio:.2f}x ({target}); per CPU-second {cpu_ratio:.2f}x")
    if args.no_write:
        return
    identical = sum(r[3] for r in agree_rows)
    rows = "\n".join(f"| {p} | {'yes' if same else 'no'} | {k} / {total} |" for p, k, total, same in agree_rows)
    body = f"""Same prompt, {n} new tokens forced (`min_new_tokens = max_new_tokens = {n}`), the agent's sampling
settings ({", ".join(f"{k}={v}" for k, v in AGENT.items())}); median of {args.repeats} alternating runs after one
warm-up each, the order rotating each round. Baseline: the tutorial's plain path, GGUF loaded in float32 (loaded in {base_load:.1f} s) and
`model.generate`. hierplan: `load_chat_model()` (source: {info['source']}, {weights}) and
`chat.invoke(...)` through LocalChatModel (hierplan/models/local_chat.py).

Command: `python bench/decode.py --tokens {n} --repeats {args.repeats}{f" --threads {args.threads}" if args.threads else ""}` (torch threads: {torch.get_num_threads()})
Machine: {machine_line()}

| path | dtype | tok/s (median) | runs | vs plain | tok per CPU-second | vs plain |
| --- | --- | ---: | --- | ---: | ---: | ---: |
| plain `model.generate` | float32 | {med['plain']:.1f} | {", ".join(f"{r:.1f}" for r in rates['plain'])} | 1.00x | {cpu_med['plain']:.1f} | 1.00x |
| plain `model.generate`, hierplan's weights | {weights} | {med['plain_chosen']:.1f} | {", ".join(f"{r:.1f}" for r in rates['plain_chosen'])} | {med['plain_chosen'] / med['plain']:.2f}x | {cpu_med['plain_chosen']:.1f} | {cpu_med['plain_chosen'] / cpu_med['plain']:.2f}x |
| hierplan `load_chat_model` (LocalChatModel) | {weights} | {med['hierplan']:.1f} | {", ".join(f"{r:.1f}" for r in rates['hierplan'])} | **{ratio:.2f}x** | {cpu_med['hierplan']:.1f} | {cpu_ratio:.2f}x |

Target >= 1.4x: **{target}**.

Greedy agreement, hierplan's weights ({weights}) vs float32, up to {args.agree_tokens} new tokens: {identical}/{len(agree_rows)} identical.

| prompt | identical | common prefix (tokens) |
| --- | --- | --- |
{rows}
"""
    write_section("Decode", body)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
