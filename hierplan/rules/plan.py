"""A plan's size, from the task's words: a question one program answers is one Python step, and a reply that is
one piece of writing (a story, a letter, an answer to a question, an explanation) is one step, however many steps
the planner would write for them; a deliverable with distinct parts (a plan, a checklist, a proposal) gets the
steps the planner gives it.

The planner is told so (prompts.PLANNER_SYSTEM) and shown one-step examples, yet the embedded 1.5B model still
splits some word problems into 2-5 steps, a program each, and stories, letters and answers to a question into
3-8 sections, each written in full before the answer writes the piece again, at several times the model alone's
time for no better answer (docs/eval.md). Split, a question's parts lose values between the
programs, the last program often prints a part of the answer instead of the answer, and every extra step costs a
model call (docs/eval.md: "Plans sized to the task"). So:

1. ``plan_size``, before planning: a task one step does gets a plan of exactly one step, written by rule
   (``whole_task_plan``), without a model call. That is a task with no registered tools that, with none of the
   user's files,
   a. asks for a quantity (rules.kind: numeric) and asks one thing (``asks``: one question or one request
      sentence, none joined by "and how ..."): one Python step for the whole task. Asked of the model, that
      plan's goal and outline cost about one program's time, and the outline made the step's program worse: it
      named a part of the way, and the program printed that part (docs/eval.md); or
   b. asks for no quantity (rules.kind: writing): its reply is one piece of writing, which the final answer
      writes; the plan's assumptions carry the requirements read from the task (nodes.read_requirements). That
      holds for a deliverable with parts too (a plan, a checklist, a proposal, an itinerary, a guide, steps ...:
      PARTS_RE), unless the run's ``split_writing`` lets the planner split it into steps: on the embedded model,
      an itinerary or a plan written step by step and then put together read worse than one written at once,
      in blind readings, at several times its time (docs/eval.md);
   or, with the user's files,
   c. asks for a quantity (rules.kind: a question about the files is numeric unless it asks for a piece of
      writing): one program that reads the files answers it, whatever steps the task lists (they are that
      program's steps: planned as steps, the last ones wrote the answer without the format the task asked for).
   Anything else is planned by the model, with up to MAX_STEPS steps. The reason for the size is recorded in the
   step's tool_reason (a rule plan) or the run's plan_reason.
2. ``one_program``, after the tools are chosen (in a graph with registered tools, where the planner plans a
   numeric question asked once too): a first plan that splits such a question over several steps becomes one
   Python step, when none of its steps calls a registered tool, no step's tool was set before (by a person's edit
   or an earlier decision) and at least one computes. The one step keeps the instructions of the steps that work
   (not of those that only present the answer) in order, as the outline of its program ("In one program: ...
   Then: ..."), and the last Python step's title and expected output.
3. ``whole_task_step``, when the step's program is asked for: the one Python step of a numeric plan does the
   whole task, so its program is asked for as the check's whole-task program is (nodes.python_step): with the
   step prompt, the program followed an instruction that named a part of the way and printed that part. A plan
   the model wrote (two questions planned as one step, a graph with registered tools) or a person edited adds
   its step's instruction as the plan's outline (``plan_outline``); rule 1a's instruction adds nothing, so the
   step's request of a rule plan is the check's.

Only the task's and the plan's words and the run's facts are read: nothing here knows any data set.
"""

from __future__ import annotations

import re
from typing import Any, Collection

from hierplan.config import BUILTIN_TOOLS, MAX_GOAL_CHARS, MAX_INSTRUCTION_CHARS, MAX_STEPS
from hierplan.rules.checklist import describe
from hierplan.rules.kind import NUMERIC, TaskKind

# A deliverable with distinct parts: a writing task naming one may take several steps.
PARTS_RE = re.compile(r"\b(?:plans?|planning|checklists?|proposals?|roadmaps?|strateg(?:y|ies)|itinerar(?:y|ies)|"
                      r"schedules?|agendas?|timelines?|curricul(?:um|a)|guide|outline|projects?|steps|stages|phases)\b",
                      re.I)

ONE_PROGRAM_PREFIX = "In one program: "
# The plan rule 1a writes. Its goal is the task's question; its instruction says what the whole-task request asks,
# for a reader of the plan, and is not sent as the program's outline (rule 3, plan_outline).
WHOLE_TASK_TITLE = "Compute the answer"
WHOLE_TASK_INSTRUCTION = (ONE_PROGRAM_PREFIX + "the values the task gives, each computation in order, then the answer "
                          "to its question.")
