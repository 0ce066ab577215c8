"""What the token-level processors need to know about a tokenizer's vocabulary, built once per tokenizer:
each token's text (name_scope.py reads names in it), and the tokens that hold a newline (repeated_lines.py
checks a row only when one was generated)."""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_vocab: dict[int, tuple[Any, list[str], frozenset[int]]] = {}  # id(tokenizer) -> (tokenizer, texts, newline ids)


def _entry(tokenizer: Any) -> tuple[Any, list[str], frozenset[int]]:
    with _lock:
        hit = _vocab.get(id(tokenizer))
        if hit is None or hit[0] is not tokenizer:
            texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))], skip_special_tokens=True)
            hit = _vocab[id(tokenizer)] = (tokenizer, texts, frozenset(i for i, t in enumerate(texts) if "\n" in t))
    return hit


def token_texts(tokenizer: Any) -> list[str]:
    """Each token id's text (decoded alone)."""
    return _entry(tokenizer)[1]


def newline_ids(tokenizer: Any) -> frozenset[int]:
    """The ids of the tokens whose text holds a newline."""
    return _entry(tokenizer)[2]
