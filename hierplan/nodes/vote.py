"""An independent check of a plan's computed answer: whole-task programs, and the number most agree on.

Self-consistency (Wang et al., 2023) over program-aided answers (PAL, Gao et al., 2023). The plan computes its
answer step by step; a mistake in any step reaches the last one. So once the last Python step of a numeric task
has printed a number, CHECK_SAMPLES programs that solve the whole task on their own (not from the steps'
variables, with their own seeds) are drawn and run; when one disagrees with the plan's number, a warmer
tie-break program is drawn. The step keeps the number most of them printed (a three-way split keeps the first
whole-task program's: on the dev set a whole-task program was right more often than a plan's chain), and the
run records what every program printed (``StepResult.check``; ``hierplan show`` prints it).

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
from hierplan.nodes.model_call import invoke_batch
from hierplan.schema import CodeAttempt, ModelCall

# Programs drawn after the first one printed a number; a tie-break program is added when they disagree.
CHECK_SAMPLES = 1
TIE_BREAK_SAMPLES = 1
# The tie-break needs room to differ from the check: at the code node's 0.2 it mostly repeats it.
CHECK_TEMPERATURE = 0.7


def _key(number: str | None) -> str | None:
    value = parse_number(number) if number is not None else None
    return None if value is None else format(value.normalize(), "f")


def check_messages(task: str) -> list[BaseMessage]:
    """The request for one program that solves the whole task (system prompt first and fixed: it caches)."""
    return [SystemMessage(prompts.CHECK_SYSTEM), HumanMessage(prompts.CHECK_USER.format(task=task))]


def vote(model: BaseChatModel, messages: list[BaseMessage], sampling: Sampling, first: CodeAttempt,
         run: Callable[[str], CodeAttempt], *, seed: int | None, seed_key: tuple
         ) -> tuple[CodeAttempt, dict[str, Any], list[ModelCall]]:
    """Check ``first`` (the plan's ok attempt) with programs for ``messages`` (check_messages); (the attempt to
    keep, the check as recorded, the calls made). ``run`` checks and runs a program on its own."""
    first_key = _key(last_number(first.stdout))
    programs: list[CodeAttempt] = [first]
    calls: list[ModelCall] = []
    # The check at the code node's own temperature (a whole-task program is the stronger voter: on the dev set
    # it was right more often than a plan's chain of steps); the tie-break warmer, to differ from it.
    rounds = ((CHECK_SAMPLES, "check", sampling),
              (TIE_BREAK_SAMPLES, "tie-break", replace(sampling, temperature=max(sampling.temperature,
                                                                               CHECK_TEMPERATURE))))
    for n, name, round_sampling in rounds:
        if name == "tie-break" and _agreed([_voted(p) for p in programs]):
            break
        replies = invoke_batch(model, [messages] * n, round_sampling, node="python_check", seed=seed,
                               seed_key=(*seed_key, name))
        for text, call in replies:
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


def _agreed(keys: list[str | None]) -> bool:
    return len(keys) >= 2 and keys[0] is not None and all(k == keys[0] for k in keys)
