"""A blind pairwise reading of two systems' replies on the same prompts: which reply is better in substance.

    python bench/blind_pairs.py make bench-out/ifeval-para.jsonl --out bench-out/blind/para
    # a reader (a person, or a helper session told nothing of which system is which) fills judgments.jsonl
    python bench/blind_pairs.py tally bench-out/blind/para

``make`` writes, for every prompt both systems answered, the prompt and the two replies as "A" and "B" in an order
drawn per prompt (seed 41), to ``pairs.md`` (what the reader reads) and the key to ``key.json`` (which system each
letter is; the reader must not open it). The reader writes one JSON line per prompt to ``judgments.jsonl``:
``{"row": N, "better": "A" | "B" | "tie", "substance_a": 1-5, "substance_b": 1-5, "only_phrase": [letters],
"wrong_kind": [letters], "note": "..."}``, judging substance (does it do the task the user asked: content,
correctness, completeness, usefulness) and ignoring the form instructions (case, counts, markers, separators).
``only_phrase``: replies that are only a required phrase or the request copied back; ``wrong_kind``: replies that
are a different kind of piece than asked (a letter where a story was asked). ``tally`` unblinds and counts.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

SEED = 41
SYSTEMS = ("direct", "hierplan")


def make(records_path: Path, out: Path) -> int:
    records = [json.loads(line) for line in records_path.read_text().splitlines() if line.strip()]
    by_row: dict[int, dict[str, dict]] = {}
    for r in records:
        if r.get("system") in SYSTEMS:
            by_row.setdefault(r["row"], {})[r["system"]] = r
    prompts = {r["row"]: r.get("prompt") for r in records if r.get("prompt")}
    rng = random.Random(SEED)
    out.mkdir(parents=True, exist_ok=True)
    key, lines = {}, ["# Blind pairs", "", "Judge substance only: does the reply do what the user asked (content, "
                      "correctness, completeness, usefulness)? Ignore the form instructions (case, counts, markers, "
                      "separators, titles, quotes).", ""]
    for row in sorted(by_row):
        pair = by_row[row]
        if set(pair) != set(SYSTEMS):
            continue
        order = list(SYSTEMS)
        rng.shuffle(order)
        key[row] = {"A": order[0], "B": order[1]}
        lines += [f"## Row {row}", "", "### Prompt", "", prompts.get(row) or "(prompt missing)", ""]
        for letter, system in zip("AB", order):
            lines += [f"### Reply {letter}", "", "````", (pair[system].get("final") or "").strip(), "````", ""]
    (out / "pairs.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "key.json").write_text(json.dumps(key, indent=1), encoding="utf-8")
    print(f"{len(key)} pairs in {out / 'pairs.md'}")
    return 0


def tally(out: Path) -> int:
    key = {int(k): v for k, v in json.loads((out / "key.json").read_text()).items()}
    judged = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines() if line.strip()]
    verdicts: Counter = Counter()
    substance: dict[str, list[int]] = {s: [] for s in SYSTEMS}
    flagged: dict[str, Counter] = {s: Counter() for s in SYSTEMS}
    for j in judged:
        letters = key[int(j["row"])]
        verdicts["tie" if j["better"] == "tie" else letters[j["better"]]] += 1
        for letter in "AB":
            substance[letters[letter]].append(int(j[f"substance_{letter.lower()}"]))
        for flag in ("only_phrase", "wrong_kind"):
            for letter in j.get(flag) or []:
                flagged[letters[letter]][flag] += 1
    n = len(judged)
    print(f"{n} pairs judged: hierplan better {verdicts['hierplan']}, direct better {verdicts['direct']}, "
          f"tie {verdicts['tie']}")
    for s in SYSTEMS:
        mean = sum(substance[s]) / len(substance[s]) if substance[s] else float("nan")
        print(f"{s}: mean substance {mean:.2f}/5; only a phrase or the request: {flagged[s]['only_phrase']}; "
              f"another kind of piece: {flagged[s]['wrong_kind']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("records", type=Path)
    m.add_argument("--out", type=Path, required=True)
    t = sub.add_parser("tally")
    t.add_argument("out", type=Path)
    args = p.parse_args(argv)
    return make(args.records, args.out) if args.command == "make" else tally(args.out)


if __name__ == "__main__":
    sys.exit(main())
