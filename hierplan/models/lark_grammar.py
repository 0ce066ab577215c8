"""Generation constrained to a Lark grammar: the local chat model's ``grammar=`` call option.

``lark_processor(model, tokenizer, lark)`` returns a logits processor (one per call: it keeps the row's
grammar state) that lets a row emit only text the grammar derives, then only a stop token. The Python step
asks for it when it repairs a program that did not parse or printed nothing (hierplan.nodes.python_step).
Unlike the plan grammar (constrained.py) nothing here closes the text before the token budget runs out: a
program cut off there fails like any other and is recorded. Engine: llguidance, as for plans.
"""

from __future__ import annotations

import threading
from typing import Any

from hierplan.models import torch_thread
from hierplan.models.constrained import checked_grammar, ll_tokenizer, mask_to_grammar, only_stop_tokens

_lock = threading.Lock()
_grammars: dict[tuple, Any] = {}  # (id(llguidance tokenizer), grammar text) -> (llguidance tokenizer, grammar)


def _compile(model: Any, tokenizer: Any, lark: str) -> tuple[Any, Any, list[int], int]:
    import llguidance

    lltok, stop, vocab_size = ll_tokenizer(model, tokenizer)
    key = (id(lltok), lark)
    with _lock:
        hit = _grammars.get(key)
        if hit is None or hit[0] is not lltok:
            grammar = checked_grammar(llguidance.LLMatcher.grammar_from_lark(lark), lltok, "grammar")
            hit = _grammars[key] = (lltok, grammar)
    return lltok, hit[1], stop, vocab_size


def lark_processor(model: Any, tokenizer: Any, lark: str) -> Any:
    """A transformers LogitsProcessor for one row: only text ``lark`` derives, then a stop token."""
    import llguidance
    import llguidance.torch as lt
    import torch
    from transformers import LogitsProcessor

    lltok, grammar, stop_ids, vocab_size = torch_thread.run(_compile, model, tokenizer, lark)

    class LarkGrammarProcessor(LogitsProcessor):
        def __init__(self) -> None:
            self.matcher = llguidance.LLMatcher(lltok, grammar)
            self.bitmask = lt.allocate_token_bitmask(1, vocab_size)
            self.started = False

        def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
            if self.started and not self.matcher.is_stopped():
                token = int(input_ids[0, -1])
                if not self.matcher.consume_token(token):
                    raise RuntimeError(f"token {token} broke the grammar: {self.matcher.get_error()}")
            self.started = True
            view = scores[:, :vocab_size]
            if scores.shape[1] > vocab_size:
                scores[:, vocab_size:] = float("-inf")
            if self.matcher.is_stopped():  # the text is complete: only a stop token
                only_stop_tokens(view, 0, stop_ids)
            else:
                mask_to_grammar(self.matcher, self.bitmask, view, 0)
            return scores

    return LarkGrammarProcessor()
