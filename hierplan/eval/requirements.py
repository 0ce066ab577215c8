"""Checkable requirements of writing tasks: one programmatic check per kind, pure stdlib.

A task line may carry ``"requirements": [{"kind": "bullets", "exactly": 5}, ...]``. Each check reads the
answer text only and says met / not met with a short reason, so a summary can report the share met.

Kinds (counts take ``exactly``, ``min`` and/or ``max``):

- ``bullets``: top-level lines starting with ``-``, ``*``, ``+`` or ``•`` and a space (``"markers": "any"``
  also counts ``1.`` / ``1)`` items);
- ``numbered_steps``: top-level lines starting ``1.``, ``2)``, ``Step 3:`` ...;
- ``heading_count``: Markdown headings (``#`` to ``######`` and a space);
- ``mentions``: ``all`` terms (and/or at least one of ``any``), case-insensitive, whole words, plural allowed,
  anywhere in the answer, code included (``"class Stack"`` is a mention);
- ``no_word``: none of ``words`` appears (same matching);
- ``max_words`` / ``min_words``: ``n`` words outside fenced code blocks;
- ``python_block_parses``: at least one fenced block (```` ```python ````, ```` ```py ```` or unlabeled), and
  every such block parses (``ast.parse``);
- ``ends_with_question``: the last line of prose ends with ``?``;
- ``starts_with``: the first line of prose starts with ``text`` (case-insensitive; Markdown emphasis ignored).

Lines inside fenced code are never bullets, steps or headings: a ``# comment`` in a program is not a heading.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from typing import Any, Callable

from hierplan.rules.text import PYTHON_LABELS, split_code, words

_BULLET_RE = re.compile(r"^([ \t]*)[-*+\u2022][ \t]+\S")
_NUMBERED_RE = re.compile(r"^([ \t]*)(?:\d{1,3}[.)]|step[ \t]+\d{1,3}[.:)]?)[ \t]+\S", re.I)
_HEADING_RE = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S")
_EMPHASIS = "*_`\"'\u201c\u201d> \t"
COUNT_KEYS = ("exactly", "min", "max")


@dataclass(frozen=True)
class Check:
    kind: str
    met: bool
    reason: str


# ------------------------------------------------------------------------------------------- text views


def _top_level(patterns: tuple[re.Pattern[str], ...], prose: str) -> list[str]:
    """Lines matching one of ``patterns`` at the smallest indent among them (one space of slack): sub-items
    of a list are not items of the list asked for."""
    hits = []
    for line in prose.splitlines():
        match = next((m for p in patterns if (m := p.match(line))), None)
        if match:
            hits.append((len(match.group(1).expandtabs(4)), line))
    least = min((indent for indent, _ in hits), default=0)
    return [line for indent, line in hits if indent <= least + 1]


def _term_re(term: str) -> re.Pattern[str]:
    """Whole-word, case-insensitive; inner spaces match any run of spaces or hyphens; a plural or possessive
    ending is allowed ("route" matches "routes", "route's")."""
    body = r"[\s-]+".join(re.escape(part) for part in term.split())
    return re.compile(rf"(?<![^\W_]){body}(?:s|es|'s|\u2019s)?(?![^\W_])", re.I)


def _prose_lines(text: str) -> list[str]:
    return [line.strip(_EMPHASIS) for line in split_code(text)[0].splitlines() if line.strip(_EMPHASIS)]


# ------------------------------------------------------------------------------------------- checks


def _count(spec: dict[str, Any], n: int, what: str) -> Check:
    wanted = []
    ok = True
    if "exactly" in spec:
        ok &= n == spec["exactly"]
        wanted.append(f"exactly {spec['exactly']}")
    if "min" in spec:
        ok &= n >= spec["min"]
        wanted.append(f"at least {spec['min']}")
    if "max" in spec:
        ok &= n <= spec["max"]
        wanted.append(f"at most {spec['max']}")
    return Check(spec["kind"], ok, f"{n} {what} (wanted {', '.join(wanted)})")


def check_bullets(spec: dict[str, Any], text: str) -> Check:
    prose = split_code(text)[0]
    if spec.get("markers") == "any":
        return _count(spec, len(_top_level((_BULLET_RE, _NUMBERED_RE), prose)), "list items")
    result = _count(spec, len(_top_level((_BULLET_RE,), prose)), "bullet points")
    numbered = len(_top_level((_NUMBERED_RE,), prose))
    if not result.met and numbered:  # say so: a numbered list where bullets were asked is the usual miss
        return Check(result.kind, False, f"{result.reason}; {numbered} numbered items not counted")
    return result


def check_numbered_steps(spec: dict[str, Any], text: str) -> Check:
    return _count(spec, len(_top_level((_NUMBERED_RE,), split_code(text)[0])), "numbered steps")


def check_heading_count(spec: dict[str, Any], text: str) -> Check:
    headings = [line for line in split_code(text)[0].splitlines() if _HEADING_RE.match(line)]
    return _count(spec, len(headings), "headings")


def check_mentions(spec: dict[str, Any], text: str) -> Check:
    missing = [t for t in spec.get("all", []) if not _term_re(t).search(text)]
    any_terms = spec.get("any", [])
    any_ok = not any_terms or any(_term_re(t).search(text) for t in any_terms)
    reasons = []
    if missing:
        reasons.append("missing " + ", ".join(repr(t) for t in missing))
    if not any_ok:
        reasons.append("none of " + ", ".join(repr(t) for t in any_terms))
    return Check("mentions", not missing and any_ok, "; ".join(reasons) or "all mentioned")


def check_no_word(spec: dict[str, Any], text: str) -> Check:
    found = [t for t in spec["words"] if _term_re(t).search(text)]
    return Check("no_word", not found, ("uses " + ", ".join(repr(t) for t in found)) if found else "none used")


def check_max_words(spec: dict[str, Any], text: str) -> Check:
    n = len(words(text))
    return Check("max_words", n <= spec["n"], f"{n} words outside code (at most {spec['n']})")


def check_min_words(spec: dict[str, Any], text: str) -> Check:
    n = len(words(text))
    return Check("min_words", n >= spec["n"], f"{n} words outside code (at least {spec['n']})")


def check_python_block_parses(spec: dict[str, Any], text: str) -> Check:
    blocks = [code for label, code in split_code(text)[1] if label in PYTHON_LABELS]
    if not blocks:
        return Check("python_block_parses", False, "no Python code block")
    for number, code in enumerate(blocks, start=1):
        try:
            ast.parse(code)
        except (SyntaxError, ValueError) as exc:
            where = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
            return Check("python_block_parses", False, f"block {number} does not parse: {exc.msg if isinstance(exc, SyntaxError) else exc}{where}")
    return Check("python_block_parses", True, f"{len(blocks)} block(s) parse")


def check_ends_with_question(spec: dict[str, Any], text: str) -> Check:
    lines = _prose_lines(text)
    last = lines[-1] if lines else ""
    return Check("ends_with_question", last.endswith("?"),
                 "ends with a question" if last.endswith("?") else f"last line: {last[-60:]!r}")


def check_starts_with(spec: dict[str, Any], text: str) -> Check:
    lines = _prose_lines(text)
    first = lines[0] if lines else ""
    ok = first.lower().startswith(spec["text"].strip().lower())
    return Check("starts_with", ok, f"starts with {spec['text']!r}" if ok else f"first line: {first[:60]!r}")


CHECKS: dict[str, Callable[[dict[str, Any], str], Check]] = {
    "bullets": check_bullets, "numbered_steps": check_numbered_steps, "heading_count": check_heading_count,
    "mentions": check_mentions, "no_word": check_no_word, "max_words": check_max_words,
    "min_words": check_min_words, "python_block_parses": check_python_block_parses,
    "ends_with_question": check_ends_with_question, "starts_with": check_starts_with,
}
COUNTED = ("bullets", "numbered_steps", "heading_count")


# ------------------------------------------------------------------------------------------- API


def validate(spec: Any) -> str | None:
    """Why this requirement is malformed, or None: task files are checked when loaded, not mid-run."""
    if not isinstance(spec, dict) or spec.get("kind") not in CHECKS:
        return f"unknown requirement {spec!r} (kinds: {', '.join(CHECKS)})"
    kind = spec["kind"]
    if kind in COUNTED and not any(isinstance(spec.get(k), int) for k in COUNT_KEYS):
        return f"{kind} needs an integer 'exactly', 'min' or 'max'"
    if kind in ("max_words", "min_words") and not isinstance(spec.get("n"), int):
        return f"{kind} needs an integer 'n'"
    if kind == "mentions" and not (spec.get("all") or spec.get("any")):
        return "mentions needs a list 'all' and/or 'any'"
    if kind == "no_word" and not spec.get("words"):
        return "no_word needs a list 'words'"
    if kind == "starts_with" and not str(spec.get("text") or "").strip():
        return "starts_with needs a 'text'"
    return None


def check(spec: dict[str, Any], text: str | None) -> Check:
    """One requirement against the answer; no answer meets nothing."""
    if text is None or not text.strip():
        return Check(spec["kind"], False, "no answer")
    return CHECKS[spec["kind"]](spec, text)


def check_all(requirements: list[dict[str, Any]] | tuple[dict[str, Any], ...], text: str | None) -> list[Check]:
    return [check(spec, text) for spec in requirements]


def requirement_fields(requirements, text: str | None) -> dict[str, Any]:
    """The keys a task record gets for its requirements (none when the task has none)."""
    if not requirements:
        return {}
    checks = check_all(requirements, text)
    return {"requirements": [asdict(c) for c in checks],
            "requirements_met": sum(c.met for c in checks),
            "requirements_total": len(checks)}
