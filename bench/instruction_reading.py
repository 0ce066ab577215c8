"""How well hierplan reads a task's checkable instructions from its words, against IFEval's labels (bench-only:
the labels are read here, for scoring; the product reads only the prompt).

    python bench/instruction_reading.py --part tune       # rows 1-240, the rows looked at while writing the rules
    python bench/instruction_reading.py --part validate   # rows 241-481, not looked at

For each IFEval instruction kind that hierplan.rules reads: in how many prompts it was read (found), missed, and
read where IFEval has no such instruction (extra; some of those are true instructions IFEval does not label).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from hierplan.rules.instructions import read_instructions

TASKS = Path(__file__).resolve().parents[2] / "shared" / "eval" / "instructions_dev.jsonl"
PARTS = {"tune": slice(0, 240), "validate": slice(240, 481)}
# IFEval's instruction id -> the kind hierplan.rules reads for it.
KINDS = {
    "change_case:english_lowercase": "lowercase", "change_case:english_capital": "uppercase",
    "punctuation:no_comma": "no_commas", "startend:quotation": "quoted", "startend:end_checker": "ends_with",
    "detectable_format:json_format": "json", "detectable_format:title": "title",
    "detectable_format:number_highlighted_sections": "highlights",
    "detectable_content:number_placeholders": "placeholders", "detectable_content:postscript": "postscript",
    "length_constraints:number_paragraphs": "paragraphs", "detectable_format:multiple_sections": "sections",
    "combination:two_responses": "two_responses", "combination:repeat_prompt": "repeat_request",
    "length_constraints:number_sentences": "sentences", "keywords:frequency": "word_times",
    "keywords:letter_frequency": "letter_times", "length_constraints:number_words": "words",
    "keywords:forbidden_words": "avoid_word", "detectable_format:number_bullet_lists": "bullets",
    "language:response_language": "language", "change_case:capital_word_frequency": "caps_words",
}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=sorted(PARTS), required=True)
    args = p.parse_args()
    rows = [json.loads(line) for line in TASKS.read_text().splitlines() if line.strip()][PARTS[args.part]]
    found, missed, extra = Counter(), Counter(), Counter()
    for row in rows:
        read = {i["kind"] for i in read_instructions(row["prompt"])}
        wanted = {KINDS[i] for i in row["instruction_id_list"] if i in KINDS}
        found.update(wanted & read)
        missed.update(wanted - read)
        extra.update((read - wanted) & set(KINDS.values()))
    covered = sum(1 for r in rows for i in r["instruction_id_list"] if i in KINDS)
    total = sum(len(r["instruction_id_list"]) for r in rows)
    print(f"{args.part}: {len(rows)} prompts, {total} instructions, {covered} of a kind hierplan reads")
    print("| kind | found | missed | extra |\n|---|---:|---:|---:|")
    for kind in sorted(set(KINDS.values())):
        print(f"| {kind} | {found[kind]} | {missed[kind]} | {extra[kind]} |")
    print(f"| all | {sum(found.values())} | {sum(missed.values())} | {sum(extra.values())} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
