"""Evaluation tasks: one JSON object per line with ``question`` and, optionally, ``answer`` (GSM8K form) or
``answer_text`` (a name the answer must state) or ``answers`` (named answers, ``[[name, value], ...]``, that the
task's format asks for as ``@name[value]``: scoring.score_named), ``requirements`` (checkable requirements of a writing task:
hierplan.eval.requirements), ``files`` (the user's files the run gets, as ``hierplan run --file`` gives them;
paths relative to the tasks file's folder) and ``needs_tools`` (the registered tools a right answer needs: a
record says whether the run called them)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

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
    expected_text: str | None = None
    """A name the final answer must state (``answer_text``; scoring.score_text), instead of a number."""
    files: tuple[dict, ...] = field(default=(), compare=False)
    """The user's files the run gets (graph.state.FileDict records, read and checked when the tasks are loaded)."""
    needs_tools: tuple[str, ...] = ()
    """The registered tools a right answer needs (informational: the graph is offered every --mcp tool)."""
    named: tuple[tuple[str, str], ...] = ()
    """Named answers (``answers``): the task is right when every name's value is (scoring.score_named)."""

    @property
    def expected_answer(self) -> str | None:
        """What a record shows as expected: the named answers, the name (``answer_text``), else the number."""
        if self.named:
            return "; ".join(f"@{n}[{v}]" for n, v in self.named)
        return self.expected_text if self.expected_text is not None else self.expected

    def without_files(self) -> "EvalTask":
        """The task without its files (``eval --withhold``: the control run)."""
        return replace(self, files=())


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


def load_tasks(path: str | Path, limit: int | None = None, store: Any = None) -> list[EvalTask]:
    """Read tasks from a JSONL file; errors name the file and line. ``limit``: the first N tasks only. ``store``:
    the file store the tasks' files are copied into (hierplan.store.open_file_store of the run database; default
    this process's), which every graph that runs them must read."""
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
        answer_text = obj.get("answer_text")
        if answer_text is not None and (not isinstance(answer_text, str) or not answer_text.strip()):
            raise UsageError(f"{path}:{lineno}: \"answer_text\" must be a non-empty string")
        named = obj.get("answers")
        if named is not None and not (isinstance(named, list) and named and all(
                isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and a[0] and isinstance(a[1], str)
                for a in named)):
            raise UsageError(f"{path}:{lineno}: \"answers\" must be a list of [name, value] pairs of strings")
        if sum(x is not None for x in (answer, answer_text, named)) > 1:
            raise UsageError(f"{path}:{lineno}: give one of \"answer\" (a number), \"answer_text\" or "
                             f"\"answers\"")
        needs_tools = obj.get("needs_tools") or []
        if not isinstance(needs_tools, list) or not all(isinstance(t, str) and t for t in needs_tools):
            raise UsageError(f"{path}:{lineno}: \"needs_tools\" must be a list of tool names")
        requirements = obj.get("requirements") or []
        if not isinstance(requirements, list):
            raise UsageError(f"{path}:{lineno}: \"requirements\" must be a list")
        # A malformed requirement is a usage error now, not a crash an hour into the evaluation.
        problem = next(filter(None, map(validate, requirements)), None)
        if problem:
            raise UsageError(f"{path}:{lineno}: {problem}")
        files = task_files(path, lineno, obj.get("files"), store)
        tasks.append(EvalTask(index=len(tasks) + 1, question=question.strip(),
                              answer=None if answer is None else str(answer),
                              expected=parse_gsm8k_answer(answer), requirements=tuple(requirements),
                              expected_text=None if answer_text is None else answer_text.strip(),
                              files=tuple(files), needs_tools=tuple(needs_tools),
                              named=tuple((n, v) for n, v in named or ())))
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise UsageError(f"{path}: no tasks")
    return tasks


def task_files(path: Path, lineno: int, given: Any, store: Any = None) -> list[dict]:
    """A task line's ``files`` (paths relative to the tasks file's folder) read and checked as ``hierplan run
    --file`` reads them (hierplan.tools.files.load_files): a missing, unreadable or too large file is a
    UsageError naming the line, before any model loads."""
    if given is None:
        return []
    if not isinstance(given, list) or not all(isinstance(f, str) and f.strip() for f in given):
        raise UsageError(f"{path}:{lineno}: \"files\" must be a list of paths")
    resolved = [path.parent / os.path.expanduser(f) for f in given]
    for name, full in zip(given, resolved):
        if not full.exists():
            raise UsageError(f"{path}:{lineno}: file {name}: no such file (looked for {full})")
    from hierplan.tools.files import load_files  # the sandbox package comes with it: only for tasks with files

    try:
        return load_files(resolved, store)
    except UsageError as exc:
        raise UsageError(f"{path}:{lineno}: {exc}") from None
