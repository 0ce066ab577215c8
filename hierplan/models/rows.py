"""A row: one conversation's prompt ids plus how to continue it, with its own sampling, budget, seed,
constraints and streaming; and how a row picks and records its next token from its logits.

Rows from different callers share forward passes (decode.py); each row's next token is chosen here, from its
own logits: repetition penalty (the tokens it has seen), its own logits processors (the plan grammar), no stop
token before ``min_new_tokens``, then greedy, or temperature and top-p and a draw from the row's own
``torch.Generator`` seeded by its call seed. ``record`` appends the token, streams it, and ends the row at a
stop token, at its own token budget, or when its caller gave up.

Reproducibility: a row draws from its own generator, so its random numbers depend on its seed alone, never
on which other rows share its steps or when they joined. The logits it draws from are the same computation
alone or batched except for floating-point rounding (padding and batch size change matmul shapes), so a
seeded call gives the same text every time it runs alone, and batched almost always the same text (a
near-tie between two tokens can flip). Heavy imports (torch) happen inside functions.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from hierplan.schema import LOOP_FINISH

# Tokens looked at first for top-p sampling (see _draw).
TOP_P_CANDIDATES = 64


@dataclass
class Row:
    """A prompt and how to continue it; ``generated`` and ``finish`` are filled in by the pass."""

    ids: list[int]
    max_new_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    min_new_tokens: int = 0
    seed: int | None = None
    processors: list[Any] = field(default_factory=list)
    """LogitsProcessors for this row alone, called with the row's [1, vocab] slice."""
    stop_when: Callable[[list[int]], bool] | None = None
    """Called with the generated ids after each token; True ends the row ("repetition": repeated_lines.py)."""
    on_token: Callable[[int], None] | None = None
    """Called on the torch thread with each new token id (streaming); stop tokens are not passed."""
    abandoned: threading.Event = field(default_factory=threading.Event)
    generated: list[int] = field(default_factory=list)
    finish: str | None = None
    """"stop" (a stop token), "length" (the budget), "repetition" (``stop_when``) or "abandoned"; None while it
    is still going."""
    generator: Any = None
    """The row's own random generator, made when it starts."""

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0


def _make_generator(seed: int | None) -> Any:
    import torch

    generator = torch.Generator()
    if seed is None:
        generator.seed()  # nondeterministic, like an unseeded call
    else:
        generator.manual_seed(int(seed) % (2**63))
    return generator


def choose_token(row: Row, logits: Any, stop_ids: list[int]) -> int:
    """The row's next token from its ``logits`` ([vocab], float32, CPU; changed in place)."""
    import torch

    context = None
    if row.repetition_penalty != 1.0:
        context = torch.tensor(row.ids + row.generated, dtype=torch.long)
        seen = logits[context]
        logits[context] = torch.where(seen < 0, seen * row.repetition_penalty, seen / row.repetition_penalty)
    if row.processors:  # transformers' LogitsProcessor convention: ([1, length] ids, [1, vocab] scores)
        ids = (context if context is not None else torch.tensor(row.ids + row.generated, dtype=torch.long))[None]
        scores = logits[None]
        for processor in row.processors:
            scores = processor(ids, scores)
        logits = scores[0]
    if len(row.generated) < row.min_new_tokens:
        logits[stop_ids] = float("-inf")
    if row.greedy:
        return int(logits.argmax())
    if row.generator is None:
        row.generator = _make_generator(row.seed)
    return _draw(logits, row, row.generator)


def record(row: Row, token: int, stop_ids: set[int]) -> None:
    """Append ``token`` to the row (or end it there if it is a stop token), stream it, and end the row at its
    budget, when its ``stop_when`` says so, or when its caller gave up."""
    if token in stop_ids:
        row.finish = "stop"
        return
    row.generated.append(token)
    if row.on_token is not None:
        row.on_token(token)
    if row.abandoned.is_set():
        row.finish = "abandoned"
    elif len(row.generated) >= row.max_new_tokens:
        row.finish = "length"
    elif row.stop_when is not None and len(row.generated) >= row.min_new_tokens and row.stop_when(row.generated):
        row.finish = LOOP_FINISH  # not before min_new_tokens: benchmarks that ask for equal lengths get them


def _draw(logits: Any, row: Row, generator: Any) -> int:
    import torch

    probs = torch.softmax(logits / row.temperature, dim=-1)
    if row.top_p < 1.0:
        # The smallest prefix of tokens by probability whose mass reaches top_p (at least one token). A full
        # sort of a 49k vocabulary took 2.6 ms per row and token, two thirds of a row's sampling; the prefix
        # almost always lies in the TOP_P_CANDIDATES most likely tokens (0.1 ms), so sort all only when not.
        top, order = torch.topk(probs, min(TOP_P_CANDIDATES, probs.numel()))
        if float(top.sum()) < row.top_p and top.numel() < probs.numel():
            top, order = torch.sort(probs, descending=True)
        top[(torch.cumsum(top, dim=-1) - top) >= row.top_p] = 0.0
        return int(order[torch.multinomial(top, 1, generator=generator)])
    return int(torch.multinomial(probs, 1, generator=generator))


def left_pad(contexts: list[list[int]], pad_id: int) -> tuple[Any, Any]:
    """(input_ids, attention_mask) with every context right-aligned."""
    import torch

    width = max(len(c) for c in contexts)
    ids = torch.full((len(contexts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(contexts), width), dtype=torch.long)
    for i, context in enumerate(contexts):
        ids[i, width - len(context):] = torch.tensor(context, dtype=torch.long)
        mask[i, width - len(context):] = 1
    return ids, mask
