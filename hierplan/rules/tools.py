"""Which tool a planned step uses: a documented rule over the plan and the task, applied after planning.

Small models pick ``llm`` for almost every step, calculations included, and the choice swings with the
sampling seed. So the tool is decided by what the step says, for any model:

1. The task's kind is decided once, before planning (hierplan.rules.kind): numeric or writing.
2. In a numeric task, a step whose instruction, title or expected output is a calculation (an arithmetic
   verb or noun such as add, multiply, total, difference, percent, cost, or an expression like ``3 * 4``)
   goes to Python, unless it only presents the result ("State the answer ...", "Write the final answer"
   with no expression in it): that step gets tool "none" and runs no model call, since the aggregator
   presents the result anyway (a presenting LLM step cost a call per task and, on the 1.5B model, sometimes
   restated a wrong number the aggregator then repeated).
3. A numeric task computes at least once: when no step qualifies, its last step that is not a presentation
   (else its first step) goes to Python.
4. In a task that asks for no quantity, a step goes to Python only when it asks for an explicit
   computation ("calculate", "compute", an arithmetic expression, "with Python") or for running code, or
   when the model chose Python for text processing (sort, count, parse, ...); every other step, whatever
   the model wrote, is an LLM step (writing, planning, explaining).
5. In a run with the user's files, a step that reads them (it names one of the files, or speaks of a CSV, JSON
   or spreadsheet, a file, its rows or columns) goes to Python, in either kind of task: a Python step opens the
   files at ./data, where an LLM step sees only a short preview of each.
6. In a task that asks for no quantity, a plan of one step that rule 4 made an LLM step is the reply itself:
   the step gets tool "none" and the aggregator writes the reply with the step's instruction as its note.
   Otherwise the step writes the piece and the aggregator writes it again, two calls for one text (the
   aggregator's is the one shown, checked against the task's instructions and revised).

The rule only reads the words of the plan and the task; it knows nothing of any data set. Each decided step
gets ``tool_reason``. Steps that already carry a reason (decided before, or set by a person's edited plan)
are left as they are, so a user can force a tool and a revision only decides its new steps.

A step that names a registered tool (one the graph was built with: a LangChain tool, an MCP server's) keeps it:
the rule only chooses among python, llm and none, and rule 3 only picks among those steps.
"""

from __future__ import annotations

import re
from typing import Any, Collection

from hierplan.rules.kind import NUMERIC, TaskKind

# A step that calculates: arithmetic verbs and nouns, or an expression written out.
CALCULATION_RE = re.compile(
    r"\b(?:add|adds|adding|added|plus|subtract\w*|minus|multipl\w*|divid\w*|times|sum|sums|total\w*|"
    r"calculat\w*|comput\w*|difference|product|quotient|percent\w*|average|ratio|how\s+many|how\s+much|"
    r"number\s+of|amount\s+of|cost\w*|price\w*|convert\w*|remain\w*|each|per|twice|double|half|square|"
    r"count|counting)\b"
    r"|\d\s*[-+*/x\u00d7\u00f7^]\s*\d|=",
    re.IGNORECASE)
# An explicit computation, enough for Python even in a task that asks for no quantity.
EXPLICIT_COMPUTATION_RE = re.compile(
    r"\b(?:calculate|compute)\b|\b(?:with|using|in)\s+python\b"
    r"|\b(?:run|execute)\s+(?:the\s+|a\s+|this\s+)?(?:python\s+)?(?:code|program|script)\b"
    # "-" and "/" only spaced: "3-4 sentences", "2024-05-01" and "1/2 cup" are not sums to work out.
    r"|\d\s*[+*\u00d7\u00f7^]\s*\d|\d\s+[-/]\s+\d",
    re.IGNORECASE)
# Text processing a program does better than a small model; enough when the model itself chose Python.
DATA_PROCESSING_RE = re.compile(
    r"\b(?:sort\w*|count\w*|revers\w*|pars\w*|regex|alphabeti\w*|frequenc\w*|occurrences?|duplicates?|"
    r"json|csv)\b", re.IGNORECASE)
# A step that only presents what earlier steps found: "State the change in one sentence."
PRESENTATION_RE = re.compile(
    r"^\s*(?:state|write|report|present|give|summari[sz]e|explain|describe|answer|phrase|format|restate|"
    r"conclude|communicate|tell|share|display|show|check|verify|review|double-check)\b",
    re.IGNORECASE)
