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

# Temperature-scaled logits (natural log of a token's probability over the top token's) are floored here
# before exp (see _draw).
EXP_FLOOR = -80.0
# Tokens above this are the first candidates for the top-p nucleus (see nucleus).
NUCLEUS_FLOOR = -20.0


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
    prefix_bounds: tuple[int, ...] = ()
    """Offsets in ``ids`` where chunks of a prompt prefix other calls may share end (message boundaries before
    the last message): the running batch computes each chunk once and reuses it (prefix_store.py)."""
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
    prompt_array: Any = field(default=None, repr=False)
    """``ids`` as an int64 array, made when first needed (repetition penalty, processors)."""

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
    """The row's next token from its ``logits`` ([vocab], float32, contiguous, CPU; changed in place).

    The per-row work runs on a NumPy view of the logits: torch's 1-D reductions over a 49k vocabulary (argmax,
    topk, softmax) cost 100-500 us each per call on this CPU, NumPy's 4-35 us, and this runs once per row and
    token on the thread every row waits for (docs/benchmarks.md, "Choosing a row's token")."""
    import numpy as np

    scores = logits.numpy()  # shares memory with logits: the processors below see the penalty
    context = _context(row) if row.repetition_penalty != 1.0 or row.processors else None
    if row.repetition_penalty != 1.0:
        values = scores[context]
        scores[context] = np.where(values < 0, values * row.repetition_penalty, values / row.repetition_penalty)
    if row.processors:  # transformers' LogitsProcessor convention: ([1, length] ids, [1, vocab] scores)
        import torch

        ids = torch.from_numpy(context)[None]
        tensor = logits[None]
        for processor in row.processors:
            tensor = processor(ids, tensor)
        scores = np.ascontiguousarray(tensor[0].numpy())
    if len(row.generated) < row.min_new_tokens:
        scores[stop_ids] = -np.inf
    if row.greedy:
        return int(scores.argmax())
    if row.generator is None:
        row.generator = _make_generator(row.seed)
    return _draw(scores, row, row.generator)


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


def _context(row: Row) -> Any:
    """The row's prompt and generated ids as one int64 array (the prompt's part made once)."""
    import numpy as np

    if row.prompt_array is None:
        row.prompt_array = np.asarray(row.ids, dtype=np.int64)
    return np.concatenate([row.prompt_array, np.asarray(row.generated, dtype=np.int64)])


def _draw(scores: Any, row: Row, generator: Any) -> int:
    """A token drawn from the row's temperature-scaled, top-p-cut distribution over ``scores`` (a float32
    array); the random number comes from the row's own ``generator``."""
    import numpy as np
    import torch

    top = scores.max()
    if not top > -np.inf:
        raise ValueError("every token is ruled out for this row")
    scaled = scores - top
    scaled *= np.float32(1.0 / row.temperature)
    # float32 exp below about -87 gives denormals, and x86 computes with them ~10x slower (exp over the 49k
    # vocabulary: 380 us, floored: 33 us). A weight of e^-80 next to the top token's 1 is below float32's
    # resolution of their sum, so no draw changes; tokens ruled out (-inf) are set back to exactly 0.
    weights = np.exp(np.maximum(scaled, EXP_FLOOR))
    if scores.min() == -np.inf:
        weights[np.isneginf(scores)] = 0.0
    ids = None
    if row.top_p < 1.0:
        ids, weights = nucleus(scaled, weights, row.top_p)
    cumulative = np.cumsum(weights, dtype=np.float64)
    u = float(torch.rand((), generator=generator, dtype=torch.float64))
    index = min(int(np.searchsorted(cumulative, u * cumulative[-1], side="right")), len(cumulative) - 1)
    return index if ids is None else int(ids[index])


def nucleus(scaled: Any, weights: Any, top_p: float) -> tuple[Any, Any]:
    """(ids, weights) of the smallest set of most likely tokens whose probability reaches ``top_p`` (at least
    one token), most likely first; ties keep vocabulary order.

    Sorting the 49k vocabulary takes ~3 ms per row and token; the nucleus almost always lies among the tokens
    within e^-20 of the top one (a handful), so only those are sorted unless their mass falls short."""
    import numpy as np

    total = float(weights.sum())  # float32, pairwise: relative error ~1e-7
    ids = np.flatnonzero(scaled > NUCLEUS_FLOOR)
    if float(weights[ids].sum()) < top_p * total:
        ids = np.arange(len(weights))
    ids = ids[np.argsort(-weights[ids], kind="stable")]
    kept = weights[ids]
    before = np.cumsum(kept, dtype=np.float64) - kept  # the mass of the more likely tokens
    keep = max(1, int(np.count_nonzero(before < top_p * total)))
    return ids[:keep], kept[:keep]


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
