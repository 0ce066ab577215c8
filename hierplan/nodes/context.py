"""What a node sees of the plan and earlier results."""

from __future__ import annotations

from typing import Any, Sequence

from langchain_core.messages import HumanMessage, SystemMessage

from hierplan.config import STEP_CONTEXT_CHARS, TOOL_DESCRIPTION_CHARS
from hierplan.graph.state import (AgentState, LlmStepsPayload, MemoryDict, PlanDict, ResultDict, StepDict,
                                  StepPayload, TurnDict)
from hierplan.nodes import prompts
from hierplan.rules.answer import computed_output
from hierplan.rules.conversation import shown_memories, shown_turns


def file_names(state: AgentState) -> list[str]:
    """The names of the user's files the run has (none: an empty list)."""
    return [f["name"] for f in state.get("files") or []]


def plain_messages(task: str) -> list:
    """The task alone, as a person asks a chat model: no plan, none of the checks' findings, no requirements
    listed (the draft of one piece of writing, and plain_answer)."""
    return [SystemMessage(prompts.PLAIN_SYSTEM), HumanMessage(task)]


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [...]"


def dependencies(step: StepDict, plan: PlanDict) -> list[int]:
    """The ids a step waits for: its depends_on, or every earlier step of the plan when unset (the
    sequential default; a revised plan may skip ids)."""
    wanted = step.get("depends_on")
    return [s["id"] for s in plan["steps"] if s["id"] < step["id"]] if wanted is None else wanted


def ready_steps(state: AgentState) -> list[StepDict]:
    """Steps without a result whose dependencies all have one (failed results count: the step ran)."""
    done = {r["step_id"] for r in state.get("results") or []}
    plan = state["plan"]
    return [s for s in plan["steps"] if s["id"] not in done and all(d in done for d in dependencies(s, plan))]


def prior_results(state: AgentState | StepPayload | LlmStepsPayload, step: StepDict) -> list[ResultDict]:
    """Results this step may use: those named in depends_on, or all earlier ones when it is unset."""
    wanted = set(dependencies(step, state["plan"]))
    return [r for r in state.get("results") or [] if r["step_id"] in wanted]


def earlier_programs(results: list[ResultDict], plan: PlanDict, step: StepDict) -> list[str]:
    """The code of the successful Python steps ``step`` builds on, directly or through other steps, in the
    order they finished (a step finishes after everything it depends on).

    A Python step's program runs after these, silently, in the same sandboxed interpreter
    (``run_python(code, before=...)``), so Python steps share names like a notebook's cells: ``cost``
    computed in step 1 exists in step 2. Why: the embedded model's failed Python steps were mostly
    NameErrors for a value an earlier Python step had computed under that very name
    (bench/notes/eval-notebook.md)."""
    by_id = {s["id"]: s for s in plan["steps"]}
    wanted: set[int] = set()
    todo = list(dependencies(step, plan))
    while todo:
        step_id = todo.pop()
        if step_id not in wanted:
            wanted.add(step_id)
            if step_id in by_id:
                todo += dependencies(by_id[step_id], plan)
    return [r["code"] for r in results if r["step_id"] in wanted and _successful_program(r)]


def _successful_program(result: ResultDict) -> bool:
    return bool(result["ok"] and result.get("tool") == "python" and result.get("code"))


def format_results(results: list[ResultDict], limit: int = STEP_CONTEXT_CHARS, programs: bool = False) -> str:
    """Each result's output, truncated to ``limit`` characters; failed steps are marked as such. With
    ``programs``, a successful Python step's program follows its output (a Python step's program runs after
    them: earlier_programs)."""
    lines = []
    for r in results:
        status = "" if r["ok"] else " (FAILED: do not rely on it)"
        line = f"Step {r['step_id']} - {r['title']}{status}:\n{truncate(r['output'], limit)}"
        if programs and _successful_program(r):
            line += prompts.EARLIER_PROGRAM.format(code=truncate(r["code"].strip(), limit))
        lines.append(line)
    return "\n\n".join(lines)