EXPRESSION_RE = re.compile(r"\d\s*[-+*/x\u00d7\u00f7^]\s*\d")
# Rule 5: words of a step that reads the user's files (their names are matched besides).
FILE_WORDS_RE = re.compile(r"\b(?:csv|json|xlsx?|spreadsheet|files?|rows?|columns?)\b", re.IGNORECASE)
FILE_REASON = "reads the user's files ({which}): a Python step opens them at ./data (an LLM step sees only a preview)"
SINGLE_WRITING_REASON = "the plan's one writing step is the reply itself: the final answer writes it (no extra call)"
PRESENTS_REASON = "presents the result of earlier steps: the final answer does that (no model call)"
REGISTERED_REASON = "the plan names the registered tool {tool}"


def _text(step: dict[str, Any]) -> str:
    return " ".join(str(step.get(k) or "") for k in ("title", "instruction", "expected_output"))


def _presents(step: dict[str, Any]) -> bool:
    """Rule 2's exception: the instruction (or title) starts with a presenting verb and has no expression."""
    starts = PRESENTATION_RE.match(str(step.get("instruction") or "")) or PRESENTATION_RE.match(
        str(step.get("title") or ""))
    return bool(starts) and not EXPRESSION_RE.search(_text(step))


def decide(step: dict[str, Any], numeric: bool) -> tuple[str, str]:
    """(tool, reason) for one step by rules 2 and 4 (rule 3 looks at the whole plan: see choose_tools)."""
    text = _text(step)
    if numeric:
        if _presents(step):
            return "none", PRESENTS_REASON
        match = CALCULATION_RE.search(text)
        if match:
            return "python", f"calculation ('{match.group(0).strip()}') in a task that asks for a quantity"
        return "llm", "no calculation in this step"
    match = EXPLICIT_COMPUTATION_RE.search(text)
    if match:
        return "python", f"asks for an explicit computation ('{match.group(0).strip()}')"
    match = DATA_PROCESSING_RE.search(text)
    if match and step.get("tool") == "python":
        return "python", f"the model chose Python for text processing ('{match.group(0).strip()}')"
    return "llm", "writing or reasoning: the task asks for no quantity"


def reads_files(step: dict[str, Any], files: Collection[str]) -> str | None:
    """Rule 5: what in the step says it reads the user's ``files`` (a file's name, or a word such as csv), else
    None; always None without files."""
    if not files:
        return None
    text = _text(step)
    for name in files:
        stem = name.rsplit(".", 1)[0]
        if name.lower() in text.lower() or (len(stem) > 2 and re.search(rf"\b{re.escape(stem)}\b", text, re.I)):
            return name
    match = FILE_WORDS_RE.search(text)
    return f"'{match.group(0)}'" if match else None


def choose_tools(plan: dict[str, Any], kind: TaskKind, registered: Collection[str] = (),
                 files: Collection[str] = ()) -> dict[str, Any]:
    """The plan with every undecided step's ``tool`` and ``tool_reason`` set by the rule (a new dict).

    Steps that already have a ``tool_reason`` keep their tool and reason; an undecided step that names one of
    the ``registered`` tools keeps its tool, with a reason saying so. ``files``: the names of the user's files
    the run has (rule 5)."""
    numeric = kind == NUMERIC
    steps = [dict(s) for s in plan.get("steps") or []]
    undecided = []
    for step in steps:
        if step.get("tool_reason"):
            continue
        if step.get("tool") in registered:
            step["tool_reason"] = REGISTERED_REASON.format(tool=step["tool"])
            continue
        undecided.append(step)
        step["tool"], step["tool_reason"] = decide(step, numeric)
        if step["tool"] == "llm" and (which := reads_files(step, files)):
            step["tool"], step["tool_reason"] = "python", FILE_REASON.format(which=which)
    if numeric and undecided and not any(s["tool"] == "python" for s in steps):
        working = [s for s in undecided if not _presents(s)]
        pick = working[-1] if working else undecided[0]
        pick["tool"] = "python"
        pick["tool_reason"] = "the task asks for a quantity and no step calculated it"
    if not numeric and len(steps) == 1 and undecided and steps[0]["tool"] == "llm":
        steps[0]["tool"], steps[0]["tool_reason"] = "none", SINGLE_WRITING_REASON
    return {**plan, "steps": steps}
