"""Evaluation tasks: one JSON object per line with ``question`` and, optionally, ``answer`` (GSM8K form)
and/or ``requirements`` (checkable requirements of a writing task: hierplan.eval.requirements)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from hierplan.errors import UsageError
from hierplan.eval.requirements import validate
from hierplan.eval.scoring import NUMBER_RE, parse_number

GSM8K_MARKER = "####"


@dataclass(frozen=True)
class EvalTask:
    index: int
    """1-based position in the file (blank lines are not counted)."""
    question: str
    answer: str | None = None
    """The reference answer as given (a GSM8K worked solution, or a bare number)."""
    expected: str | None = None
    """The number the final answer must end with; None when the task has no usable answer."""
    requirements: tuple[dict, ...] = field(default=(), compare=False)
    """Checkable requirements of the answer (writing tasks); empty for numeric tasks."""


def parse_gsm8k_answer(answer: str | int | float | None) -> str | None:
    """The final number of a GSM8K answer: the first number after the last ``####``, commas removed.

    A bare number (no ``####``) is taken as the answer itself; anything else gives None.
    """
    if answer is None or isinstance(answer, bool):
        return None
    if isinstance(answer, (int, float)):
        return _canonical(str(answer))
    text = str(answer)
    if GSM8K_MARKER in text:
        tail = text.rsplit(GSM8K_MARKER, 1)[1]
        match = NUMBER_RE.search(tail)
        return _canonical(match.group(0)) if match else None
    stripped = text.strip()
    match = NUMBER_RE.fullmatch(stripped)
    return _canonical(match.group(0)) if match else None


def _canonical(text: str) -> str | None:
    value = parse_number(text)
    if value is None:
        return None
    return format(value.normalize(), "f") if value != value.to_integral_value() else str(int(value))


def load_tasks(path: str | Path, limit: int | None = None) -> list[EvalTask]:
    """Read tasks from a JSONL file; errors name the file and line. ``limit``: the first N tasks only."""
    path = Path(path)
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, got {limit}")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise UsageError(f"no tasks file {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read tasks file {path}: {exc}") from None
    tasks: list[EvalTask] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise UsageError(f"{path}:{lineno}: expected a JSON object")
        question = obj.get("question")
        if not isinstance(question, str) or not question.strip():
            raise UsageError(f"{path}:{lineno}: missing or empty \"question\"")
        answer = obj.get("answer")
        requirements = obj.get("requirements") or []
        if not isinstance(requirements, list):
            raise UsageError(f"{path}:{lineno}: \"requirements\" must be a list")
        # A malformed requirement is a usage error now, not a crash an hour into the evaluation.
        problem = next(filter(None, map(validate, requirements)), None)
        if problem:
            raise UsageError(f"{path}:{lineno}: {problem}")
        tasks.append(EvalTask(index=len(tasks) + 1, question=question.strip(),
                              answer=None if answer is None else str(answer),
                              expected=parse_gsm8k_answer(answer), requirements=tuple(requirements)))
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise UsageError(f"{path}: no tasks")
    return tasks
