"""The final answer checked against the task's checkable instructions (hierplan.nodes.instructions), and against
saying the same lines twice, and written anew when it breaks one: the model gets the task and what exactly the
answer got wrong ("it has 7 bullet points; the task asks for exactly 5") and writes a new answer, at most
MAX_REVISIONS times. Lines said twice are first dropped by program (``drop_repeated_lines``), and the model is
asked only for what that leaves broken. The answer kept is the one that breaks the fewest
instructions, the draft on a tie; the run records every round (``instruction_check``; ``hierplan show``).

Why: a small model follows a stated count, length or forbidden word unreliably, while a program checks each
exactly; a plan's hierarchy gives the answer a place to be checked before the user sees it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from hierplan.config import Sampling
from hierplan.nodes import prompts
from hierplan.nodes.instructions import ALWAYS, drop_repeated_lines, problems, read_instructions
from hierplan.nodes.model_call import invoke_model

MAX_REVISIONS = 2
RETRY_TEMPERATURE = 0.7


def revise_messages(task: str, found: list[str]) -> list:
    return [SystemMessage(prompts.REVISE_SYSTEM),
            HumanMessage(prompts.REVISE_USER.format(task=task, problems="\n".join(f"- {p}" for p in found)))]


def revise(model: BaseChatModel, sampling: Sampling, task: str, draft: str, *, seed: int | None
           ) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    """(the answer to keep, the check as recorded, the revision calls made)."""
    instructions = [*read_instructions(task), *ALWAYS]
    draft_problems = problems(instructions, draft)
    best, best_problems = draft, draft_problems
    rounds: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    # Repeated lines are dropped by program first (no model call); a rewrite is asked only for what remains.
    deduplicated = drop_repeated_lines(draft)
    if deduplicated != draft:
        deduplicated_problems = problems(instructions, deduplicated)
        rounds.append({"attempt": 0, "kind": "dropped_repeats", "problems": deduplicated_problems})
        if len(deduplicated_problems) < len(best_problems):
            best, best_problems = deduplicated, deduplicated_problems
    current, current_problems = best, best_problems
    for attempt in range(1, MAX_REVISIONS + 1):
        if not current_problems:
            break
        # The second try warmer: at the first one's temperature it mostly repeats the first.
        round_sampling = sampling if attempt == 1 else replace(sampling, temperature=max(sampling.temperature,
                                                                                     RETRY_TEMPERATURE))
        text, call = invoke_model(model, revise_messages(task, current_problems), round_sampling,
                                  node="reviser", seed=seed, seed_key=(attempt,))
        calls.append(call.model_dump())
        current = text.strip()
        current_problems = problems(instructions, current) if current else ["the revision was empty"]
        rounds.append({"attempt": attempt, "problems": current_problems})
        if current and len(current_problems) < len(best_problems):
            best, best_problems = current, current_problems
    check = {"kind": "instructions", "instructions": instructions, "draft_problems": draft_problems,
             "revisions": rounds, "revised": best != draft, "problems": best_problems, "ok": not best_problems}
    return best, check, calls


def describe(check: dict[str, Any]) -> str:
    """One line for ``hierplan show`` and the web page."""
    n = len(check["instructions"])
    if not check["draft_problems"]:
        return f"instructions check: the answer met all {n} checkable instructions of the task"
    rewrites = [r for r in check["revisions"] if r.get("kind") != "dropped_repeats"]
    dropped = len(rewrites) < len(check["revisions"])
    done = ["repeated lines dropped"] if dropped else []
    done += [f"written anew {len(rewrites)} time(s)"] if rewrites else []
    what = ", ".join(done) or "not revised"
    state = "now meets all" if check["ok"] else f"still breaks {len(check['problems'])} of"
    return (f"instructions check: the first answer broke {len(check['draft_problems'])} of {n} checkable "
            f"instructions ({'; '.join(check['draft_problems'])}); {what}, it {state} {n}"
            + (f" ({'; '.join(check['problems'])})" if check["problems"] else ""))
