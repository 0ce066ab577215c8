"""A blind pairwise reading of two systems' replies on the same prompts: which reply is better in substance.

    python bench/blind_pairs.py make bench-out/ifeval-para.jsonl --out bench-out/blind/para
    # a reader (a person, or a helper session told nothing of which system is which) fills judgments.jsonl
    python bench/blind_pairs.py tally bench-out/blind/para
    # the reader's own noise: the model alone against itself, a second run drawn with another seed
    python bench/blind_pairs.py make bench-out/ifeval-para.jsonl --against bench-out/ifeval-para-seed12.jsonl \
        --out bench-out/blind/para-null

``make`` writes, for every prompt both systems answered, the prompt and the two replies as "A" and "B" in an order
drawn per prompt (seed 41), to ``pairs.md`` (what the reader reads) and the key to ``key.json`` (which system each
letter is; the reader must not open it). The reader writes one JSON line per prompt to ``judgments.jsonl``:
``{"row": N, "better": "A" | "B" | "tie", "substance_a": 1-5, "substance_b": 1-5, "only_phrase": [letters],
"wrong_kind": [letters], "note": "..."}``, judging substance (does it do the task the user asked: content,
correctness, completeness, usefulness) and ignoring the form instructions (case, counts, markers, separators).
``only_phrase``: replies that are only a required phrase or the request copied back; ``wrong_kind``: replies that
are a different kind of piece than asked (a letter where a story was asked). ``tally`` unblinds and counts.

``tally --split RECORDS`` also counts the verdicts apart for the prompts where hierplan's reply is its draft
(no rewrite: its ``instruction_check`` has no rounds) and where a program or the model rewrote it.

``--against`` pairs the model alone's replies with its replies in a second run (``direct-again``): two samples of
one system, so whatever "better" the reader finds there is the floor of noise (sampling and reading) under a
comparison of two systems.
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
AGAIN = "direct-again"


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make(records_path: Path, out: Path, against: Path | None = None) -> int:
    records = read_records(records_path)
    systems = SYSTEMS
    if against is not None:
        systems = ("direct", AGAIN)
        records = [r for r in records if r.get("system") == "direct"]
        records += [{**r, "system": AGAIN} for r in read_records(against) if r.get("system") == "direct"]
    by_row: dict[int, dict[str, dict]] = {}
    for r in records:
        if r.get("system") in systems:
            by_row.setdefault(r["row"], {})[r["system"]] = r
    prompts = {r["row"]: r.get("prompt") for r in records if r.get("prompt")}
    rng = random.Random(SEED)
    out.mkdir(parents=True, exist_ok=True)
    key, lines = {}, ["# Blind pairs", "", "Judge substance only: does the reply do what the user asked (content, "
                      "correctness, completeness, usefulness)? Ignore the form instructions (case, counts, markers, "
                      "separators, titles, quotes).", ""]
    for row in sorted(by_row):
        pair = by_row[row]
        if set(pair) != set(systems):
            continue
        order = list(systems)
        rng.shuffle(order)
        key[row] = {"A": order[0], "B": order[1]}
        lines += [f"## Row {row}", "", "### Prompt", "", prompts.get(row) or "(prompt missing)", ""]
        for letter, system in zip("AB", order):
            lines += [f"### Reply {letter}", "", "````", (pair[system].get("final") or "").strip(), "````", ""]
    (out / "pairs.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "key.json").write_text(json.dumps(key, indent=1), encoding="utf-8")
    print(f"{len(key)} pairs in {out / 'pairs.md'}")
    return 0


def tally(out: Path, split: Path | None = None) -> int:
    key = {int(k): v for k, v in json.loads((out / "key.json").read_text()).items()}
    judged = read_records(out / "judgments.jsonl")
    systems = sorted({system for letters in key.values() for system in letters.values()})
    verdicts: Counter = Counter()
    substance: dict[str, list[int]] = {s: [] for s in systems}
    flagged: dict[str, Counter] = {s: Counter() for s in systems}
    for j in judged:
        letters = key[int(j["row"])]
        verdicts["tie" if j["better"] == "tie" else letters[j["better"]]] += 1
        for letter in "AB":
            substance[letters[letter]].append(int(j[f"substance_{letter.lower()}"]))
        for flag in ("only_phrase", "wrong_kind"):
            for letter in j.get(flag) or []:
                flagged[letters[letter]][flag] += 1
    n = len(judged)
    if split is not None:
        rewritten = {r["row"]: bool((r.get("instruction_check") or {}).get("revisions"))
                     for r in read_records(split) if r["system"] == "hierplan"}
        by_round: dict[bool, Counter] = {False: Counter(), True: Counter()}
        for j in judged:
            letters = key[int(j["row"])]
            by_round[rewritten.get(int(j["row"]), False)]["tie" if j["better"] == "tie" else letters[j["better"]]] += 1
        for was, label in ((False, "hierplan's draft kept"), (True, "hierplan's reply rewritten")):
            print(f"{label}: " + ", ".join(f"{s} better {by_round[was][s]}" for s in systems)
                  + f", tie {by_round[was]['tie']}")
    print(f"{n} pairs judged: " + ", ".join(f"{s} better {verdicts[s]}" for s in systems) + f", tie {verdicts['tie']}")
    for s in systems:
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
    m.add_argument("--against", type=Path, help="a second run's records: pair the model alone with itself")
    t = sub.add_parser("tally")
    t.add_argument("out", type=Path)
    t.add_argument("--split", type=Path, help="the run's records: verdicts apart for drafts kept and rewrites")
    args = p.parse_args(argv)
    return make(args.records, args.out, args.against) if args.command == "make" else tally(args.out, args.split)


if __name__ == "__main__":
    sys.exit(main())
