"""Which thread generates: decode speed when the graph's worker threads call the model.

LangGraph runs parallel steps on its worker threads. The embedded model decodes 48 tokens (agent sampling)
called from the main thread, from a fresh thread per call, and from a pool of 4 threads, once through
hierplan's chat model as loaded (every generate pass on hierplan's torch thread, hierplan/models/torch_thread.py)
and once with passes run inline (generate runs on whichever thread calls: the bench makes the batcher believe
every thread is the torch thread).

    python bench/generation_thread.py [--tokens 48] [--no-write]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import machine_line, write_section  # noqa: E402

PROMPT = "Plan the steps to compute the average of a list of numbers."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    import hierplan  # noqa: F401  (first: its OpenMP settings apply only if set before torch starts)
    from langchain_core.messages import HumanMessage

    from hierplan.models import load_chat_model

    chat = load_chat_model()
    from hierplan.models import torch_thread

    pinned = torch_thread.on_torch_thread
    kwargs = {"do_sample": True, "temperature": 0.2, "top_p": 0.9,
              "max_new_tokens": args.tokens, "min_new_tokens": args.tokens}

    def call() -> float:
        start = time.perf_counter()
        chat.invoke([HumanMessage(PROMPT)], pipeline_kwargs=kwargs)
        return args.tokens / (time.perf_counter() - start)

    def fresh() -> float:
        out: list[float] = []
        thread = threading.Thread(target=lambda: out.append(call()))
        thread.start()
        thread.join()
        return out[0]

    # One call at a time from the pool, like LangGraph's executor running one ready step.
    pool = ThreadPoolExecutor(4, thread_name_prefix="bench-pool")
    callers = {
        "main thread": lambda: [call() for _ in range(3)],
        "a fresh thread per call": lambda: [fresh() for _ in range(3)],
        "a pool of 4 threads": lambda: [pool.submit(call).result() for _ in range(3)],
    }
    results: dict[tuple[str, str], float] = {}
    call()  # warm-up
    # The unpinned runs go last: once another thread has run torch kernels, libgomp throttles every thread.
    for mode, where in (("hierplan's torch thread", pinned), ("the calling thread", lambda: True)):
        torch_thread.on_torch_thread = where
        for caller, run in callers.items():
            rates = run()
            results[mode, caller] = statistics.median(rates)
            print(f"{mode}, called from {caller}: {[round(r, 1) for r in rates]} tok/s", flush=True)
    torch_thread.on_torch_thread = pinned
    pool.shutdown()
    rows = ["| generate runs on | " + " | ".join(f"called from {c}" for c in callers) + " |",
            "| --- |" + " ---: |" * len(callers)]
    for mode in ("hierplan's torch thread", "the calling thread"):
        rows.append(f"| {mode} | " + " | ".join(f"{results[mode, c]:.1f}" for c in callers) + " |")
    table = "\n".join(rows)
    print(table)
    if not args.no_write:
        write_section("Generation thread", f"""Decode tok/s, median of 3 calls of {args.tokens} tokens (agent sampling), embedded model, one process.

Command: `python bench/generation_thread.py --tokens {args.tokens}`
Machine: {machine_line()}

{table}

The second row runs each pass inline, so generate runs on the thread that calls; it runs last,
because once a second thread has run torch kernels libgomp's throttled spin applies to both.
""")


if __name__ == "__main__":
    main()
