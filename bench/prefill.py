"""Prefill: torch's int4 kernel vs a bf16 GEMM by the number of rows, and a whole prompt through the model.

Part 1: each of the embedded model's four linear shapes, random weights, the int4 kernel
(``_weight_int4pack_mm_for_cpu``) against ``F.linear`` with the bf16 weight, for 1 to 128 rows (decode
multiplies 1 row per sequence, a prompt's prefill one row per token). Part 2: the embedded model's forward over
a 35, 300 and 700-token prompt: bf16 floats (``quantize="none"``), int4 for every row count, and hierplan's
choice (int4 below ``int4.FLOAT_ROWS`` rows, the bf16 weight from there).

    python bench/prefill.py [--no-write]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import machine_line, write_section  # noqa: E402

SHAPES = [(576, 576), (192, 576), (1536, 576), (576, 1536)]  # (out, in): q/o, k/v, gate/up, down
ROWS = [1, 2, 4, 8, 16, 32, 64, 128]
PROMPTS = [35, 300, 700]


def per_call_us(fn, repeats: int) -> float:
    for _ in range(5):
        fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    import hierplan  # noqa: F401  (first: its OpenMP settings apply only if set before torch starts)
    from hierplan.models import torch_thread

    # All torch work on hierplan's torch thread, where the model loaded: kernels on a second thread would slow
    # every thread (docs/benchmarks.md, "Generation thread").
    torch_thread.run(measure, args)


def measure(args: argparse.Namespace) -> None:
    import torch

    from hierplan.models import int4, load_chat_model

    torch.manual_seed(0)
    shape_rows = []
    with torch.inference_mode():
        for n, k in SHAPES:
            parts, _ = int4.quantize(torch.randn(n, k) * 0.02)
            kernel = int4.kernel_form(parts["q"], parts["scale"], parts["zero"])
            weight = torch.randn(n, k).bfloat16()
            cells = []
            for rows in ROWS:
                x = torch.randn(rows, k).bfloat16()
                a = per_call_us(lambda: torch._weight_int4pack_mm_for_cpu(x, kernel["packed"], 32, kernel["scales_zeros"]), 200)
                b = per_call_us(lambda: torch.nn.functional.linear(x, weight), 200)
                cells.append(f"{a:.0f} / {b:.0f}")
            shape_rows.append(f"| {n} x {k} | " + " | ".join(cells) + " |")
            print(shape_rows[-1], flush=True)

    floats = load_chat_model(quantize="none").llm.pipeline.model
    hybrid = load_chat_model().llm.pipeline.model
    prompt_rows = []
    saved = int4.FLOAT_ROWS
    with torch.inference_mode():
        for length in PROMPTS:
            ids = torch.randint(100, 40000, (1, length))
            times = {}
            for label, model, float_rows in (("bf16 floats", floats, int4.FLOAT_ROWS),
                                              ("int4 for every row count", hybrid, 10**9),
                                              ("hierplan (int4 below FLOAT_ROWS)", hybrid, int4.FLOAT_ROWS)):
                int4.FLOAT_ROWS = float_rows
                times[label] = per_call_us(lambda: model(ids), 3) / 1000
            int4.FLOAT_ROWS = saved
            prompt_rows.append(f"| {length} | " + " | ".join(f"{v:.0f}" for v in times.values()) + " |")
            print(prompt_rows[-1], flush=True)
    if args.no_write:
        return
    write_section("Prefill", f"""Command: `python bench/prefill.py`
Machine: {machine_line()}

int4 kernel / bf16 GEMM, microseconds per call, by rows multiplied (random weights of each linear shape of the
embedded model, out x in):

| shape | """ + " | ".join(f"{r} rows" for r in ROWS) + """ |
| --- |""" + " ---: |" * len(ROWS) + "\n" + "\n".join(shape_rows) + f"""

The whole model's forward over a prompt (embedded SmolLM2-135M, no KV cache yet), milliseconds:

| prompt tokens | bf16 floats | int4 for every row count | hierplan (int4 below {int4.FLOAT_ROWS} rows) |
| ---: | ---: | ---: | ---: |
""" + "\n".join(prompt_rows) + "\n")


if __name__ == "__main__":
    main()
