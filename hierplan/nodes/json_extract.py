"""Find the JSON object in a model's reply: fenced, inline, or wrapped in prose."""

from __future__ import annotations

import json
import re
from typing import Any

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
