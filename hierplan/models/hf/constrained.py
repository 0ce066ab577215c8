"""Grammar-constrained JSON decoding for the planner.

``grammar_processor(model, tokenizer, Plan)`` returns a logits processor that makes a
local transformers model emit only compact JSON that ``Plan.model_validate_json``
accepts, then stop: a plain transformers ``LogitsProcessor``, for
``pipeline(..., logits_processor=LogitsProcessorList([processor]))`` or ``model.generate``.
The transformers chat model (chat.py) uses it for ``with_structured_output``; nodes
never see it.

The grammar is a regular expression built from the schema (``schema_regex``): every
property is emitted in schema order, strings keep their length bounds, and an
array of objects with an integer ``id`` (the plan's steps) is unrolled by position,
so step *i* has ``"id":i`` and its integer lists (``depends_on``) name only ids < i.
Heavy imports (torch, transformers, llguidance) happen inside functions.
"""

from __future__ import annotations

import threading
from typing import Any

from hierplan.models.hf.json_grammar import schema_regex, worst_case_json_bytes

__all__ = ["available", "grammar_processor", "schema_regex", "worst_case_json_bytes"]

_lock = threading.Lock()
_tokenizers: dict[tuple, Any] = {}  # (id(tokenizer), stop ids, vocab size) -> (tokenizer, llguidance tokenizer)
_compiled: dict[tuple, Any] = {}  # (id(llguidance tokenizer), regex) -> (llguidance tokenizer, compiled grammar)


# ---------------------------------------------------------------- engine (llguidance)

# Token budget the planner decodes under; near its end the processor closes the JSON (see _restrict).
DEFAULT_MAX_NEW_TOKENS = 700


def _stop_ids(model: Any, tokenizer: Any) -> list[int]:
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    return sorted({eos} if isinstance(eos, int) else set(eos))


class _Compiled:
    """Tokenizer + checked grammar + what the budget closer needs; built once per (tokenizer, schema)."""

    def __init__(self, lltok: Any, vocab_size: int, stop_ids: list[int], regex: str):
        import llguidance

        self.lltok = lltok
        self.grammar = checked_grammar(llguidance.LLMatcher.grammar_from_regex(regex), lltok, "plan grammar")
        self.vocab_size, self.stop_ids = vocab_size, stop_ids
        self.by_bytes: dict[bytes, int] = {}
        for tid in range(min(vocab_size, self.lltok.vocab_size)):
            text = b"" if self.lltok.is_special_token(tid) else self.lltok.decode_bytes([tid])
            if text:
                self.by_bytes.setdefault(text, tid)
        # Closing moves: inside a string, end it; outside, end a list or object, or open a list (for "[]").
        self.quote = [self.by_bytes[b'"']]
        self.closers = [self.by_bytes[b] for b in (b"]", b"}", b"[") if b in self.by_bytes]
        self.max_piece = max(len(b) for b in self.by_bytes)
        self.reserve = self._closing_cost() + 16  # tokens kept back to finish any plan

    def matcher(self) -> Any:
        import llguidance

        return llguidance.LLMatcher(self.lltok, self.grammar)

    def _closing_cost(self) -> int:
        """Tokens the closer needs from the very start (the worst state): a minimal valid plan."""
        import llguidance.torch as lt
        import torch

        matcher, bitmask, state = self.matcher(), lt.allocate_token_bitmask(1, self.vocab_size), (False, False)
        for used in range(4096):
            scores = torch.zeros(1, self.vocab_size)
            _restrict(matcher, bitmask, scores, self, closing=True, in_string=state[0])
            token = int(scores[0].argmax())
            if token in self.stop_ids:
                return used + 1
            if not matcher.consume_token(token):
                raise RuntimeError(f"plan grammar closer broke the grammar: {matcher.get_error()}")
            state = _scan(state, self.lltok.decode_bytes([token]))
        raise RuntimeError("plan grammar closer did not terminate")


def _scan(state: tuple[bool, bool], text: bytes) -> tuple[bool, bool]:
    """(inside a JSON string, after a backslash) once ``text`` is appended."""
    inside, escaped = state
    for byte in text:
        if escaped:
            escaped = False
        elif byte == 0x5C and inside:
            escaped = True
        elif byte == 0x22:
            inside = not inside
    return inside, escaped


def _restrict(
    matcher: Any, bitmask: Any, scores: Any, comp: _Compiled, closing: bool, row: int = 0, in_string: bool = False
) -> None:
    """Mask ``scores[row]`` to the grammar; when ``closing``, only to moves that finish the JSON fastest."""
    mask_to_grammar(matcher, bitmask, scores, row)
    if not closing:
        return
    forced = matcher.compute_ff_bytes()
    if forced:  # deterministic text ahead (keys, punctuation): take its longest single token
        for n in range(min(len(forced), comp.max_piece), 0, -1):
            tid = comp.by_bytes.get(forced[:n])
            if tid is not None and scores[row, tid] != float("-inf"):
                return _only(scores, row, tid)
    for tid in (comp.quote if in_string else comp.closers) + comp.stop_ids:  # else leave the model's choice
        if scores[row, tid] != float("-inf"):
            return _only(scores, row, tid)


