"""Find the JSON object in a model's reply: fenced, inline, or wrapped in prose."""

from __future__ import annotations

import json
import re
from typing import Any

MAX_PROSE_LINES = 8
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class NoJSONFound(ValueError):
    pass


def extract_json_object(text: str) -> dict[str, Any]:
    """Return the first JSON object in ``text``.

    Fenced blocks are tried first (a model that fences usually fences the answer), then every ``{``
    in order. Deliberately does not repair broken JSON (trailing commas, single quotes): a broken
    plan goes to the stricter retry instead of being guessed at.
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        for match in re.finditer(r"\{", candidate):
            try:
                value, _ = decoder.raw_decode(candidate, match.start())
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise NoJSONFound("no JSON object found in the model's reply")


def strip_code_fences(text: str) -> str:
    """The code inside the first Markdown fence; without a fence, the text less any prose around the code."""
    match = re.search(r"```(?:python|py|Python)?[ \t]*\n(.*?)(?:```|\Z)", text, re.DOTALL)
    return match.group(1).strip("\n") if match else trim_prose(text.strip("\n"))


def trim_prose(text: str) -> str:
    """The longest compiling run of lines after dropping up to MAX_PROSE_LINES lines of prose at either end,
    so "Here is the code:" before the code does not break it.

    Compiles only, never runs. Returns the text unchanged when nothing compiles (the syntax error is then
    shown to the model). Prose in the middle of the code is deliberately not handled.
    """
    lines = text.splitlines()
    n = len(lines)
    candidates = [(start, end) for start in range(min(n, MAX_PROSE_LINES + 1))
                  for end in range(n, max(start, n - MAX_PROSE_LINES - 1), -1)]
    for start, end in sorted(candidates, key=lambda c: c[0] - c[1]):  # longest first
        chunk = "\n".join(lines[start:end])
        if chunk.strip() and _compiles(chunk):
            return chunk
    return text


def _compiles(code: str) -> bool:
    try:
        compile(code, "<step>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True