WHOLE_TASK_EXPECTED = "The number the question asks for"
# The plan rule 1b writes for one piece of writing: its step is left to the final answer (tool "none").
PIECE_TITLE = "Write the reply"
PIECE_INSTRUCTION = "Write the piece the task asks for, meeting every requirement the task states."
PIECE_EXPECTED = "The finished reply"
MAX_RULE_ASSUMPTIONS = 6
MAX_ASSUMPTION_CHARS = 200
RULE_SOURCE = "rule"
"""The plan_source of a plan rule 1a wrote (schema.PlanSource)."""
# A sentence ends at ".", "!" or "?" followed by a space and a capital (or a quote): not inside 3.50, a URL's
# "?id=3" or after "e.g.".
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[])")
ONE_PROGRAM_JOIN = " Then: "
ONE_PROGRAM_REASON = ("the task asks one question: its {n} planned steps run as one program (split, a question's "
                      "parts lose values between programs)")


# A sentence that asks for something to be produced: a question, or a request that starts with one of these.
_REQUEST_RE = re.compile(r"^(?:please\s+|now\s+|also\s+|then\s+|and\s+)*(?:calculate|compute|find|determine|"
                         r"work\s+out|list|explain|describe|plot|draw|chart|compare|summari[sz]e|tabulate|write)\b",
                         re.I)
# A second question inside one sentence: "How much did she pay, and how much is left?"
_JOINED_ASK_RE = re.compile(r"\b(?:and|also|then)\s+(?:how|what|which|who|when|where|why)\b", re.I)


def asks(task: str) -> int:
    """How many things the task asks for: its questions and request sentences; a question joined to another
    in one sentence ("..., and how many ...?") counts twice."""
    count = 0
    for sentence in SENTENCE_END_RE.split(" ".join(task.split())):
        sentence = sentence.strip()
        if sentence.endswith("?") or _REQUEST_RE.match(sentence):
            count += 1 + len(_JOINED_ASK_RE.findall(sentence))
    return count


def asks_once(task: str) -> bool:
    """The task asks one thing (1a): at most one question or request, and at most one question mark."""
    return asks(task) <= 1 and task.count("?") <= 1


def one_reply(task: str) -> bool:
    """A writing task that names no deliverable with parts."""
    return not PARTS_RE.search(task)


def plan_size(kind: TaskKind, task: str, files: Collection[str] = (), tools: Collection[str] = (),
              split_writing: bool = False) -> tuple[int, str]:
    """(how many steps the plan may have, why) for this task (rule 1): 1 for a task one step does, else
    MAX_STEPS. ``files``: the user's files the run has; ``tools``: the registered tools' names;
    ``split_writing``: the run lets the planner split a piece of writing with parts into steps."""
    if tools:
        return MAX_STEPS, "the run has registered tools: the planner decides which steps use them"
    if files:
        if kind == NUMERIC:  # steps the task lists are one program's steps: a plan's later steps lost its format
            return 1, "a question about the user's files: one program answers it from them, and another checks it"
        return MAX_STEPS, "the run has the user's files and asks for a piece of writing: the planner decides the steps"
    if kind == NUMERIC:
        if asks_once(task):
            return 1, "the task asks one thing: one program computes it"
        return MAX_STEPS, f"the task asks {asks(task)} things: the planner may give each its step"
    if m := PARTS_RE.search(task):
        if split_writing:
            return MAX_STEPS, f"the task names a deliverable with parts ({m.group(0)!r}): the planner decides them"
        return 1, (f"the task names a deliverable with parts ({m.group(0)!r}): one piece, which the final answer "
                   f"writes, parts and all")
    return 1, "the task asks for one piece of writing: the final answer writes it"


def step_bound(kind: TaskKind, task: str, files: Collection[str] = (), tools: Collection[str] = (),
               split_writing: bool = False) -> int:
    """How many steps the planner may write for this task (plan_size)."""
    return plan_size(kind, task, files, tools, split_writing)[0]


def planned_by_rule(kind: TaskKind, task: str, files: Collection[str] = (), tools: Collection[str] = (),
                    split_writing: bool = False) -> bool:
    """Rule 1: the plan is ``whole_task_plan``'s, not the planner's: a task of one step."""
    return step_bound(kind, task, files, tools, split_writing) == 1


