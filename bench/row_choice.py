"""Choosing a row's token: the per-row cost of ``rows.choose_token`` and what it adds to a batched decode step.

Two figures on the embedded model, agent sampling (temperature 0.2, top_p 0.9, repetition_penalty 1.05):
1. ``choose_token`` alone on the model's real next-token logits for a planning prompt (its repetition penalty
   reads the prompt's ~220 tokens), in microseconds per row and token (median of ``--calls``);
2. decode throughput with 1 and 4 rows of that prompt in one ``chat.batch`` (``min_tokens = max_tokens``, so
   every row generates ``--tokens``), tokens per second and the 4-row/1-row ratio, ``--rounds`` alternations.

Run it in two checkouts with the same interpreter (``PYTHONPATH=<checkout> python bench/row_choice.py``) to
compare choosers side by side.

    python bench/row_choice.py [--tokens 96] [--rounds 3] [--calls 500] [--no-write]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import machine_line, write_section  # noqa: E402

PROMPT = ("Plan the steps to compute the average of a list of numbers in Python, then explain each step. "
          "Say what each step needs from the steps before it. ") * 6
AGENT = {"temperature": 0.2, "top_p": 0.9, "repetition_penalty": 1.05}


def choice_us(chat, calls: int) -> float:
    import torch

    from hierplan.models import torch_thread
    from hierplan.models.rows import Row, choose_token

    ids = chat.tokenizer.apply_chat_template([{"role": "user", "content": PROMPT}], add_generation_prompt=True,
                                             tokenize=True, return_dict=True)["input_ids"]
    model = chat.llm.pipeline.model

    def logits():
        with torch.inference_mode():
            return model(input_ids=torch.tensor([ids])).logits[0, -1].float().contiguous()

    last = torch_thread.run(logits)
    row = Row(ids=list(ids), max_new_tokens=10**6, seed=0, **AGENT)
    times = []
    for _ in range(calls):
        scores = last.clone()
        start = time.perf_counter()
        choose_token(row, scores, stop_ids=[])
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6, len(ids)


def throughput(chat, rows: int, tokens: int) -> float:
    from langchain_core.messages import HumanMessage

    start = time.perf_counter()
    chat.batch([[HumanMessage(PROMPT)]] * rows, max_tokens=tokens, min_tokens=tokens, seed=0, **AGENT)
    return rows * tokens / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    from hierplan import load_chat_model

    chat = load_chat_model()
    throughput(chat, 1, 8)  # warm-up
    us, context = choice_us(chat, args.calls)
    print(f"choose_token: {us:.0f} us per row and token ({context}-token prompt)", flush=True)
    one, four = [], []
    for i in range(args.rounds):
        one.append(throughput(chat, 1, args.tokens))
        four.append(throughput(chat, 4, args.tokens))
        print(f"round {i + 1}: 1 row {one[-1]:.1f} tok/s, 4 rows {four[-1]:.1f} tok/s", flush=True)
    m1, m4 = statistics.median(one), statistics.median(four)
    print(f"median: 1 row {m1:.1f} tok/s, 4 rows {m4:.1f} tok/s, 4 rows / 1 row {m4 / m1:.2f}x")
    if not args.no_write:
        body = (f"Command: `python bench/row_choice.py --tokens {args.tokens} --rounds {args.rounds} "
                f"--calls {args.calls}`\nMachine: {machine_line()}\n\n"
                "| choose_token, us per row and token | 1 row tok/s | 4 rows tok/s | 4 rows / 1 row |\n"
                "|---:|---:|---:|---:|\n"
                f"| {us:.0f} | {m1:.1f} | {m4:.1f} | {m4 / m1:.2f}x |\n")
        write_section("Choosing a row's token (latest run)", body)


if __name__ == "__main__":
    main()
