"""A writing answer against the task's checkable instructions (rules.instructions), in a bounded loop of two
nodes: check_instructions reads the instructions and checks the latest answer; reviser has the model write the
answer anew, told exactly what the latest one broke ("it has 7 bullet points; the task asks for exactly 5"), at
most config.MAX_REVISIONS times.

What a program can fix without losing anything is fixed first, with no model call (rules.checks.
repair_by_program): lines said twice are dropped, and the case, commas, quotes, ending and JSON the task asks for
are applied; a rewrite from the task alone gives a thinner answer. Every rewrite goes through the same fixes.
The answer kept (``final``) is the one that breaks the fewest instructions, or as many by less (60 words where
the task allows 30 is nearer than 335: rules.checks.miss), the draft on a tie; every round is recorded
(``instruction_check``). A rewrite that is no longer
the piece (it shrank it, or it is the task's words: rules.substance) is never kept, whatever it fixes; an
answer that is no answer at all (the task copied back, a line where the task names an essay) is a problem to fix
like a broken instruction (rules.substance.not_the_piece), the draft's too.

An answer that is no piece at all is first answered plainly (the plain_answer node: the task alone, as a person
would ask the model, none of the checks' findings): asked what its answer broke, a small model kept writing the same
thin reply ("Sure I can help with that!", a P.S. alone). That answer, once the program's fixes are applied, is kept
over the one that is no piece when it is the piece, or when it says more (more words besides the parts the task
asks for beside the answer) and is not the task's words, whatever instructions it breaks: the answer comes before
its form, which the reviser then fixes.

A list with the wrong number of items, or a part the answer lacks (a title, a postscript), is what the reviser
writes first, alone, under the grammar (rules.parts): the model gives those parts from the kept
answer, held by a schema to the count asked (schema.parts_model), and a program puts them in place; the rest of
the answer stays as it was. Once per run; where the model gives no structured output (the run's ``constrain``
off, a model without it), or the reply does not validate, the answer is written anew as for any other problem.

Why: a small model follows a stated count, length or forbidden word unreliably, while a program checks each
exactly, and a grammar holds a count exactly.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END
from langgraph.runtime import Runtime

from hierplan.config import (CHARS_PER_TOKEN, MAX_GRAMMAR_LIST_ITEMS, MAX_REVISIONS, WARM_TEMPERATURE,
                             SamplingConfig)
from hierplan.graph.state import AgentState, InstructionCheckDict, InstructionRoundDict
from hierplan.nodes import prompts
from hierplan.nodes.context import asked, plain_messages
from hierplan.nodes.events import emit
from hierplan.nodes.model_call import invoke_model, invoke_structured
from hierplan.options import RunOptions, run_options
from hierplan.rules.answer import numeric_instructions
from hierplan.rules.checks import drop_chat_frame, problems, program_cased, repair_by_program, total_miss
from hierplan.rules.instructions import always, read_instructions
from hierplan.rules.parts import part_count, parts_to_write, put_parts
from hierplan.rules.kind import NUMERIC
from hierplan.rules.substance import more_of_the_piece, not_the_piece, substance_lost
from hierplan.schema import parts_model

EMPTY_REVISION = "the revision was empty"
PLAIN = "plain"
"""The round of the task answered plainly (plain_answer)."""


def check_instructions(state: AgentState) -> AgentState:
    """First visit: the aggregator's draft (and the draft less repeated lines); later visits: the reviser's
    latest answer, kept when it breaks fewer instructions than the kept one."""
    check = state.get("instruction_check")
    if check is None:
        requirements = numeric_instructions(state["task"]) if state["kind"] == NUMERIC else state.get("requirements")
        check, kept = first_check(state["task"], state["final"], requirements)
    else:
        check, kept = with_revision(check, state["final"], state.get("revision") or "", state["task"],
                                    kind=state.get("revision_kind") or "rewrite")
    emit("instruction_check", ok=check["ok"], problems=check["problems"], rounds=len(check["revisions"]))
    update: AgentState = {"instruction_check": check}
    if kept != state["final"]:
        update["final"] = kept
    return update


def answer_problems(instructions: list[dict], answer: str, task: str) -> list[str]:
    """The instructions ``answer`` breaks, and, first, why it is not the piece at all when it is not."""
    floor = not_the_piece(answer, task, instructions)
    return [*([floor] if floor else []), *problems(instructions, answer)]


def first_check(task: str, draft: str, requirements: list[dict] | None = None) -> tuple[InstructionCheckDict, str]:
    """(the check of the aggregator's draft, the answer to keep: the draft, or the draft as repaired by program
    when that breaks fewer instructions). ``requirements``: what read_requirements read from the task (a run
    without it, e.g. one checkpointed before that node existed, reads the task's words by rule here)."""
    read = read_instructions(task) if requirements is None else requirements
    instructions = [*read, *always(task, read)]
    draft = drop_chat_frame(draft, instructions)  # no part of the answer, whatever the checks find
    draft_problems = answer_problems(instructions, draft, task)
    kept, kept_problems = draft, draft_problems
    rounds: list[InstructionRoundDict] = []
    repaired = repair_by_program(instructions, draft)
    if repaired != draft:
        repaired_problems = answer_problems(instructions, repaired, task)
        rounds.append({"attempt": 0, "kind": "by_program", "problems": repaired_problems})
        # the case asked for the whole answer is the program's alone (no writer is asked for it): a tie keeps it
        cased_tie = program_cased(instructions) and len(repaired_problems) <= len(kept_problems)
        if cased_tie or closer(instructions, (repaired, repaired_problems), (kept, kept_problems)):
            kept, kept_problems = repaired, repaired_problems
    check: InstructionCheckDict = {
        "kind": "instructions", "instructions": instructions, "draft": draft, "draft_problems": draft_problems,
        "revisions": rounds, "revised": kept != draft, "problems": kept_problems, "to_fix": kept_problems,
        "ok": not kept_problems}
    return check, kept


def with_revision(check: InstructionCheckDict, kept: str, revision: str, task: str, kind: str = "rewrite"
                  ) -> tuple[InstructionCheckDict, str]:
    """(the check with the latest answer written anew, repaired by program, as a new round (``kind``: "rewrite",
    the reviser's; "parts", only some of its parts written, under the grammar; "plain", the task answered plainly);
    the answer to keep: the revision when it breaks fewer instructions and is still the piece (rules.substance),
    or, answered plainly, when it is more of the piece than a ``kept`` that is no piece (rules.substance.
    more_of_the_piece); else ``kept``)."""
    instructions = check["instructions"]
    revision = repair_by_program(instructions, revision) if revision else revision
    found = answer_problems(instructions, revision, task) if revision else [EMPTY_REVISION]
    kept_problems = check["problems"]
    lost = substance_lost(kept, revision, task, instructions) if revision else None
    piece_first = kind == PLAIN and bool(revision) and more_of_the_piece(revision, kept, task, instructions)
    if piece_first:
        lost = None  # the kept answer was no piece: a plain answer that is more of it lost nothing
    taken = piece_first or bool(revision and lost is None and closer(instructions, (revision, found),
                                                                      (kept, kept_problems)))
    if taken:
        kept, kept_problems = revision, found
    round_: InstructionRoundDict = {"attempt": rewrites(check) + 1, "problems": found,
                                    **({"kind": kind} if kind != "rewrite" else {})}
    if lost is not None:
        round_["rejected"] = lost
    rounds = [*check["revisions"], round_]
    # a rewrite that dropped the piece fixed nothing, nor did a plain answer not kept: the next one is asked to fix
    # the kept answer
    fix_kept = lost is not None or (kind == PLAIN and not taken)
    return {**check, "revisions": rounds, "revised": kept != check["draft"], "problems": kept_problems,
            "to_fix": kept_problems if fix_kept else found, "ok": not kept_problems}, kept


def closer(instructions: list[dict], answer: tuple[str, list[str]], kept: tuple[str, list[str]]) -> bool:
    """Whether ``answer`` (text, problems) breaks fewer instructions than ``kept``, or as many but by less
    (rules.checks.total_miss: 60 words for "at most 30" is closer than 335); a full tie keeps ``kept``."""
    if len(answer[1]) != len(kept[1]):
        return len(answer[1]) < len(kept[1])
    return bool(answer[1]) and total_miss(instructions, answer[0]) < total_miss(instructions, kept[0])


def rewrites(check: InstructionCheckDict) -> int:
    """How many times the model has written the answer anew."""
    return sum(1 for r in check["revisions"] if r.get("kind") != "by_program")


def after_instruction_check(state: AgentState) -> Literal["reviser", "plain_answer", "__end__"]:
    """A writing answer that still breaks an instruction is written anew (at most MAX_REVISIONS times): once by
    plain_answer, the task alone, where the kept answer is no piece at all; else by the reviser, told what it
    broke. A numeric one never is: a rewrite from the task would lose the number its
    programs computed and the vote checked, so it keeps what the program fixes gave it."""
    check = state["instruction_check"]
    if state["kind"] == NUMERIC or not check["to_fix"] or rewrites(check) >= MAX_REVISIONS:
        return END
    answered_plainly = any(r.get("kind") == PLAIN for r in check["revisions"])
    if not answered_plainly and not_the_piece(state["final"], state["task"], check["instructions"]):
        return "plain_answer"
    return "reviser"


def revise_messages(task: str, found: list[str], instructions: Iterable[dict] = ()) -> list:
    """The rewrite's prompt: the task and what the kept answer broke; a letter case asked for the whole answer is
    the program's to apply (rules.checks.CASE_KINDS)."""
    case = "\n" + prompts.CASE_BY_PROGRAM if program_cased(instructions) else ""
    return [SystemMessage(prompts.REVISE_SYSTEM),
            HumanMessage(prompts.REVISE_USER.format(task=task, problems="\n".join(f"- {p}" for p in found),
                                                    case=case))]


def parts_messages(task: str, answer: str, parts: list[dict]) -> list:
    asked = []
    for part in parts:
        kind = part["kind"]
        if kind in ("title", "postscript"):
            asked.append(prompts.PART_REQUESTS[kind].format(marker=part.get("marker", "")))
        else:
            least, most = part_count(part)
            count = f"exactly {most}" if least == most else f"{least} to {most}"
            asked.append(prompts.PART_REQUESTS["items"].format(count=count))
    return [SystemMessage(prompts.PARTS_SYSTEM),
            HumanMessage(prompts.PARTS_USER.format(task=task, answer=answer, parts="\n".join(f"- {a}" for a in asked)))]


def make_plain_answer(model: BaseChatModel, base: SamplingConfig):
    def plain_answer(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
        sampling = run_options(runtime.context).sampling(base)
        attempt = rewrites(state["instruction_check"]) + 1
        emit("node_started", node="plain_answer", attempt=attempt)
        text, call = invoke_model(model, plain_messages(asked(state)), sampling.aggregator, node="plain_answer",
                                  seed=sampling.seed, seed_key=(attempt, PLAIN), stream=True, attempt=attempt)
        return {"revision": text.strip(), "revision_kind": PLAIN, "calls": [call.model_dump()]}

    return plain_answer


def make_reviser(model: BaseChatModel, base: SamplingConfig):
    def reviser(state: AgentState, runtime: Runtime[RunOptions]) -> AgentState:
        options = run_options(runtime.context)
        sampling = options.sampling(base)
        check = state["instruction_check"]
        attempt = rewrites(check) + 1
        calls = []
        parts = parts_to_write(check["instructions"], state["final"], MAX_GRAMMAR_LIST_ITEMS)
        if parts and options.constrain and not any(r.get("kind") == "parts" for r in check["revisions"]):
            emit("node_started", node="reviser", attempt=attempt, parts=[p["kind"] for p in parts])
            budget = sampling.aggregator.max_new_tokens * CHARS_PER_TOKEN
            got = invoke_structured(model, parts_messages(asked(state), state["final"], parts), sampling.aggregator,
                                    parts_model(parts, budget), node="reviser", seed=sampling.seed,
                                    seed_key=(attempt, "parts"))
            if got is not None:
                calls.append(got.call.model_dump())
                if got.parsed is not None:
                    return {"revision": put_parts(state["final"], parts, got.parsed.model_dump()),
                            "revision_kind": "parts", "calls": calls}
        # A second rewrite warmer: at the first one's temperature it mostly repeats the first.
        written_anew = sum(1 for r in check["revisions"] if r.get("kind") is None)
        node_sampling = sampling.aggregator if not written_anew else replace(
            sampling.aggregator, temperature=max(sampling.aggregator.temperature, WARM_TEMPERATURE))
        emit("node_started", node="reviser", attempt=attempt)
        messages = revise_messages(asked(state), check["to_fix"], check["instructions"])
        text, call = invoke_model(model, messages, node_sampling,
                                  node="reviser", seed=sampling.seed, seed_key=(attempt,), stream=True,
                                  attempt=attempt)
        return {"revision": text.strip(), "revision_kind": "rewrite", "calls": [*calls, call.model_dump()]}

    return reviser