def mask_to_grammar(matcher: Any, bitmask: Any, scores: Any, row: int) -> None:
    """Set ``scores[row]`` to -inf for every token the llguidance ``matcher`` does not allow next."""
    import llguidance.torch as lt
    import torch

    lt.fill_next_token_bitmask(matcher, bitmask, row)
    # Unpack the 32-bit words here: llguidance's own apply goes through torch.compile (seconds, needs a C compiler).
    bits = (bitmask[row].unsqueeze(-1) >> torch.arange(32, dtype=torch.int32)) & 1
    scores[row].masked_fill_(bits.flatten()[: scores.shape[1]] == 0, float("-inf"))


def only_stop_tokens(scores: Any, row: int, stop_ids: list[int]) -> None:
    """Set ``scores[row]`` to -inf for every token but the stop tokens: the grammar's text is complete."""
    import torch

    done = torch.full_like(scores[row], float("-inf"))
    done[stop_ids] = scores[row, stop_ids]
    scores[row] = done


def checked_grammar(grammar: Any, lltok: Any, what: str) -> Any:
    """``grammar`` (llguidance's), once llguidance has found it valid for ``lltok``; ValueError if not."""
    import llguidance

    error = llguidance.LLMatcher.validate_grammar(grammar, lltok)
    if error and not error.startswith("WARNING"):
        raise ValueError(f"{what} rejected by llguidance: {error}")
    return grammar


def _only(scores: Any, row: int, tid: int) -> None:
    keep = scores[row, tid].clone()
    scores[row].fill_(float("-inf"))
    scores[row, tid] = keep


def _make_processor(comp: _Compiled, max_new_tokens: int | None) -> Any:
    import llguidance.torch as lt
    import torch
    from transformers import LogitsProcessor

    closing_from = None if max_new_tokens is None else max(max_new_tokens - comp.reserve, 0)

    class PlanGrammarProcessor(LogitsProcessor):
        """Masks logits to the plan grammar; stateful, so one per generate() call."""

        def __init__(self) -> None:
            self.matchers: list[Any] = []
            self.states: list[tuple[bool, bool]] = []
            self.generated = 0  # counted here, not from input_ids' width: a row may continue in a later pass

        def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
            if not self.matchers:
                self.matchers = [comp.matcher() for _ in range(input_ids.shape[0])]
                self.states = [(False, False)] * input_ids.shape[0]
                self.bitmask = lt.allocate_token_bitmask(input_ids.shape[0], comp.vocab_size)
            else:
                self.generated += 1
                for row, matcher in enumerate(self.matchers):
                    token = int(input_ids[row, -1])
                    if matcher.is_stopped():
                        continue
                    if not matcher.consume_token(token):
                        raise RuntimeError(f"token {token} broke the plan grammar: {matcher.get_error()}")
                    if closing_from is not None:
                        self.states[row] = _scan(self.states[row], comp.lltok.decode_bytes([token]))
            closing = closing_from is not None and self.generated >= closing_from
            view = scores[:, : comp.vocab_size]
            if scores.shape[1] > comp.vocab_size:
                scores[:, comp.vocab_size :] = float("-inf")
            for row, matcher in enumerate(self.matchers):
                if matcher.is_stopped():  # JSON complete: only a stop token
                    only_stop_tokens(view, row, comp.stop_ids)
                else:
                    _restrict(matcher, self.bitmask, view, comp, closing, row, self.states[row][0])
            return scores

    return PlanGrammarProcessor()


def ll_tokenizer(model: Any, tokenizer: Any) -> tuple[Any, list[int], int]:
    """(llguidance's view of ``tokenizer``, the stop ids, the model's vocabulary size). The view takes about
    0.6 s to build, so it is built once per tokenizer and shared by every grammar (plans, lark_grammar.py)."""
    import llguidance.hf

    vocab_size = int(model.get_output_embeddings().weight.shape[0])
    stop = _stop_ids(model, tokenizer)
    key = (id(tokenizer), tuple(stop), vocab_size)
    with _lock:
        hit = _tokenizers.get(key)
        if hit is None or hit[0] is not tokenizer:
            lltok = llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab_size, eos_token=stop)
            hit = _tokenizers[key] = (tokenizer, lltok)
    return hit[1], stop, vocab_size


def _compiled_for(model: Any, tokenizer: Any, schema_model: Any) -> _Compiled:
    lltok, stop, vocab_size = ll_tokenizer(model, tokenizer)
    regex = schema_regex(schema_model)
    key = (id(lltok), regex)
    with _lock:
        hit = _compiled.get(key)
        if hit is None or hit[0] is not lltok:
            hit = _compiled[key] = (lltok, _Compiled(lltok, vocab_size, stop, regex))
    return hit[1]


def available() -> bool:
    """Whether the grammar engine (llguidance) is importable."""
    try:
        # Engine: llguidance -- 0.07 ms/token mask with string escapes; xgrammar stalls (150+ ms) on them.
        import llguidance  # noqa: F401
    except ImportError:
        return False
    return True


def grammar_processor(
    model: Any, tokenizer: Any, schema_model: Any, *, max_new_tokens: int | None = DEFAULT_MAX_NEW_TOKENS
) -> Any:
    """A transformers LogitsProcessor that constrains generation to ``schema_model`` JSON, then stops.

    Stateful (one llguidance matcher per row of the batch it first sees), so one per generate call.
    ``max_new_tokens`` must be the budget the call generates with: the processor keeps enough tokens back to
    close the JSON before it runs out (None disables that guard). Needs llguidance (``available()``).
    The compiled grammar is cached per (tokenizer, schema), so only the first call per schema pays for it.
    """
    return _make_processor(_compiled_for(model, tokenizer, schema_model), max_new_tokens)
