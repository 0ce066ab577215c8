"""Prompt prefixes whose keys and values are computed once and reused: the system prompt, the worked examples
and the earlier steps' turns that a run's planner and code calls start with.

Why: on 4 GSM8K dev tasks at concurrency 4, prefills took ~30% of the wall, and 68% of the prompt tokens
repeated the start of an earlier prompt (docs/benchmarks.md, "Prompt prefixes computed once").

How: a row's ``prefix_bounds`` are the token offsets where its messages before the last one end (at most one
per MIN_CHUNK_TOKENS; LocalChatModel sets them). The running batch (decode.py) takes the keys and values of
each chunk between two bounds from here, keyed by all the ids up to the chunk's end, or computes the chunk on
top of the chunks before it and keeps it; then it prefills only the rest of the row. A run's next code call
repeats the last one's messages and adds a turn, so it finds all but its newest chunks here.

Reproducibility: a chunk is always computed the same way, in one forward of exactly its ids on top of the
chunks before it, whether found here or not; so what a row computes does not depend on what was cached
before, and a seeded call alone still gives the same text every time. (Its logits differ from a prefill of
the whole prompt in the last bits, as a batched row's do.)

Why not a library: transformers' ``generate`` reuses a cache the caller passes for one prompt, and its
continuous batching (``generate_batch``) has no per-row logits processors (decode.py); vLLM's automatic prefix
caching is what this does, for hierplan's own running batch.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

# Memory kept for chunks (keys and values of every layer); the least recently used go first. The embedded
# model needs ~23 KB per token, so this holds ~11k prompt tokens: the shared parts of many prompts.
PREFIX_STORE_BYTES = 256 * 2**20
# A chunk ends at the first message boundary at least this many tokens after the last: a forward of its own
# costs about one decode step (~20-30 ms on the embedded model), which a few dozen tokens do not repay.
MIN_CHUNK_TOKENS = 64

Layers = list[tuple[Any, Any]]
"""Per layer, (keys, values) of one row: [1, kv_heads, tokens, head_dim] tensors."""


def chunk_bounds(boundaries: list[int], limit: int) -> tuple[int, ...]:
    """The message ``boundaries`` (token offsets) where chunks end: each the first at least MIN_CHUNK_TOKENS
    after the previous end; all below ``limit`` (a prompt keeps a token to prefill)."""
    bounds, last = [], 0
    for end in boundaries:
        if end - last >= MIN_CHUNK_TOKENS and end < limit:
            bounds.append(end)
            last = end
    return tuple(bounds)


class PrefixStore:
    """An LRU map from the ids up to a chunk's end to that chunk's layers, bounded by ``max_bytes``; used on
    the torch thread only (no lock)."""

    def __init__(self, max_bytes: int = PREFIX_STORE_BYTES):
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        """Chunks found here (tests and benchmarks read it)."""
        self.computed = 0
        """Chunks computed (whether kept or not)."""
        self._entries: OrderedDict[tuple[int, ...], tuple[Layers, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, ids: tuple[int, ...]) -> Layers | None:
        entry = self._entries.get(ids)
        if entry is None:
            return None
        self._entries.move_to_end(ids)
        self.hits += 1
        return entry[0]

    def put(self, ids: tuple[int, ...], layers: Layers) -> None:
        """Keep ``layers`` for ``ids``, dropping the least recently used beyond ``max_bytes`` (a chunk larger
        than all of it is not kept)."""
        self.computed += 1
        size = sum(t.numel() * t.element_size() for pair in layers for t in pair)
        if size > self.max_bytes or ids in self._entries:
            return
        self._entries[ids] = (layers, size)
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= dropped
