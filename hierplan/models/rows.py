"""One generate pass over rows that each keep their own sampling, budget, seed, constraints and streaming.

A row is one conversation's prompt ids plus how to continue it. Rows from different callers share one
left-padded ``model.generate`` call; generate itself runs greedy, and ``RowLogits`` does every row's
sampling: repetition penalty (prompt tokens only, padding excluded), the row's own logits processors (the
plan grammar), temperature and top-p, then a draw from the row's own ``torch.Generator`` seeded by its call
seed. It leaves only the drawn token possible, so generate's argmax takes it. ``RowStops`` records each
row's new tokens, ends a row at a stop token, at its own token budget, or when its caller gave up.

Reproducibility: a row draws from its own generator, so its random numbers depend on its seed alone, never
on which other rows share the pass, nor on whether it was paused and continued in a later pass (batcher.py).
The logits it draws from are the same computation alone or batched except for floating-point rounding
(padding and batch size change matmul shapes), so a seeded call gives the same text every time it runs
alone, and batched almost always the same text (a near-tie between two tokens can flip).
Heavy imports (torch, transformers) happen inside functions.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable


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
    on_token: Callable[[int], None] | None = None
    """Called on the torch thread with each new token id (streaming); stop tokens are not passed."""
    abandoned: threading.Event = field(default_factory=threading.Event)
    generated: list[int] = field(default_factory=list)
    finish: str | None = None
    """"stop" (a stop token), "length" (the budget) or "abandoned"; "paused" while it waits to continue in a
    later pass (batcher.py), which then generates on from ``ids + generated``."""
    generator: Any = None
    """The row's own random generator, made at its first pass and kept across passes."""

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


class RowStops:
    """StoppingCriteria: per-row done flags; records new tokens and streams them. When ``pause(step, live)``
    says so, every row still going is paused (to continue in the next pass with newly arrived rows)."""

    def __init__(self, rows: list[Row], stop_ids: set[int], pause: Callable[[int, int], bool] | None = None):
        self.rows, self.stop_ids, self.pause, self.step = rows, stop_ids, pause, 0

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        self.step += 1
        last = input_ids[:, -1].tolist()
        for row, token in zip(self.rows, last):
            if row.finish is not None:
                continue
            if token in self.stop_ids:
                row.finish = "stop"
                continue
            row.generated.append(token)
            if row.on_token is not None:
                row.on_token(token)
            if row.abandoned.is_set():
                row.finish = "abandoned"
            elif len(row.generated) >= row.max_new_tokens:
                row.finish = "length"
        live = [row for row in self.rows if row.finish is None]
        if live and self.pause is not None and self.pause(self.step, len(live)):
            for row in live:
                row.finish = "paused"
        return torch.tensor([row.finish is not None for row in self.rows], dtype=torch.bool)


class RowLogits:
    """LogitsProcessor: each row's penalty, constraints and sampling (see the module docstring)."""

    def __init__(self, rows: list[Row], lengths: list[int], stop_ids: set[int], input_ids: Any):
        import torch

        self.rows, self.stop_ids = rows, sorted(stop_ids)
        for row in rows:
            if row.generator is None and not row.greedy:
                row.generator = _make_generator(row.seed)
        prompt_len = input_ids.shape[1]
        # Repetition penalty reads the prompt without its left padding: padded positions point at the row's
        # first real token, which is penalised anyway, so padding never changes a row's logits.
        lengths = torch.tensor(lengths)
        positions = torch.arange(prompt_len).unsqueeze(0)
        self.is_pad = positions < (prompt_len - lengths).unsqueeze(1)
        self.first = input_ids[torch.arange(len(rows)), prompt_len - lengths].unsqueeze(1)
        self.penalty = torch.tensor([[r.repetition_penalty] for r in rows], dtype=torch.float32)
        self.prompt_len = prompt_len

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        live = [i for i, r in enumerate(self.rows) if r.finish is None]
        if any(self.rows[i].repetition_penalty != 1.0 for i in live):
            self._penalise(input_ids, scores)
        for i in live:
            row = self.rows[i]
            for processor in row.processors:
                scores[i : i + 1] = processor(input_ids[i : i + 1], scores[i : i + 1])
            if len(row.generated) < row.min_new_tokens:
                scores[i, self.stop_ids] = float("-inf")
            if not row.greedy:
                token = self._draw(scores[i], row, row.generator)
                scores[i].fill_(float("-inf"))
                scores[i, token] = 0.0
        return scores

    def _penalise(self, input_ids: Any, scores: Any) -> None:
        import torch

        pad = torch.cat([self.is_pad, torch.zeros(input_ids.shape[0], input_ids.shape[1] - self.prompt_len,
                                                  dtype=torch.bool)], dim=1)
        ids = torch.where(pad, self.first, input_ids)
        seen = torch.gather(scores, 1, ids)
        penalty = self.penalty.to(scores.dtype)
        scores.scatter_(1, ids, torch.where(seen < 0, seen * penalty, seen / penalty))

    @staticmethod
    def _draw(logits: Any, row: Row, generator: Any) -> int:
        import torch

        probs = torch.softmax(logits.float() / row.temperature, dim=-1)
        if row.top_p < 1.0:
            sorted_probs, order = torch.sort(probs, descending=True)
            # Keep the smallest prefix whose mass reaches top_p (at least one token).
            drop = (torch.cumsum(sorted_probs, dim=-1) - sorted_probs) >= row.top_p
            sorted_probs[drop] = 0.0
            return int(order[torch.multinomial(sorted_probs, 1, generator=generator)])
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


def generate_rows(model: Any, rows: list[Row], stop_ids: set[int], pad_id: int,
                  pause: Callable[[int, int], bool] | None = None) -> None:
    """One greedy generate pass over ``rows`` (RowLogits does the sampling); fills each row's result.

    A row continues from ``ids + generated`` (a row paused in an earlier pass goes on where it stopped, with
    the same generator, so it draws what it would have drawn in one pass)."""
    import copy

    from transformers import LogitsProcessorList, StoppingCriteriaList

    contexts = [row.ids + row.generated for row in rows]
    ids, mask = left_pad(contexts, pad_id)
    ids, mask = ids.to(model.device), mask.to(model.device)
    config = copy.deepcopy(model.generation_config)
    for name in ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "min_new_tokens"):
        setattr(config, name, None)
    config.do_sample, config.max_length = False, None
    config.max_new_tokens = max(r.max_new_tokens - len(r.generated) for r in rows)
    config.eos_token_id, config.pad_token_id = sorted(stop_ids), pad_id
    logits = RowLogits(rows, [len(c) for c in contexts], stop_ids, ids.cpu())
    model.generate(input_ids=ids, attention_mask=mask, generation_config=config,
                   logits_processor=LogitsProcessorList([_OnCpu(logits)]),
                   stopping_criteria=StoppingCriteriaList([RowStops(rows, stop_ids, pause)]))
    for row in rows:
        row.finish = row.finish or "length"


class _OnCpu:
    """Runs a processor on CPU tensors (per-row generators are CPU generators) and moves the result back."""

    def __init__(self, inner: RowLogits):
        self.inner = inner

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if scores.device.type == "cpu":
            return self.inner(input_ids, scores)
        return self.inner(input_ids.cpu(), scores.float().cpu()).to(scores.device, scores.dtype)
