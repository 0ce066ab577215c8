"""A plan's size: a question one program answers is one Python step, however many steps the planner wrote for it.

The planner is told so (prompts.PLANNER_SYSTEM) and shown one-program examples, yet the embedded 1.5B model still
splits some word problems into 2-5 steps, a program each. Split, a question's parts lose values between the
programs and the last program often prints a part of the answer instead of the answer (docs/eval.md: "Plans sized
to the task"); each extra program also costs a model call. So, after the tools are chosen, a plan is made one
Python step when all of these hold:

- the task asks for a quantity (rules.kind: numeric) and asks it once (at most one question mark);
- the run has none of the user's files and no step calls a registered tool (those steps read or fetch what a
  program cannot know from the task's words);
- it is the first plan (no step ran yet) and no step's tool was set before (by a person's edit or an earlier
  decision), and it has more than one step, at least one of them a Python step.

The one step keeps the instructions of the steps that work (not of those that only present the answer) in order,
as the outline of its program ("In one program: ... Then: ..."), and the last Python step's title and expected
output. Only the plan's words and the run's facts are read:
nothing here knows any data set.
"""

from __future__ import annotations

from typing import Any, Collection

from hierplan.config import MAX_INSTRUCTION_CHARS
from hierplan.rules.kind import NUMERIC, TaskKind

ONE_PROGRAM_PREFIX = "In one program: "
ONE_PROGRAM_JOIN = " Then: "
ONE_PROGRAM_REASON = ("the task asks one question: its {n} planned steps run as one program (split, a question's "
                      "parts lose values between programs)")
BUILTIN = frozenset({"python", "llm", "none"})


def one_program(plan: dict[str, Any], kind: TaskKind, task: str, files: Collection[str] = (),
                decided: Collection[int] = ()) -> dict[str, Any]:
    """The plan as one Python step when the rule above applies (a new dict), else ``plan`` itself.

    ``plan``: after the tool rule (rules.tools.choose_tools), every step with its tool. ``files``: the user's
    files the run has. ``decided``: ids of steps whose tool was set before the tool rule ran (a person's edit, an
    earlier decision): any of them leaves the plan as it is."""
    steps = plan.get("steps") or []
    if (kind != NUMERIC or files or len(steps) < 2 or task.count("?") > 1 or decided
            or any(s.get("tool") not in BUILTIN for s in steps)):
        return plan
    programs = [s for s in steps if s["tool"] == "python"]
    if not programs:
        return plan
    # a step with tool "none" only presents the answer (rules.tools rule 2): the stated answer does that
    parts = [_sentence(s.get("instruction") or s.get("title") or "") for s in steps if s["tool"] != "none"]
    instruction = _cut(ONE_PROGRAM_PREFIX + ONE_PROGRAM_JOIN.join(p for p in parts if p))
    last = programs[-1]
    merged = {"id": 1, "title": last.get("title") or "Compute the answer", "instruction": instruction,
              "tool": "python", "expected_output": last.get("expected_output") or "", "depends_on": [],
              "tool_reason": ONE_PROGRAM_REASON.format(n=len(steps))}
    return {**plan, "steps": [merged]}


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip()
    if ONE_PROGRAM_PREFIX.strip().lower() in text[:len(ONE_PROGRAM_PREFIX)].lower():
        text = text[len(ONE_PROGRAM_PREFIX):].lstrip()
    return text if not text or text[-1] in ".!?" else text + "."


def _cut(text: str) -> str:
    """At most MAX_INSTRUCTION_CHARS (the plan schema's instruction limit), cut at a word."""
    if len(text) <= MAX_INSTRUCTION_CHARS:
        return text
    return text[:MAX_INSTRUCTION_CHARS - 1].rsplit(" ", 1)[0] + "\u2026"
