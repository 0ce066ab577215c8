"""JSON schema -> one regular expression that only admits compact JSON valid for the schema.

Every property is emitted in schema order, strings keep their length bounds, and an array of objects with an
integer ``id`` (the plan's steps) is unrolled by position, so step *i* has ``"id":i`` and its integer lists
(``depends_on``) name only ids < i. Pure Python: no torch, no grammar engine.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["schema_regex", "worst_case_json_bytes"]

# Strings the schema leaves unbounded (e.g. assumption items, checked by a validator) get this cap.
DEFAULT_STRING_CAP = 200
# Integer lists the schema leaves unbounded get at most this many items.
DEFAULT_LIST_CAP = 8
# One decoded character: any non-control character except quote/backslash, or a short escape.
# No \uXXXX escapes: a lone surrogate would not parse.
_CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/nt])'
# A JSON number (a tool's float argument), bounded so the longest one is known: up to 15 digits before and after
# the point and a 3-digit exponent.
_NUMBER = r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?(?:[eE][-+]?[0-9]{1,3})?"
NUMBER_BYTES = 1 + 15 + 16 + 5


# ---------------------------------------------------------------- schema -> regex


def _lit(value: Any) -> str:
    return re.escape(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def _rep(item: str, lo: int, hi: int) -> str:
    """``[`` item (``,`` item){lo-1,hi-1} ``]`` with lo..hi items."""
    if hi <= 0:
        return r"\[\]"
    seq = f"{item}(?:,{item}){{{max(lo - 1, 0)},{hi - 1}}}"
    return rf"\[{seq}\]" if lo >= 1 else rf"\[(?:{seq})?\]"


class _Builder:
    def __init__(self, schema: dict[str, Any]):
        self.defs = schema.get("$defs", {})

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = self.defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def value(self, node: dict[str, Any], earlier: int | None = None) -> str:
        """Regex for one JSON value; ``earlier`` = n means integer lists may only hold 1..n."""
        node = self.resolve(node)
        if "const" in node:
            return _lit(node["const"])
        if "enum" in node:
            return "(?:" + "|".join(_lit(v) for v in node["enum"]) + ")"
        if "anyOf" in node:
            return "(?:" + "|".join(self.value(n, earlier) for n in node["anyOf"]) + ")"
        kind = node.get("type")
        if isinstance(kind, list):  # {"type": ["string", "null"]}: one of them
            return "(?:" + "|".join(self.value({**node, "type": k}, earlier) for k in kind) + ")"
        if kind == "null":
            return "null"
        if kind == "boolean":
            return "(?:true|false)"
        if kind == "string":
            lo, hi = node.get("minLength", 0), node.get("maxLength", DEFAULT_STRING_CAP)
            return f'"{_CHAR}{{{lo},{hi}}}"'
        if kind == "integer":
            lo, hi = node.get("minimum"), node.get("maximum")
            if lo is not None and hi is not None and hi - lo <= 64:
                return "(?:" + "|".join(str(v) for v in range(lo, hi + 1)) + ")"
            return r"-?(?:0|[1-9][0-9]{0,8})"
        if kind == "number":
            return _NUMBER
        if kind == "array":
            return self.array(node, earlier)
        if kind == "object":
            return self.obj(node, earlier)
        raise ValueError(f"schema node not supported by the plan grammar: {node}")

    def array(self, node: dict[str, Any], earlier: int | None) -> str:
        items = self.resolve(node.get("items", {}))
        lo, hi = node.get("minItems", 0), node.get("maxItems")
        if items.get("type") == "integer" and earlier is not None:
            # References to earlier positions (depends_on): ids 1..earlier, at most `earlier` of them.
            if earlier == 0:
                return r"\[\]"
            ids = "(?:" + "|".join(str(i) for i in range(1, earlier + 1)) + ")"
            return _rep(ids, lo, min(hi or earlier, earlier))
        if items.get("type") == "object" and items.get("properties", {}).get("id", {}).get("type") == "integer":
            return self.positional(items, lo, hi or DEFAULT_LIST_CAP)
        return _rep(self.value(items), lo, hi if hi is not None else DEFAULT_LIST_CAP)

    def positional(self, item: dict[str, Any], lo: int, hi: int) -> str:
        """Objects numbered 1..n in order: item i has ``"id":i`` and references only ids < i."""
        parts = [self.obj(item, i - 1, fixed_id=i) for i in range(1, hi + 1)]
        tail = ""
        for part in reversed(parts[max(lo, 1):]):
            tail = f"(?:,{part}{tail})?"
        head = ",".join(parts[: max(lo, 1)])
        return rf"\[{head}{tail}\]" if lo >= 1 else rf"\[(?:{head}{tail})?\]"

    def obj(self, node: dict[str, Any], earlier: int | None = None, fixed_id: int | None = None) -> str:
        fields = []
        for key, sub in node.get("properties", {}).items():
            val = str(fixed_id) if (key == "id" and fixed_id is not None) else self.value(sub, earlier)
            fields.append(_lit(key) + ":" + val)
        return r"\{" + ",".join(fields) + r"\}"


def schema_regex(schema_model: Any) -> str:
    """Regex over compact JSON text for ``schema_model`` (a pydantic model class or a JSON-schema dict).

    All properties are emitted, in schema order, with no whitespace. Every match validates
    against the model (the grammar is a subset of the schema).
    """
    schema = schema_model if isinstance(schema_model, dict) else schema_model.model_json_schema()
    return _Builder(schema).value(schema)


def worst_case_json_bytes(schema_model: Any) -> int:
    """Longest compact JSON, in UTF-8 bytes (4 per string character), that the grammar allows.

    With a byte-level BPE vocabulary every token is at least one byte, so this bounds the
    tokens of any constrained generation (plus one for the end-of-sequence token).
    """
    schema = schema_model if isinstance(schema_model, dict) else schema_model.model_json_schema()
    builder = _Builder(schema)

    def longest(node: dict[str, Any], earlier: int | None = None) -> int:
        node = builder.resolve(node)
        if "const" in node:
            return len(json.dumps(node["const"], separators=(",", ":")))
        if "enum" in node:
            return max(len(json.dumps(v)) for v in node["enum"])
        if "anyOf" in node:
            return max(longest(n, earlier) for n in node["anyOf"])
        kind = node.get("type")
        if isinstance(kind, list):
            return max(longest({**node, "type": k}, earlier) for k in kind)
        if kind == "number":
            return NUMBER_BYTES
        if kind in ("null", "boolean"):
            return 5 if kind == "boolean" else 4
        if kind == "string":
            return 2 + 4 * node.get("maxLength", DEFAULT_STRING_CAP)  # a character is at most 4 bytes
        if kind == "integer":
            lo, hi = node.get("minimum"), node.get("maximum")
            return max(len(str(lo)), len(str(hi))) if lo is not None and hi is not None and hi - lo <= 64 else 10
        if kind == "array":
            items = builder.resolve(node.get("items", {}))
            hi = node.get("maxItems")
            if items.get("type") == "integer" and earlier is not None:
                n = min(hi or earlier, earlier)
                return 2 + max(n * (len(str(earlier)) + 1) - 1, 0)
            if items.get("type") == "object" and items.get("properties", {}).get("id", {}).get("type") == "integer":
                n = hi or DEFAULT_LIST_CAP
                return 2 + sum(obj(items, i - 1) for i in range(1, n + 1)) + n - 1
            n = hi if hi is not None else DEFAULT_LIST_CAP
            return 2 + n * longest(items) + max(n - 1, 0)
        if kind == "object":
            return obj(node, earlier)
        raise ValueError(node)

    def obj(node: dict[str, Any], earlier: int | None = None) -> int:
        props = node.get("properties", {})
        return 2 + sum(len(json.dumps(k)) + 1 + longest(v, earlier) for k, v in props.items()) + len(props) - 1

    return longest(schema)
