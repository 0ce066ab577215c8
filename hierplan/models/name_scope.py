"""Python that reads only names it has: the local chat model's ``python_scope=`` and ``python_calls=`` options.

``scope_processor(tokenizer, names, calls)`` returns a logits processor (one per call: it keeps the row's text) that
lets a row write a name where Python reads it only when the name is in ``names`` or was assigned on an
earlier line (``name = ...``), or it is called and in ``calls``; a name being written must be the start of
such a name (a called one whole: ``m`` is not taken for ``min``). Names after a ``.``
(attributes, methods), inside strings and assignment targets are free. It reads straight-line programs
(hierplan.nodes.code_grammar's grammar, which it follows in the processor list): lines, not scopes, loops or
functions.

Why: NameErrors were most of the embedded model's failed Python attempts (docs/eval.md); a context-free
grammar cannot say "only names assigned so far". Like monitor-guided decoding, each step checks the best
tokens the grammar allows against the program's names, and keeps those that pass.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from hierplan.models.vocab import token_texts

# Tokens the grammar allows that are checked per step, best first; the others are masked (like top-k sampling).
# When none of them pass (the model wanted a name not in scope), every allowed token is checked (~15k, ~0.1 s).
SCOPE_CANDIDATES = 64

# Parentheses and brackets open at once, at most: unbounded, the embedded model nested min(min(min(... until
# its token budget ran out when a name it wanted was not in scope.
MAX_DEPTH = 4
_READ = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_TARGET = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)")


def _without_strings(line: str) -> str:
    """``line`` with string literals blanked, cut where a string is still open."""
    out, quote = [], None
    for char in line:
        if quote:
            if char == quote:
                quote = None
                out.append(char)
            else:
                out.append(" ")
        else:
            if char in "'\"":
                quote = char
            out.append(char)
    text = "".join(out)
    return text[:text.rfind(quote)] if quote else text


def line_reads_ok(line: str, names: set[str], calls: set[str], complete: bool) -> bool:
    """Whether every name ``line`` reads is in ``names`` or ``calls`` and its parentheses nest at most
    MAX_DEPTH deep. Unless ``complete``, a name at its end may be the start of one in ``names`` or a whole
    name in ``calls`` (when its parentheses may still open), and a first name may still become a target. The
    name a line starts with is free: a target, or a call the grammar lets a line start with (print)."""
    if line.lstrip().startswith("`"):  # the code fence
        return True
    code = _without_strings(line)
    open_now, deepest = _depths(code)
    if deepest > MAX_DEPTH:
        return False
    target = _TARGET.match(code)
    reads = list(_READ.finditer(code))
    if target or (reads and code[reads[0].end():].startswith("(")):
        reads = reads[1:]  # a target, or the call a line starts with (the grammar says which: print)
    elif reads and not complete and reads[0].start() == len(code) - len(code.lstrip()) \
            and not code[reads[0].end():].strip():
        return True  # `tot` or `total ` at the line's start: a target or a read, not known yet
    for read in reads:
        name = read.group()
        if not complete and read.end() == len(code):
            if not (any(n.startswith(name) for n in names)
                    or (name in calls and open_now + 2 <= MAX_DEPTH)):  # `sum([` opens two
                return False
        elif name not in names and name not in calls:
            return False
    return True


def _depths(code: str) -> tuple[int, int]:
    """How many parentheses and brackets are open at the end of ``code``, and at most."""
    depth = deepest = 0
    for char in code:
        depth += (char in "([") - (char in ")]")
        deepest = max(deepest, depth)
    return depth, deepest


def assigned(lines: Iterable[str]) -> set[str]:
    """The names the given complete lines assign."""
    return {m.group(1) for line in lines if (m := _TARGET.match(_without_strings(line)))}


def text_reads_ok(text: str, scope: set[str], calls: set[str] = frozenset()) -> bool:
    """Whether the program ``text`` (complete lines, then a line being written) reads only names in ``scope``
    or assigned on an earlier line, and calls only names in ``calls``."""
    *done, current = text.split("\n")
    names = set(scope)
    for line in done:
        if not line_reads_ok(line, names, calls, complete=True):
            return False
        names |= assigned([line])
    return line_reads_ok(current, names, calls, complete=False)


def scope_processor(tokenizer: Any, scope: Iterable[str], calls: Iterable[str] = ()) -> Any:
    """A transformers LogitsProcessor for one row: names read only from ``scope`` or earlier lines, names
    called only from ``calls``."""
    import torch
    from transformers import LogitsProcessor

    texts = token_texts(tokenizer)
    scope, calls = set(scope), set(calls)

    class NameScopeProcessor(LogitsProcessor):
        def __init__(self) -> None:
            self.prompt_length: int | None = None
            self.stuck = False  # no allowed token kept the names in scope: the rest is left as the model writes it

        def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
            if self.prompt_length is None:
                self.prompt_length = input_ids.shape[1]
            if self.stuck:
                return scores
            generated = input_ids[0, self.prompt_length:].tolist()
            *done, current = tokenizer.decode(generated, skip_special_tokens=True).split("\n")
            names = scope | assigned(done)
            row = scores[0]
            finite = int(torch.isfinite(row).sum())
            for wanted in dict.fromkeys((min(SCOPE_CANDIDATES, finite), finite)):  # the best, then all (once)
                candidates = torch.topk(row, wanted).indices.tolist()
                keep = [t for t in candidates if t >= len(texts) or text_reads_ok(current + texts[t], names, calls)]
                if keep:
                    masked = torch.full_like(row, float("-inf"))
                    masked[keep] = row[keep]
                    scores[0] = masked
                    return scores
            self.stuck = True  # e.g. a name in scope that the grammar's names exclude: the run records the outcome
            return scores

    return NameScopeProcessor()
