"""Decode speed through hierplan's chat model against llama.cpp's own server, same GGUF, alternating; and the
time from process start to the first token.

    python bench/engine_speed.py [--model NAME|PATH] [--rounds 5] [--tokens 128] [--doc]

The server is llama.cpp's OpenAI-compatible server from the same xllamacpp wheel (tests/llama_server.py starts
it, on 127.0.0.1), asked over HTTP as any client would; hierplan's side is ``load_chat_model(...).invoke``.
Both get the same request (greedy, ``max_tokens``, a prompt that does not stop early); figures are wall-clock
tokens per second of whole requests, median over the rounds, the two taking turns.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
PROMPT = "Write a long, detailed story about a lighthouse keeper and a storm. Do not stop early."
FIRST_TOKEN = """
import time, sys
start = float(sys.argv[1])
from hierplan.models import load_chat_model
chat = load_chat_model(sys.argv[2] if len(sys.argv) > 2 else None)
next(iter(chat.stream("Say hello.", max_tokens=4)))
print(time.time() - start)
"""


def start_server(gguf: str):
    from servers import launch

    import llama_server

    port = launch.free_port()
    command = [sys.executable, llama_server.__file__, "--model", gguf, "--port", str(port)]
    return launch.start(command, port=port, model="bench", workdir=Path(os.environ.get("TMPDIR", "/tmp")),
                        ready_path="/health")


def http_rate(base: str, tokens: int) -> float:
    body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": PROMPT}], "max_tokens": tokens,
                       "temperature": 0}).encode()
    request = urllib.request.Request(f"{base}/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as response:
        usage = json.load(response)["usage"]
    return usage["completion_tokens"] / (time.perf_counter() - start)


def chat_rate(chat, tokens: int) -> float:
    start = time.perf_counter()
    message = chat.invoke(PROMPT, max_tokens=tokens, temperature=0)
    return message.usage_metadata["output_tokens"] / (time.perf_counter() - start)


def first_token_seconds(model: str | None) -> float:
    args = [sys.executable, "-c", FIRST_TOKEN, repr(time.time())] + ([model] if model else [])
    return float(subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--doc", action="store_true", help="write the figures into docs/benchmarks.md")
    args = parser.parse_args()
    from hierplan.models import load_chat_model, resolve_model

    spec = resolve_model(args.model)
    starts = [first_token_seconds(args.model) for _ in range(3)]
    server = start_server(spec.path)
    try:
        chat = load_chat_model(args.model)
        chat_rate(chat, 8), http_rate(server.base_url.removesuffix("/v1"), 8)  # warm both prompt caches
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(chat_rate(chat, args.tokens))
            theirs.append(http_rate(server.base_url.removesuffix("/v1"), args.tokens))
    finally:
        server.stop()
    ratio = statistics.median(ours) / statistics.median(theirs)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    table = (f"`python bench/engine_speed.py --rounds {args.rounds} --tokens {args.tokens}`, {spec.name}, "
             f"{os.cpu_count()} cores ({cpu}), {time.strftime('%Y-%m-%d')}\n\n"
             "| | tokens/s per round | median |\n|---|---|---:|\n"
             f"| hierplan's chat model (in-process llama.cpp) | {', '.join(f'{r:.1f}' for r in ours)} | "
             f"{statistics.median(ours):.1f} |\n"
             f"| llama.cpp's own server (HTTP) | {', '.join(f'{r:.1f}' for r in theirs)} | "
             f"{statistics.median(theirs):.1f} |\n\n"
             f"Ratio hierplan / server: **{ratio:.2f}x**. Process start to first token (cached model, 3 runs): "
             f"{', '.join(f'{s:.2f}' for s in starts)} s.\n")
    print(table)
    if args.doc:
        doc = ROOT / "docs" / "benchmarks.md"
        text = doc.read_text() if doc.exists() else "# Benchmarks\n"
        begin, end = "<!-- engine_speed:begin -->", "<!-- engine_speed:end -->"
        section = f"{begin}\n## Engine speed: hierplan vs llama.cpp's own server\n\n{table}{end}"
        if begin in text:
            text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
        else:
            text = text.rstrip() + "\n\n" + section + "\n"
        doc.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
