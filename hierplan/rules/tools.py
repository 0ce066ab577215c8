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
   A numeric task whose plan calls a registered tool and has no Python step gets one more step, a Python step
   after all the others that computes the answer from their results, when the task gives numbers of its own or
   the run has files: a tool's result is a fact, and the task's arithmetic on it ("ship 12 kg at our rate") or
   on the files is a program's job. (Offered a worked plan with a tool call and a computation, the embedded
   model added made-up computations to questions a lookup answers; offered only a lookup, it planned the lookup
   alone for questions that compute on it.)
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
the rule only chooses among python, llm and none, and rule 3 only picks among those steps. One exception:

7. A step that names a registered tool is checked against its own words and the task's, since a small model
   offered several tools often names the first or the last one offered, whatever the step is for, and then
   writes the step to fit the tool it named:
   a. in a run with files, a step whose words name one of the user's files and not the tool goes to Python
      (rule 5: the file is read by a program; "Read the rainfall of March from rain.csv" is no tool's job);
   b. a step whose words name another tool (every word of its name: "Get the weather forecast" names
      weather_forecast) and not its own gets that tool (several: the one whose name and description share the
      most words with the step; a tie changes nothing);
   c. a step whose tool's name shares no word with the task, in a task whose words name part of another tool's
      name, gets that tool (several: the largest share of its name, then of its description, in the task; a tie
      changes nothing), unless another step of the plan names it already.
   Words match in their simple forms, by a general English suffix stripper ("forecasts" names forecast,
   "translated" translator: see stem).
"""

from __future__ import annotations

import re
from typing import Any, Collection, Mapping

from hierplan.rules.kind import NUMBER_RE, NUMERIC, TaskKind
from hierplan.config import MAX_STEPS

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
NAMED_BY_WORDS_REASON = "the step's words name the registered tool {tool} ({words}), not {planned}"
NAMED_BY_TASK_REASON = "the task's words name the registered tool {tool} ({words}), none of {planned}"
COMPUTE_AFTER_TOOLS_REASON = ("the task asks for a quantity and gives {what}, and no step computed it: a program "
                              "computes the answer from the tools' results")
COMPUTE_AFTER_TOOLS_STEP = {"title": "Compute the answer",
                            "instruction": "In one program: the answer to the task's question, from the task and the "
                                           "results of the steps before.",
                            "tool": "python", "expected_output": "The answer"}
FILE_NOT_TOOL_REASON = "reads the user's file {which}, which no tool reads: a Python step opens it at ./data"
# Words of a tool's description that say nothing about which tool it is.
DESCRIPTION_STOPWORDS = frozenset(
    "a an and any are as at be by can do does for from get gets given has have how in into is it its of on one or "
    "our the their them then this to use used uses we what when which who with you your".split())
WORD_RE = re.compile(r"[a-z0-9]+")
# Rule 7's word forms (see stem): a plural or third-person -s, then -ing or -ed, then an agent's -er or -or, then
# -ion after t or s; a final e, y or i is dropped, and a doubled final consonant undoubled after a cut.
_VOWEL_RE = re.compile(r"[aeiouy]")


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


def named_file(step: dict[str, Any], files: Collection[str]) -> str | None:
    """The first of the user's ``files`` the step names (its name, or its name without the extension), else None."""
    text = _text(step)
    for name in files:
        base = name.rsplit(".", 1)[0]
        if name.lower() in text.lower() or (len(base) > 2 and re.search(rf"\b{re.escape(base)}\b", text, re.I)):
            return name
    return None


def reads_files(step: dict[str, Any], files: Collection[str]) -> str | None:
    """Rule 5: what in the step says it reads the user's ``files`` (a file's name, or a word such as csv), else
    None; always None without files."""
    if not files:
        return None
    if name := named_file(step, files):
        return name
    match = FILE_WORDS_RE.search(_text(step))
    return f"'{match.group(0)}'" if match else None


def _words(text: str) -> list[str]:
    """Lower-case words; a name's parts too (weather_forecast, weatherForecast and weather-forecast are weather,
    forecast)."""
    return WORD_RE.findall(re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower())


def stem(word: str) -> str:
    """A word's simple form, so that the forms of one word meet: "forecasts", "forecasting" and "forecast" are
    forecast; "books", "booked", "booking" and "booker" are book; "translate", "translating", "translator" and
    "translation" are translat; "deliveries", "delivery" and "delivering" are deliv. A general suffix stripper
    in the manner of the Porter stemmer, not a dictionary: two different words may meet ("number" and "numb"),
    which rule 7 tolerates since it only compares a step's words with a few tool names."""
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and len(word) > 3 and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        rest = word[: -len(suffix)]
        if word.endswith(suffix) and len(rest) >= 2 and _VOWEL_RE.search(rest) and not word.endswith("eed"):
            word = _undouble(rest)
            break
    word = _drop_final_vowel(word)
    for suffix in ("er", "or"):
        if word.endswith(suffix) and len(word) - 2 >= 3:
            word = _undouble(word[:-2])
            break
    if word.endswith(("tion", "sion")) and len(word) - 3 >= 5:
        word = word[:-3]
    return _drop_final_vowel(word)


def _undouble(word: str) -> str:
    """shipp -> ship, planning's plann -> plan; not "fall", "pass" or "buzz"."""
    return word[:-1] if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "aeioulsz" else word


def _drop_final_vowel(word: str) -> str:
    """rate -> rat (so rating and rate meet), supply -> suppl (so supplier and supply meet); short words kept."""
    if (len(word) > 2 and word.endswith("e")) or (len(word) > 3 and word.endswith(("y", "i"))):
        return word[:-1]
    return word


def _found(words: Collection[str], in_text: Collection[str]) -> list[str]:
    stems = {stem(t) for t in in_text}
    return [w for w in words if stem(w) in stems]


def tool_named_by_words(step: dict[str, Any], descriptions: dict[str, str]) -> tuple[str, list[str]] | None:
    """Rule 7b: the registered tool whose every name word is in the step (several: the one with the most name and
    description words in it; a tie: none), with those words; None when no tool's name is in the step's words."""
    text = set(_words(_text(step)))
    named = []
    for name, description in descriptions.items():
        parts = _words(name)
        if parts and len(_found(parts, text)) == len(parts):
            named.append((len(parts) + len(_found(_about(description), text)), name, parts))
    return _best(named)


def tool_named_by_task(task: str, descriptions: dict[str, str]) -> tuple[str, list[str]] | None:
    """Rule 7c: among the tools with a word of their name in the task, the one with the largest share of its name
    there, then of its description (a tie: none), with the words found."""
    text = set(_words(task))
    named = []
    for name, description in descriptions.items():
        parts = _words(name)
        found = _found(parts, text)
        if found:
            about = _about(description)
            share = (len(found) / len(parts), len(_found(about, text)) / max(1, len(about)))
            named.append((share, name, found))
    return _best(named)


def _about(description: str) -> list[str]:
    return [w for w in dict.fromkeys(_words(description)) if w not in DESCRIPTION_STOPWORDS]


def _best(named: list) -> tuple[str, list[str]] | None:
    if not named:
        return None
    named.sort(key=lambda n: n[0], reverse=True)
    if len(named) > 1 and named[0][0] == named[1][0]:
        return None
    return named[0][1], named[0][2]


def check_registered(step: dict[str, Any], steps: list[dict[str, Any]], descriptions: dict[str, str], task: str,
                     files: Collection[str]) -> tuple[str, str]:
    """Rule 7: (tool, reason) for a step that names a registered tool."""
    planned = step["tool"]
    own = {planned: descriptions[planned]}
    named_by_step = tool_named_by_words(step, own)
    if not named_by_step and (which := named_file(step, files)):
        return "python", FILE_NOT_TOOL_REASON.format(which=which)
    named = tool_named_by_words(step, descriptions)
    if named and named[0] != planned and not named_by_step:
        return named[0], NAMED_BY_WORDS_REASON.format(tool=named[0], words=", ".join(named[1]), planned=planned)
    if task and not _found(_words(planned), set(_words(task))):
        others = {s.get("tool") for s in steps if s is not step}
        named = tool_named_by_task(task, {n: d for n, d in descriptions.items() if n not in others})
        if named and named[0] != planned:
            return named[0], NAMED_BY_TASK_REASON.format(tool=named[0], words=", ".join(named[1]), planned=planned)
    return planned, REGISTERED_REASON.format(tool=planned)


def choose_tools(plan: dict[str, Any], kind: TaskKind, registered: Collection[str] | Mapping[str, str] = (),
                 files: Collection[str] = (), task: str = "") -> dict[str, Any]:
    """The plan with every undecided step's ``tool`` and ``tool_reason`` set by the rule (a new dict).

    Steps that already have a ``tool_reason`` keep their tool and reason; an undecided step that names one of
    the ``registered`` tools keeps its tool, with a reason saying so, unless its words name another (rule 7).
    ``registered``: the registered tools' names, or a mapping of each name to its description (rule 7 reads
    them). ``files``: the names of the user's files the run has (rule 5). ``task``: the task's words (rule 7c)."""
    descriptions = dict(registered) if isinstance(registered, Mapping) else {name: "" for name in registered}
    numeric = kind == NUMERIC
    steps = [dict(s) for s in plan.get("steps") or []]
    undecided = []
    for step in steps:
        if step.get("tool_reason"):
            continue
        if step.get("tool") in descriptions:
            step["tool"], step["tool_reason"] = check_registered(step, steps, descriptions, task, files)
            if step["tool"] == "python":
                undecided.append(step)
            continue
        undecided.append(step)
        step["tool"], step["tool_reason"] = decide(step, numeric)
        if step["tool"] == "llm" and (which := reads_files(step, files)):
            step["tool"], step["tool_reason"] = "python", FILE_REASON.format(which=which)
    computes = any(s["tool"] == "python" for s in steps)
    room = len(steps) < MAX_STEPS and max(s["id"] for s in steps) < MAX_STEPS
    if numeric and room and not computes and any(s["tool"] in descriptions for s in steps) and (
            files or NUMBER_RE.search(task)):
        what = "files" if files else "numbers"
        steps.append({"id": max(s["id"] for s in steps) + 1, **COMPUTE_AFTER_TOOLS_STEP,
                      "depends_on": [s["id"] for s in steps],
                      "tool_reason": COMPUTE_AFTER_TOOLS_REASON.format(what=what)})
    elif numeric and undecided and not computes:
        working = [s for s in undecided if not _presents(s)]
        pick = working[-1] if working else undecided[0]
        pick["tool"] = "python"
        pick["tool_reason"] = "the task asks for a quantity and no step calculated it"
    if not numeric and len(steps) == 1 and undecided and steps[0]["tool"] == "llm":
        steps[0]["tool"], steps[0]["tool_reason"] = "none", SINGLE_WRITING_REASON
    return {**plan, "steps": steps}
