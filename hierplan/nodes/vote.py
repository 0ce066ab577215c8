"""An independent check of a plan's computed answer: whole-task programs, and the number most agree on.

Self-consistency (Wang et al., 2023) over program-aided answers (PAL, Gao et al., 2023). The plan computes its
answer step by step; a mistake in any step reaches the last one. So while the planner plans, the checker node
draws a program that solves the whole task on its own (not from the steps' variables), and runs it
(draw_checks). Once the plan's last Python step has printed a number, the step keeps the number most of these
programs and the plan printed; while no number has a majority, one more (tie-break) program is drawn, at most
MAX_TIE_BREAKS, and a split still keeps the first whole-task program's number (on the dev set a whole-task
program was right more often than a plan's chain). The run records what every program printed
(``StepResult.check``; ``hierplan show`` prints it).

Only the task's words and the printed numbers are read: nothing here knows any task or data set.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from hierplan.config import Sampling
from hierplan.eval.scoring import last_number, parse_number
from hierplan.nodes import prompts
from hierplan.nodes.json_extract import strip_code_fences
from hierplan.nodes.model_call import invoke_each, invoke_model
from hierplan.schema import CodeAttempt, ModelCall

# The whole-task programs drawn beside the planner, by temperature (None: the code node's own, its most likely
# program). One: on 2 cores a second one drawn with the planner slowed every task by ~8 s (8 dev tasks, 52.8 s
# against 45 s a task) for a vote that mostly agreed anyway; it is drawn only when needed, as the tie-break.
CHECK_TEMPERATURES: tuple[float | None, ...] = (None,)
# Drawn one at a time while no number has a majority, warmer, to differ from the check (at 0.2 it mostly
# repeats it). Two: on the first 40 dev tasks, 7 of the 21 votes with one tie-break were still three-way splits
# (the split keeps the whole-task program's number), and in 2 of them the tie-break's number was the right one.
MAX_TIE_BREAKS = 2
WARM_TEMPERATURE = 0.7


def _key(number: str | None) -> str | None:
    value = parse_number(number) if number is not None else None
    return None if value is None else format(value.normalize(), "f")


def check_messages(task: str) -> list[BaseMessage]:
    """The request for one program that solves the whole task (system prompt first and fixed: it caches)."""
    return [SystemMessage(prompts.CHECK_SYSTEM), HumanMessage(prompts.CHECK_USER.format(task=task))]


def _warm(sampling: Sampling) -> Sampling:
    return replace(sampling, temperature=max(sampling.temperature, WARM_TEMPERATURE))


def draw_checks(model: BaseChatModel, task: str, sampling: Sampling, run: Callable[[str], CodeAttempt], *,
                seed: int | None) -> tuple[list[CodeAttempt], list[ModelCall]]:
    """The whole-task programs for ``task``, drawn at once (one request each, answered together on the
    engine's slots with a GPU, in turn on a CPU) and each checked and run on its own by ``run``; (the attempts,
    the calls)."""
    rows = [(check_messages(task), sampling if t is None else replace(sampling, temperature=t), ("check", i))
            for i, t in enumerate(CHECK_TEMPERATURES)]
    replies = invoke_each(model, rows, node="python_check", seed=seed)
    return [run(strip_code_fences(text)) for text, _ in replies], [call for _, call in replies]


def vote(model: BaseChatModel, task: str, sampling: Sampling, first: CodeAttempt, checks: list[CodeAttempt],
         run: Callable[[str], CodeAttempt], *, seed: int | None, seed_key: tuple
         ) -> tuple[CodeAttempt, dict[str, Any], list[ModelCall]]:
    """Check ``first`` (the plan's ok attempt) against ``checks`` (draw_checks); (the attempt to keep, the
    check as recorded, the tie-break calls made). ``run`` checks and runs a program on its own."""
    first_key = _key(last_number(first.stdout))
    programs: list[CodeAttempt] = [first, *checks]
    calls: list[ModelCall] = []
    for i in range(MAX_TIE_BREAKS):
        if _has_majority([_voted(p) for p in programs]):
            break
        text, call = invoke_model(model, check_messages(task), _warm(sampling), node="python_check", seed=seed,
                                  seed_key=(*seed_key, "tie-break", i))
        calls.append(call)
        programs.append(run(strip_code_fences(text)))
    keys = [_voted(p) for p in programs]
    counts = Counter(k for k in keys if k is not None)
    # Most votes wins; on a tie, the first whole-task program's number (the plan's when that one failed).
    preferred = next((k for k in keys[1:] if k is not None), first_key)
    best, votes = max(counts.items(), key=lambda kv: (kv[1], kv[0] == preferred))
    chosen = programs[keys.index(best)]
    check = {"kind": "vote", "answers": [last_number(p.stdout) if p.ok else None for p in programs],
             "chosen": last_number(chosen.stdout), "agreed": votes, "programs": len(programs),
             "changed": best != first_key}
    return chosen, check, calls


def _voted(program: CodeAttempt) -> str | None:
    """The number a program votes for: its last printed number, normalised; None when it failed."""
    return _key(last_number(program.stdout)) if program.ok else None


def _has_majority(keys: list[str | None]) -> bool:
    """Some number has at least two votes and more than any other."""
    top = Counter(k for k in keys if k is not None).most_common(2)
    return bool(top) and top[0][1] >= 2 and (len(top) == 1 or top[0][1] > top[1][1])