def aggregator_results(results: list[ResultDict], limit: int) -> str:
    """What the aggregator reads: successful computations first, each with its printed value, then the other
    steps' results, then the last computed value stated on its own (a small model copies the line it sees
    last); ``limit`` truncates each output."""
    computed = [r for r in results if r.get("tool") == "python" and r["ok"]]
    others = [r for r in results if r not in computed]
    parts = []
    if computed:
        parts.append(prompts.COMPUTED_HEADER + "\n".join(
            f"Step {r['step_id']} - {r['title']}: {truncate(computed_output(r).strip(), limit)}"
            for r in computed))
    if others:
        parts.append((prompts.OTHER_RESULTS_HEADER if computed else "") + format_results(others, limit))
    if computed:
        parts.append(prompts.LAST_COMPUTED.format(
            value=truncate(computed_output(computed[-1]).strip(), limit)))
    return "\n\n".join(parts)


def step_request(results: list[ResultDict], step: StepDict, programs: bool = False) -> str:
    """What a step node is asked: the earlier results it may use (``programs``: see format_results), then the
    step itself."""
    context = format_results(results, programs=programs)
    return prompts.STEP_USER.format(
        context=prompts.CONTEXT_HEADER + context + "\n\n" if context else "",
        step_id=step["id"], title=step["title"], instruction=step["instruction"],
        expected_output=step.get("expected_output") or "a concise answer",
    )


def tool_description(tool: Any) -> str:
    """A registered tool's description as prompts show it: one line, truncated."""
    return truncate(" ".join((tool.description or "").split()) or "(no description)", TOOL_DESCRIPTION_CHARS)


def tools_offered(tools: Sequence[Any]) -> str:
    """What the planner and the replanner are told of the registered tools, after their request ("" without any)."""
    if not tools:
        return ""
    return prompts.TOOLS_OFFERED.format(tools="\n".join(
        prompts.TOOL_LINE.format(name=t.name, description=tool_description(t)) for t in tools))


def files_note(files: Sequence[Any], *, code: bool = False) -> str:
    """What a prompt says of the run's files ("" without any, so a run without files keeps its prompts): each
    one's name, size and preview; for a Python step (``code``) also that they are read-only and where to save."""
    if not files:
        return ""
    lines = [prompts.FILES_GIVEN, *(prompts.FILE_LINE.format(**f) for f in files)]
    if code:
        lines.append(prompts.FILES_FOR_CODE)
    return "\n".join(lines)


def artifacts_note(results: Sequence[ResultDict]) -> str:
    """The aggregator's line naming the files the steps saved ("" when none did)."""
    names = [f"out/{a['name']}" for r in results for a in r.get("artifacts") or []]
    return prompts.ARTIFACTS_SAVED.format(names=", ".join(names)) if names else ""


def conversation_note(history: Sequence[TurnDict], memories: Sequence[MemoryDict]) -> str:
    """What the prompts show of a thread's earlier turns and the user's memories ("" when there are none): the
    turns as rules.conversation cuts them, each with the files it had or saved, then the memories."""
    parts = []
    left_out, turns = shown_turns(history)
    if turns:
        lines = [prompts.CONVERSATION_HEADER]
        if left_out:
            lines.append(prompts.CONVERSATION_LEFT_OUT.format(count=left_out))
        for t in turns:
            lines.append(prompts.CONVERSATION_TURN.format(turn=t["turn"], task=t["task"],
                                                          final=t["final"] or "(no answer)"))
            names = [f["name"] for f in t.get("files") or []] + [a["name"] for a in t.get("artifacts") or []]
            if names:
                lines.append(prompts.CONVERSATION_FILES.format(names=", ".join(names)))
        parts.append("\n".join(lines))
    if shown := shown_memories(memories):
        parts.append("\n".join([prompts.MEMORIES_HEADER, *(prompts.MEMORY_LINE.format(text=m) for m in shown)]))
    return "\n\n".join(parts)


def asked(state: AgentState | StepPayload | LlmStepsPayload, limit: int | None = None) -> str:
    """The task as a prompt shows it: after the earlier turns and memories (the memory node's ``conversation``)
    when the run has any, else the task alone, as before threads; ``limit`` cuts the task, never the note."""
    task = state["task"] if limit is None else truncate(state["task"], limit)
    note = state.get("conversation") or ""
    return prompts.TASK_IN_CONVERSATION.format(conversation=note, task=task) if note else task
