"""Python that reads only names it has: the local chat model's ``python_scope=`` call option.

``scope_processor(tokenizer, names)`` returns a logits processor (one per call: it keeps the row's text) that
lets a row write a name where Python reads it only when the name is in ``names`` or was assigned on an
earlier line (``name = ...``); a name being written must be the start of such a name. Names after a ``.``
(attributes, methods), inside strings and assignment targets are free. It reads straight-line programs
(hierplan.nodes.code_grammar's grammar, which it follows in the processor list): lines, not scopes, loops or
functions.

Why: NameErrors were most of the embedded model's failed Python attempts (docs/eval.md); a context-free
grammar cannot say "only names assigned so far". Like monitor-guided decoding, each step checks the best
tokens the grammar allows against the program's names, and keeps those that pass.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Iterable

# Tokens the grammar allows that are checked per step, best first; the others are masked (like top-k sampling).
# When none of them pass (the model wanted a name not in scope), every allowed token is checked (~15k, ~0.1 s).
SCOPE_CANDIDATES = 64

_READ = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_TARGET = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)")
_lock = threading.Lock()
_texts: dict[int, tuple[Any, list[str]]] = {}  # id(tokenizer) -> (tokenizer, each token's text)


def token_texts(tokenizer: Any) -> list[str]:
    """Each token id's text (decoded alone), built once per tokenizer."""
    with _lock:
        hit = _texts.get(id(tokenizer))
        if hit is None or hit[0] is not tokenizer:
            size = len(tokenizer)
            hit = _texts[id(tokenizer)] = (tokenizer, tokenizer.batch_decode([[i] for i in range(size)],
                                                                       skip_special_tokens=True))
    return hit[1]


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


def line_reads_ok(line: str, names: set[str], complete: bool) -> bool:
    """Whether every name ``line`` reads is in ``names``; unless ``complete``, a name at its end may be the
    start of one, and a first name may still become a target."""
    if line.lstrip().startswith("`"):  # the code fence
        return True
    code = _without_strings(line)
    target = _TARGET.match(code)
    reads = list(_READ.finditer(code))
    if target:
        reads = reads[1:]
    elif reads and not complete and reads[0].start() == len(code) - len(code.lstrip()) \
            and not code[reads[0].end():].strip():
        return True  # `tot` or `total ` at the line's start: a target or a read, not known yet
    for read in reads:
        name = read.group()
        if not complete and read.end() == len(code):
            if not any(n.startswith(name) for n in names):
                return False
        elif name not in names:
            return False
    return True


def assigned(lines: Iterable[str]) -> set[str]:
    """The names the given complete lines assign."""
    return {m.group(1) for line in lines if (m := _TARGET.match(_without_strings(line)))}


def text_reads_ok(text: str, scope: set[str]) -> bool:
    """Whether the program ``text`` (complete lines, then a line being written) reads only names in ``scope``
    or assigned on an earlier line."""
    *done, current = text.split("\n")
    names = set(scope)
    for line in done:
        if not line_reads_ok(line, names, complete=True):
            return False
        names |= assigned([line])
    return line_reads_ok(current, names, complete=False)


def scope_processor(tokenizer: Any, scope: Iterable[str]) -> Any:
    """A transformers LogitsProcessor for one row: names read only from ``scope`` or earlier lines."""
    import torch
    from transformers import LogitsProcessor

    texts = token_texts(tokenizer)
    scope = set(scope)

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
            names = set(scope)
            for line in done:
                names |= assigned([line])
            row = scores[0]
            finite = int(torch.isfinite(row).sum())
            for wanted in (SCOPE_CANDIDATES, finite):
                candidates = torch.topk(row, min(wanted, finite)).indices.tolist()
                keep = [t for t in candidates if t >= len(texts) or text_reads_ok(current + texts[t], names)]
                if keep:
                    masked = torch.full_like(row, float("-inf"))
                    masked[keep] = row[keep]
                    scores[0] = masked
                    return scores
            self.stuck = True  # e.g. a name in scope that the grammar's names exclude: the run records the outcome
            return scores

    return NameScopeProcessor()
