"""A straight-line program under ``python_scope`` reads only names in scope or assigned on an earlier line."""

from __future__ import annotations

import pytest

from hierplan.models.name_scope import MAX_DEPTH, scope_processor, text_reads_ok

SCOPE = {"cost"}
CALLS = {"round", "min", "sum"}


@pytest.mark.parametrize("text", [
    "```python\nx = 3\ny = x + cost\nprint(round(y, 2))\n```",
    "```python\nprint(co",  # the start of a name in scope
    "```python\ntotal",  # a line's first name may still become a target
    "```python\ntotal = 5",
    "```python\nx = 'total price'.split(",  # strings and methods are free
    "```python\nx = \"it's",  # an open string
    "```python\nx = cost.real",
    "```python\nx = min",  # a called name, whole
    "```python\nx = min(cost, 2)\nprint(round(x))\n```",
    "```python\nx = " + "(" * (MAX_DEPTH - 2) + "sum",  # room left for `sum([`
])
def test_admits(text):
    assert text_reads_ok(text, SCOPE, CALLS)


@pytest.mark.parametrize("text", [
    "```python\nprint(total)",  # never assigned
    "```python\nprint(tot",  # the start of no name in scope
    "```python\nx = x + 1",  # assigned only once the line is done
    "```python\ny = x\nx = 3",  # assigned on a later line
    "```python\nx = 'a' + str",  # a builtin not in scope
    "```python\nprint(cost)\nprint(total)\n",
    "```python\nx = m",  # a called name is not written bit by bit: `m` would turn every m-name into min(
    "```python\nx = (print",  # print only starts a line
    "```python\nx = " + "(" * (MAX_DEPTH - 1) + "sum",  # no room for `sum([`
    "```python\nx = " + "(" * (MAX_DEPTH + 1),
])
def test_refuses(text):
    assert not text_reads_ok(text, SCOPE, CALLS)


class CharTokenizer:
    """Token i is VOCAB[i]; decoding joins them."""

    VOCAB = ["```python\n", "x", " = ", "3", "\n", "print(", "cost", "total", ")", "co", "tal"]

    def __len__(self) -> int:
        return len(self.VOCAB)

    def batch_decode(self, ids, skip_special_tokens=False):
        return [self.decode(i) for i in ids]

    def decode(self, ids, skip_special_tokens=False):
        return "".join(self.VOCAB[i] for i in ids)


def _allowed(processor, generated: list[int], scores: list[float]) -> set[str]:
    import torch

    prompt = [0, 0]
    processor(torch.tensor([prompt]), torch.zeros(1, len(scores)))  # first called on the prompt alone
    out = processor(torch.tensor([prompt + generated]), torch.tensor([scores]))[0]
    return {CharTokenizer.VOCAB[i] for i in range(len(scores)) if torch.isfinite(out[i])}


def test_the_processor_keeps_only_tokens_that_read_names_in_scope_or_assigned():
    tok = CharTokenizer()
    scores = [float(i) for i in range(len(tok))]
    after_print = [0, 1, 2, 3, 4, 5]  # "```python\nx = 3\nprint("
    allowed = _allowed(scope_processor(tok, {"cost"}), after_print, scores)
    assert {"x", "cost", "co", "3", ")"} <= allowed
    assert "total" not in allowed and "tal" not in allowed


def test_the_processor_keeps_the_grammar_mask():
    tok = CharTokenizer()
    scores = [float("-inf")] * len(tok)
    scores[7] = 5.0  # only "total", which is not in scope, and "3"
    scores[3] = 1.0
    allowed = _allowed(scope_processor(tok, set()), [0, 1, 2, 3, 4, 5], scores)
    assert allowed == {"3"}


def test_when_none_of_the_best_tokens_keep_the_scope_every_allowed_token_is_checked(monkeypatch):
    from hierplan.models import name_scope

    monkeypatch.setattr(name_scope, "SCOPE_CANDIDATES", 2)
    tok = CharTokenizer()
    scores = [float("-inf")] * len(tok)
    scores[7], scores[10], scores[6] = 5.0, 4.0, 0.5  # "total", "tal" out of scope; "cost" in it, ranked third
    processor = scope_processor(tok, {"cost"})
    assert _allowed(processor, [0, 1, 2, 3, 4, 5], scores) == {"cost"}
    assert not processor.stuck


def test_when_no_allowed_token_keeps_the_scope_the_model_writes_on_unchecked():
    tok = CharTokenizer()
    scores = [float("-inf")] * len(tok)
    scores[7] = 5.0  # only "total"
    processor = scope_processor(tok, set())
    assert _allowed(processor, [0, 1, 2, 3, 4, 5], scores) == {"total"}
    assert processor.stuck
