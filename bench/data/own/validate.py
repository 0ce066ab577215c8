"""Checks bench/data/own/ifeval_own1.jsonl, ifeval_own2.jsonl, ifeval_own3.jsonl, ifeval_own4.jsonl,
ifeval_own5.jsonl and ifeval_own6.jsonl against lm-eval's IFEval checkers (stdlib + bench/ifeval_checkers.py).

    .venv/bin/python bench/data/own/validate.py [path.jsonl ...]

With no arguments it checks every set in SETS, and the keys must be unique across all of them. A path names one
set: its first key comes from SETS when the file name is listed there, else from the file's first row.
Prints "ok", or one line per problem and exits 1.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # bench/
import ifeval_checkers  # noqa: E402

# (file, first key): each set has N_ROWS rows with keys first_key .. first_key + N_ROWS - 1.
SETS = [
    (HERE / "ifeval_own1.jsonl", 900001),
    (HERE / "ifeval_own2.jsonl", 900101),
    (HERE / "ifeval_own3.jsonl", 900201),
    (HERE / "ifeval_own4.jsonl", 900301),
    (HERE / "ifeval_own5.jsonl", 900401),
    (HERE / "ifeval_own6.jsonl", 900501),
]
N_ROWS = 40
FIELDS = ["row", "key", "prompt", "instruction_id_list", "kwargs"]

# IFEval's template sentences; the prompts must be phrased in their own words.
STOCK_PHRASES = [
    "double angular brackets",
    "markdown divider",
    "six asterisk",
    "section x",
    "your entire response",
    "in your response, the word",
    "in your entire response, refrain from",
    "wrap your entire response with double quotation marks",
    "answer with at least",
    "answer with at most",
    "paragraphs are separated with the markdown divider",
    "do not include keywords",
    "include keywords",
    "highlighted section",
    "is it true that",
    "first repeat the request word for word without change",
]


def registry() -> dict:
    utils = ifeval_checkers._load()
    return utils.instructions_registry.INSTRUCTION_DICT


def check_row(i: int, line: str, seen_keys: set, inst_dict: dict, first_key: int, name: str = "") -> list[str]:
    where = f"{name} line {i}" if name else f"line {i}"
    try:
        row = json.loads(line)
    except json.JSONDecodeError as e:
        return [f"{where}: not JSON ({e})"]
    if not isinstance(row, dict):
        return [f"{where}: not a JSON object"]
    problems = []
    if list(row) != FIELDS:
        problems.append(f"{where}: fields are {list(row)}, want {FIELDS} in that order")
    if row.get("row") != i:
        problems.append(f"{where}: row is {row.get('row')!r}, want {i}")
    key = row.get("key")
    if not isinstance(key, int):
        problems.append(f"{where}: key {key!r} is not an int")
    elif key in seen_keys:
        problems.append(f"{where}: duplicate key {key}")
    else:
        seen_keys.add(key)
        if key != first_key + i - 1:
            problems.append(f"{where}: key {key}, want {first_key + i - 1}")
    prompt = row.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return problems + [f"{where}: prompt missing or empty"]
    ids, kwargs = row.get("instruction_id_list"), row.get("kwargs")
    if not isinstance(ids, list) or not 1 <= len(ids) <= 3:
        return problems + [f"{where}: instruction_id_list must be a list of 1 to 3 ids"]
    if len(set(ids)) != len(ids):
        problems.append(f"{where}: an instruction id is repeated")
    if not isinstance(kwargs, list) or len(kwargs) != len(ids):
        return problems + [f"{where}: kwargs must be a list as long as instruction_id_list"]

    repeat_texts = []
    lowered = prompt.lower()
    for iid, kw in zip(ids, kwargs):
        tag = f"{where} [{iid}]"
        if iid not in inst_dict:
            problems.append(f"{tag}: not in lm-eval's INSTRUCTION_DICT")
            continue
        if not isinstance(kw, dict):
            problems.append(f"{tag}: kwargs entry is not an object")
            continue
        cls = inst_dict[iid]
        accepted = [p for p in inspect.signature(cls.build_description).parameters if p != "self"]
        extra = sorted(set(kw) - set(accepted))
        missing = sorted(set(accepted) - set(kw))
        if extra:
            problems.append(f"{tag}: build_description does not accept {extra}")
        if missing:  # the checker would pick a random value for a missing argument
            problems.append(f"{tag}: missing arguments {missing}")
        empty = [k for k, v in kw.items() if not v]
        if empty:  # the scorer drops falsy kwargs, so they too would be random
            problems.append(f"{tag}: empty/zero/None values for {empty}")
        try:
            cls(iid).build_description(**kw)
        except Exception as e:  # noqa: BLE001
            problems.append(f"{tag}: build_description(**kwargs) failed: {e!r}")
            continue

        if iid == "combination:repeat_prompt":
            text = kw.get("prompt_to_repeat", "")
            repeat_texts.append(text)
            if text not in prompt:
                problems.append(f"{tag}: prompt_to_repeat is not verbatim in the prompt")
        elif iid == "startend:end_checker":
            if kw.get("end_phrase", "") not in prompt:
                problems.append(f"{tag}: end_phrase is not verbatim in the prompt")
        elif iid == "detectable_content:postscript":
            if kw.get("postscript_marker", "") not in prompt:
                problems.append(f"{tag}: postscript_marker is not verbatim in the prompt")
        elif iid == "detectable_format:multiple_sections":
            if kw.get("section_spliter", "") not in prompt:
                problems.append(f"{tag}: section_spliter is not in the prompt")
        elif iid == "keywords:frequency":
            if str(kw.get("keyword", "")).lower() not in lowered:
                problems.append(f"{tag}: keyword is not named in the prompt")
        elif iid in ("keywords:existence", "keywords:forbidden_words"):
            for word in kw.get("keywords", kw.get("forbidden_words", [])):
                if word.lower() not in lowered:
                    problems.append(f"{tag}: {word!r} is not named in the prompt")
        elif iid == "length_constraints:nth_paragraph_first_word":
            if str(kw.get("first_word", "")).lower() not in lowered:
                problems.append(f"{tag}: first_word is not named in the prompt")
        elif iid == "detectable_format:constrained_response":
            for option in ("My answer is yes.", "My answer is no.", "My answer is maybe."):
                if option not in prompt:
                    problems.append(f"{tag}: option {option!r} is not spelled out in the prompt")
        elif iid == "combination:two_responses":
            if "******" not in prompt:
                problems.append(f"{tag}: the ****** separator is not shown in the prompt")
        elif iid == "length_constraints:number_paragraphs":
            if "***" not in prompt:
                problems.append(f"{tag}: the *** separator is not shown in the prompt")
        elif iid == "detectable_format:title":
            if "<<" not in prompt or ">>" not in prompt:
                problems.append(f"{tag}: the << >> title form is not shown in the prompt")

    outside = prompt
    for text in repeat_texts:
        outside = outside.replace(text, " ")
    outside = outside.lower()
    for phrase in STOCK_PHRASES:
        if phrase in outside:
            problems.append(f"{where}: IFEval stock phrase {phrase!r}")
    return problems


def first_key_of(path: Path, lines: list[str]) -> int | None:
    for known, first_key in SETS:
        if path.name == known.name:
            return first_key
    try:
        key = json.loads(lines[0]).get("key")
    except (IndexError, json.JSONDecodeError, AttributeError):
        return None
    return key if isinstance(key, int) else None


def check_file(path: Path, first_key: int | None, seen: set, inst_dict: dict) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        return [f"cannot read {path}: {e}"]
    if first_key is None:
        first_key = first_key_of(path, lines)
        if first_key is None:
            return [f"{path.name}: cannot tell its first key"]
    problems: list[str] = []
    if len(lines) != N_ROWS:
        problems.append(f"{path.name}: {len(lines)} lines, want {N_ROWS}")
    for i, line in enumerate(lines, 1):
        problems += check_row(i, line, seen, inst_dict, first_key, path.name)
    return problems


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        todo = [(Path(arg), None) for arg in argv[1:]]
    else:
        todo = list(SETS)
    inst_dict = registry()
    problems: list[str] = []
    seen: set = set()  # keys must be unique across all the files checked together
    for path, first_key in todo:
        problems += check_file(path, first_key, seen, inst_dict)
    if problems:
        print("\n".join(problems))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
