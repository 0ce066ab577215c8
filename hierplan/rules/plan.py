"""A plan's size, from the task's words: a question one program answers is one Python step, and one piece of
writing is one step, however many steps the planner would write for them.

The planner is told both (prompts.PLANNER_SYSTEM) and shown one-step examples, yet the embedded 1.5B model still
splits some word problems into 2-5 steps, a program each, and some stories or letters into 5-8 sections, each
written in full before the answer writes the piece again. Split, a question's parts lose values between the
programs, the last program often prints a part of the answer instead of the answer, and every extra step costs a
model call (docs/eval.md: "Plans sized to the task"). So:

1. ``step_bound``, before planning: a task one step does gets a plan grammar of exactly one step (the planner
   writes its goal, assumptions and that step's instruction; schema.OneStepDraftPlan). That is a task, with none
   of the user's files and no registered tools, that
   a. asks for a quantity (rules.kind: numeric) and asks it once (at most one question mark), or
   b. asks for one piece of writing ("write a story ...", "compose a poem ...": a verb of writing and a kind of
      piece, PIECE_RE) and names no task with parts (a plan, a checklist, a proposal ...: PARTS_RE).
   Anything else may have up to MAX_STEPS steps, as the planner decides.
2. ``one_program``, after the tools are chosen (for plans no grammar bounded: a server without structured output,
   the text retry): a first plan that splits a question of 1a over several steps becomes one Python step, when
   none of its steps calls a registered tool, no step's tool was set before (by a person's edit or an earlier
   decision) and at least one computes. The one step keeps the instructions of the steps that work (not of those
   that only present the answer) in order, as the outline of its program ("In one program: ... Then: ..."), and
   the last Python step's title and expected output.

Only the task's and the plan's words and the run's facts are read: nothing here knows any data set.
"""

from __future__ import annotations

import re
from typing import Any, Collection

from hierplan.config import MAX_INSTRUCTION_CHARS, MAX_STEPS
from hierplan.rules.kind import NUMERIC, TaskKind

# Kinds of one piece of writing (the planner's own list, prompts.PLANNER_SYSTEM, and their near kin).
PIECES = (r"(?:cover\s+)?letter|e-?mail|note|memo|message|essay|(?:short\s+)?story|poem|haiku|limerick|sonnet|song|"
          r"rap|jingle|lyrics|(?:blog\s+)?post|tweet|article|ad|advertisement|slogan|tagline|riddle|joke|speech|"
          r"review|summary|description|bio|biography|pitch|toast|eulogy|paragraph|headline|caption|announcement|"
          r"invitation|dialogue")
# "Write a short story ...", "Compose me a 300+ word essay ...": a verb of writing, then one piece of a kind.
PIECE_RE = re.compile(r"\b(?:write|compose|draft|create|generate|give\s+me|come\s+up\s+with)\s+(?:me\s+|us\s+)?"
                      r"(?:a|an|one|the)\s+(?:[\w'+-]+\s+){0,5}?(?:" + PIECES + r")\b", re.I)
# A task with distinct parts, which may take several steps even where it also asks for a piece of writing.
PARTS_RE = re.compile(r"\b(?:plans?|planning|checklists?|proposals?|roadmaps?|strateg(?:y|ies)|itinerar(?:y|ies)|"
                      r"schedules?|curricul(?:um|a)|guide|outline|projects?|steps|phases)\b", re.I)

ONE_PROGRAM_PREFIX = "In one program: "
ONE_PROGRAM_JOIN = " Then: "
ONE_PROGRAM_REASON = ("the task asks one question: its {n} planned steps run as one program (split, a question's "
                      "parts lose values between programs)")
BUILTIN = frozenset({"python", "llm", "none"})


def asks_once(task: str) -> bool:
    """At most one question mark: the task asks one question (1a)."""
    return task.count("?") <= 1


def one_piece(task: str) -> bool:
    """The task asks for one piece of writing and names no task with parts (1b)."""
    return bool(PIECE_RE.search(task)) and not PARTS_RE.search(task)


def step_bound(kind: TaskKind, task: str, files: Collection[str] = (), tools: Collection[str] = ()) -> int:
    """How many steps the planner may write for this task (rule 1): 1 for a task one step does, else MAX_STEPS.
    ``files``: the user's files the run has; ``tools``: the registered tools' names."""
    if files or tools:
        return MAX_STEPS
    one = asks_once(task) if kind == NUMERIC else one_piece(task)
    return 1 if one else MAX_STEPS


def one_program(plan: dict[str, Any], kind: TaskKind, task: str, files: Collection[str] = (),
                decided: Collection[int] = ()) -> dict[str, Any]:
    """The plan as one Python step when rule 2 applies (a new dict), else ``plan`` itself.

    ``plan``: after the tool rule (rules.tools.choose_tools), every step with its tool. ``files``: the user's
    files the run has. ``decided``: ids of steps whose tool was set before the tool rule ran (a person's edit, an
    earlier decision): any of them leaves the plan as it is."""
    steps = plan.get("steps") or []
    if (kind != NUMERIC or files or len(steps) < 2 or not asks_once(task) or decided
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
