"""A thread's earlier turns and a user's long-term memories, as a new turn sees them; and what a task asks to be
remembered. Pure functions of their arguments.

- **What to remember** is read by a rule, not by the model: a task that begins "Remember (that) ...", "Please
  remember ...", "Don't forget (that) ..." or "Note that ..." asks to remember the rest of its first sentence
  ("Remember that my team is Blue." -> "my team is Blue"). A question ("Do you remember ...?", "Remember what I
  said?") asks for nothing to be kept. "Note that ..." followed by more of the task ("Note that the file uses
  semicolons. What is the mean price?") is a remark about this task, not a fact to keep for later ones.
- **What a turn shows** of the earlier ones: the last ``config.CONVERSATION_TURNS`` turns, each task cut to
  ``TURN_TASK_CHARS`` and each answer to ``TURN_ANSWER_CHARS`` by ``cut_answer`` (the head of a long answer and its
  last line, which is where "Final answer: 151" stands), and how many older turns are left out.
"""

from __future__ import annotations

import hashlib
import re
from typing import Sequence

from hierplan.config import CONVERSATION_TURNS, MEMORIES_SHOWN, MEMORY_CHARS, TURN_ANSWER_CHARS, TURN_TASK_CHARS
from hierplan.records import MemoryDict, TurnDict

REMEMBER_RE = re.compile(
    r"^\s*(?:(?:please|pls)\s*,?\s+)?(?:remember|memori[sz]e|keep\s+in\s+mind|don'?t\s+forget|do\s+not\s+forget|"
    r"(?P<note>note))\b(?P<said>\s+that\b|\s*[:,])?\s*(?P<fact>[^\n]+)", re.IGNORECASE)
# without "that" or a colon, "Note the ..." or "remember to ..." asks for something else than a fact to keep
NOT_A_FACT_RE = re.compile(r"^(?:to|the|how|what|when|where|why|who|which|whether|if|me|this|it)\b", re.IGNORECASE)
SENTENCE_END_RE = re.compile(r"(?<=[.!])\s+(?=[A-Z])")
CUT_MARK = " [...] "


def remember_request(task: str) -> str | None:
    """The fact a task asks to be remembered (its first sentence after "Remember that ..."), or None."""
    match = REMEMBER_RE.match(task)
    if not match:
        return None
    first, *rest = SENTENCE_END_RE.split(match.group("fact").strip(), maxsplit=1)
    fact = first.strip().rstrip(".!").strip()
    if not fact or fact.endswith("?") or (not match.group("said") and NOT_A_FACT_RE.match(fact)):
        return None
    if match.group("note") and ((rest and rest[0].strip()) or task[match.end():].strip()):
        return None
    return fact[:MEMORY_CHARS]


def memory_key(text: str) -> str:
    """A memory's key in the store: the same words (whatever their case and spacing) are one memory."""
    return hashlib.sha256(" ".join(text.lower().split()).encode("utf-8")).hexdigest()[:16]


def cut_text(text: str, limit: int) -> str:
    """The text, or its first ``limit`` characters and a mark."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + CUT_MARK.rstrip()


def cut_answer(answer: str, limit: int = TURN_ANSWER_CHARS) -> str:
    """A long answer summarised by rule: its head and its last line (kept whole when it takes at most half the
    limit), so a closing "Final answer: 151" survives."""
    answer = answer.strip()
    if len(answer) <= limit:
        return answer
    last = answer.rsplit("\n", 1)[-1].strip()
    if "\n" not in answer or len(last) > limit // 2:
        return cut_text(answer, limit)
    head = answer[: limit - len(last) - len(CUT_MARK)].rstrip()
    return f"{head}{CUT_MARK}{last}"


def shown_turns(history: Sequence[TurnDict], keep: int = CONVERSATION_TURNS) -> tuple[int, list[TurnDict]]:
    """(how many older turns are left out, the last ``keep`` turns with their task and answer cut)."""
    turns = list(history)[-keep:] if keep > 0 else []
    return len(history) - len(turns), [
        {**t, "task": cut_text(t["task"], TURN_TASK_CHARS), "final": cut_answer(t.get("final") or "")}
        for t in turns]


def shown_memories(memories: Sequence[MemoryDict], keep: int = MEMORIES_SHOWN) -> list[str]:
    """The memories' texts a prompt shows, as given (newest first), at most ``keep``."""
    return [cut_text(m["text"], MEMORY_CHARS) for m in list(memories)[:keep]]