def whole_task_plan(task: str, kind: TaskKind = NUMERIC, requirements: list[dict[str, Any]] | None = None,
                    files: Collection[str] = (), split_writing: bool = False) -> dict[str, Any]:
    """The plan of a task one step does (rule 1), a Plan's dict as the planner's are stored. A numeric task
    (1a): its goal is the task's question (else its last sentence), its one step a Python program for the
    whole task. A piece of writing (1b): its goal is the task's first sentence, its one step left to the final
    answer, the requirements read from the task (nodes.read_requirements) its assumptions, in plain words.
    ``files``: the names of the user's files the run has."""
    reason = plan_size(kind, task, files, split_writing=split_writing)[1] + " (rules.plan rule 1)"
    if kind == NUMERIC:
        return {"goal": _cut(question_of(task), MAX_GOAL_CHARS), "assumptions": [],
                "steps": [{"id": 1, "title": WHOLE_TASK_TITLE, "instruction": WHOLE_TASK_INSTRUCTION,
                           "tool": "python", "expected_output": WHOLE_TASK_EXPECTED, "depends_on": [],
                           "tool_reason": reason}]}
    sentences = [s for s in SENTENCE_END_RE.split(" ".join(task.split())) if s.strip(" .!?")]
    wanted = [_cut("Requirement: " + describe(r), MAX_ASSUMPTION_CHARS) for r in requirements or []]
    return {"goal": _cut(sentences[0] if sentences else PIECE_EXPECTED, MAX_GOAL_CHARS),
            "assumptions": wanted[:MAX_RULE_ASSUMPTIONS],
            "steps": [{"id": 1, "title": PIECE_TITLE, "instruction": PIECE_INSTRUCTION, "tool": "none",
                       "expected_output": PIECE_EXPECTED, "depends_on": [], "tool_reason": reason}]}


def question_of(task: str) -> str:
    """The task's question: its last sentence ending in "?", else its last sentence, else "The task's answer"."""
    sentences = [s for s in SENTENCE_END_RE.split(" ".join(task.split())) if s.strip(" .!?")]
    questions = [s for s in sentences if s.endswith("?")]
    return (questions or sentences or ["The task's answer"])[-1]


def one_program(plan: dict[str, Any], kind: TaskKind, task: str, files: Collection[str] = (),
                decided: Collection[int] = ()) -> dict[str, Any]:
    """The plan as one Python step when rule 2 applies (a new dict), else ``plan`` itself.

    ``plan``: after the tool rule (rules.tools.choose_tools), every step with its tool. ``files``: the user's
    files the run has. ``decided``: ids of steps whose tool was set before the tool rule ran (a person's edit, an
    earlier decision): any of them leaves the plan as it is."""
    steps = plan.get("steps") or []
    if (kind != NUMERIC or files or len(steps) < 2 or not asks_once(task) or decided
            or any(s.get("tool") not in BUILTIN_TOOLS for s in steps)):
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


def whole_task_step(kind: TaskKind, plan: dict[str, Any], files: Collection[str] = ()) -> bool:
    """Rule 3: the plan is one Python step of a numeric task: it does the whole task (with the user's files, if
    the run has them), asked for as the check is."""
    steps = plan.get("steps") or []
    return kind == NUMERIC and len(steps) == 1 and steps[0].get("tool") == "python"


def plan_outline(step: dict[str, Any]) -> str | None:
    """Rule 3's outline for the program of a whole-task step: the step's instruction, unless it is rule 1a's
    (WHOLE_TASK_INSTRUCTION, in a rule plan or an edit that kept it), which says nothing the whole-task request
    does not. Sent after the task, that instruction made the program worse (it named a part of the way, and the
    program printed that part; bench/notes/eval-notebook.md). Without it the step's request is the check's."""
    instruction = step.get("instruction") or ""
    return None if instruction in ("", WHOLE_TASK_INSTRUCTION) else instruction


def _sentence(text: str) -> str:
    """One step's instruction as a sentence of the outline, without a "In one program:" of its own."""
    text = " ".join(text.split())
    prefix = ONE_PROGRAM_PREFIX.strip()
    if text.lower().startswith(prefix.lower()):
        text = text[len(prefix):].lstrip()
    return text if not text or text[-1] in ".!?" else text + "."


def _cut(text: str, limit: int = MAX_INSTRUCTION_CHARS) -> str:
    """At most ``limit`` characters (the plan schema's limit for the field), cut at a word."""
    if len(text) <= limit:
        return text
    return text[:limit - 1].rsplit(" ", 1)[0] + "\u2026"
