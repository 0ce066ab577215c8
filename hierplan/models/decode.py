"""A running batch: rows join it between decode steps and leave it the step they finish.

Why not ``model.generate``: its batch is fixed for the whole call. A finished row keeps costing a full row
of compute until the longest row ends (in a logged 10-row pass of 4 concurrent runs, 8 rows were done by
step 70 and the pass ran 320 steps), and a row that arrives meanwhile waits for the whole call. transformers'
continuous batching (``generate_batch``) joins and drops rows, but takes one set of logits processors for
all requests, and hierplan's rows each carry their own (the plan grammar, seeded sampling).

So this loop calls the model's forward itself with a cache: one step feeds every live row's last token;
finished rows leave through the cache's ``batch_select_indices``; new rows are prefilled on their own and
merged in, both caches left-padded to one width (padding is masked out, and positions count real tokens
only, so a row computes what it would alone, up to rounding).

The cache is transformers' public ``Cache(layers=...)`` of ``GrowingLayer``s: a ``DynamicLayer`` whose keys
and values live in a buffer with room to grow, because ``DynamicLayer.update`` concatenates the whole cache
at every step (at 1,200 tokens of context a 4-row step took 38.7 ms with it, 30.8 ms without). Models whose
cache has other layers (sliding windows) get their own ``DynamicCache``, and new rows wait until the batch
is empty instead of joining (``can_join``).
"""

from __future__ import annotations

from typing import Any

from hierplan.models.prefix_store import Layers, PrefixStore
from hierplan.models.rows import Row, choose_token, left_pad, record

# Left columns that padding alone fills (after long rows left) before the cache is cut down to the rows left.
COMPACT_MIN_COLUMNS = 64
# Columns a GrowingLayer's buffer gains each time it is full.
GROW_COLUMNS = 256


class RunningBatch:
    """Rows decoding together on one model; ``add`` rows, ``step`` until ``live`` is empty."""

    def __init__(self, model: Any, stop_ids: set[int], pad_id: int, prefixes: PrefixStore | None = None):
        self.model, self.pad_id = model, pad_id
        self.prefixes = prefixes if prefixes is not None and _mergeable(new_cache(model)) else None
        """Where rows' prompt prefixes are kept (prefix_store.py); None: every row is prefilled whole."""
        self.stop_set, self.stop_list = set(stop_ids), sorted(stop_ids)
        self.live: list[Row] = []
        self.cache: Any = None
        self.mask: Any = None  # [rows, columns]: 1 for a real token, 0 for padding
        self.last: Any = None  # [rows, 1]: each row's newest token, fed at the next step

    @property
    def can_join(self) -> bool:
        """Whether rows can join now (always when empty; else only with a mergeable cache)."""
        return not self.live or _mergeable(self.cache)

    def add(self, rows: list[Row]) -> None:
        """Prefill ``rows`` (each from ``ids + generated``, on top of its stored prefix where it has one), pick
        their first tokens, and join the live ones."""
        import torch

        contexts = [row.ids + row.generated for row in rows]
        prefixes = [self._prefix(row) for row in rows]
        lengths = [_tokens(chunks) for chunks in prefixes]
        ids, mask = left_pad([context[n:] for context, n in zip(contexts, lengths)], self.pad_id)
        ids, mask = ids.to(self.model.device), mask.to(self.model.device)
        if any(lengths):  # [padding, prefix, padding, rest]: positions count real tokens, so holes are harmless
            cache, past_mask = _past(prefixes)
            mask = torch.cat([past_mask, mask], dim=1)
        else:
            cache = new_cache(self.model)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, mask.shape[1] - ids.shape[1]:]
        logits = self._forward(ids, mask, positions, cache)
        tokens = self._choose(rows, logits)
        keep = [i for i, row in enumerate(rows) if row.finish is None]
        if not keep:
            return
        if len(keep) < len(rows):
            cache.batch_select_indices(torch.tensor(keep, device=ids.device))
            mask, tokens = mask[keep], tokens[keep]
        if not self.live:
            self.cache, self.mask, self.last = cache, mask, tokens
        else:
            self.cache, self.mask = _merge(self.cache, self.mask, cache, mask)
            self.last = torch.cat([self.last, tokens])
        self.live += [rows[i] for i in keep]

    def step(self) -> None:
        """One new token for every live row; rows that finish leave the batch."""
        import torch

        ones = torch.ones_like(self.mask[:, :1])
        self.mask = torch.cat([self.mask, ones], dim=1)
        logits = self._forward(self.last, self.mask, self.mask.sum(-1, keepdim=True) - 1, self.cache)
        self.last = self._choose(self.live, logits)
        keep = [i for i, row in enumerate(self.live) if row.finish is None]
        if len(keep) == len(self.live):
            return
        self.live = [self.live[i] for i in keep]
        if not keep:
            self.cache = self.mask = self.last = None
            return
        index = torch.tensor(keep, device=self.mask.device)
        self.cache.batch_select_indices(index)
        self.mask, self.last = self.mask[index], self.last[index]
        self._compact()

    def _prefix(self, row: Row) -> list[Layers]:
        """The chunks of the row's prompt prefix (up to its last bound), from the store, a chunk not there
        computed on top of the ones before it; none when the row has no bounds (or this model's cache cannot
        take a prefix)."""
        chunks: list[Layers] = []
        if self.prefixes is None:
            return chunks
        start = 0
        for end in row.prefix_bounds:
            key = tuple(row.ids[:end])
            chunk = self.prefixes.get(key)
            if chunk is None:
                chunk = self._chunk(row.ids[start:end], chunks)
                self.prefixes.put(key, chunk)
            chunks.append(chunk)
            start = end
        return chunks

    def _chunk(self, ids: list[int], before: list[Layers]) -> Layers:
        """The layers of ``ids`` computed in one forward on top of the chunks ``before`` them."""
        import torch

        device = self.model.device
        start = _tokens(before)
        cache = _past([before])[0] if before else new_cache(self.model)
        mask = torch.ones(1, start + len(ids), dtype=torch.long, device=device)
        positions = torch.arange(start, start + len(ids), device=device)[None]
        self._forward(torch.tensor([ids], device=device), mask, positions, cache)
        return [(layer.keys[:, :, start:].clone(), layer.values[:, :, start:].clone()) for layer in cache.layers]

    def _forward(self, ids: Any, mask: Any, positions: Any, cache: Any) -> Any:
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache,
                         use_cache=True, logits_to_keep=1)
        return out.logits[:, -1, :]

    def _choose(self, rows: list[Row], logits: Any) -> Any:
        """Each row's next token (recorded on the row), as a [rows, 1] tensor on the model's device."""
        import torch

        scores = logits.float().cpu()  # rows' generators and grammars work on CPU tensors
        tokens = []
        for row, row_scores in zip(rows, scores):
            token = choose_token(row, row_scores, self.stop_list)
            record(row, token, self.stop_set)
            tokens.append(token)
        return torch.tensor(tokens, dtype=torch.long, device=logits.device)[:, None]

    def _compact(self) -> None:
        """Cut the columns that are padding in every row left (the rows that needed them are gone)."""
        first = int(self.mask.argmax(dim=1).min())  # leftmost real token of any row
        if first >= COMPACT_MIN_COLUMNS and _mergeable(self.cache):
            self.cache = _rebuild((layer.keys[:, :, first:], layer.values[:, :, first:])
                                  for layer in self.cache.layers)
            self.mask = self.mask[:, first:]


def new_cache(model: Any) -> Any:
    """An empty cache for ``model``: growing full-attention layers where the model has only those."""
    from transformers import DynamicCache
    from transformers.cache_utils import Cache, DynamicLayer

    dynamic = DynamicCache(config=model.config)
    if dynamic.layers and all(type(layer) is DynamicLayer for layer in dynamic.layers):
        return Cache(layers=[growing_layer() for _ in dynamic.layers])
    return dynamic


def _tokens(chunks: list[Layers]) -> int:
    """How many tokens the chunks of one prefix hold."""
    return sum(chunk[0][0].shape[2] for chunk in chunks)


def _past(prefixes: list[list[Layers]]) -> tuple[Any, Any]:
    """A cache holding each row's prefix, its chunks one after another (none for a row without), left-padded to
    the longest, and its mask."""
    import torch

    lengths = [_tokens(chunks) for chunks in prefixes]
    width = max(lengths)
    template = next(chunks[0] for chunks in prefixes if chunks)
    past = []
    for index, (keys, values) in enumerate(template):
        batch_keys = keys.new_zeros(len(prefixes), keys.shape[1], width, keys.shape[3])
        batch_values = values.new_zeros(len(prefixes), values.shape[1], width, values.shape[3])
        for row, (chunks, n) in enumerate(zip(prefixes, lengths)):
            at = width - n
            for chunk in chunks:
                size = chunk[index][0].shape[2]
                batch_keys[row, :, at:at + size] = chunk[index][0][0]
                batch_values[row, :, at:at + size] = chunk[index][1][0]
                at += size
        past.append((batch_keys, batch_values))
    mask = torch.zeros(len(prefixes), width, dtype=torch.long, device=template[0][0].device)
    for row, n in enumerate(lengths):
        if n:
            mask[row, width - n:] = 1
    return _rebuild(past), mask


def _mergeable(cache: Any) -> bool:
    growing = growing_layer_class()
    return bool(cache.layers) and all(isinstance(layer, growing) for layer in cache.layers)


def _rebuild(layers: Any) -> Any:
    from transformers.cache_utils import Cache

    rebuilt = []
    for keys, values in layers:
        layer = growing_layer()
        layer.update(keys, values)
        rebuilt.append(layer)
    return Cache(layers=rebuilt)


def _merge(cache: Any, mask: Any, other: Any, other_mask: Any) -> tuple[Any, Any]:
    """One cache (and mask) holding both batches' rows, each left-padded to the wider one."""
    import torch

    width = max(mask.shape[1], other_mask.shape[1])

    def pad(t: Any, dim: int) -> Any:
        missing = width - t.shape[dim]
        if not missing:
            return t
        shape = list(t.shape)
        shape[dim] = missing
        return torch.cat([t.new_zeros(shape), t], dim=dim)

    layers = [(torch.cat([pad(a.keys, 2), pad(b.keys, 2)]), torch.cat([pad(a.values, 2), pad(b.values, 2)]))
              for a, b in zip(cache.layers, other.layers)]
    return _rebuild(layers), torch.cat([pad(mask, 1), pad(other_mask, 1)])


_growing_layer_class: Any = None


def growing_layer_class() -> type:
    """GrowingLayer (made on first use: transformers is imported lazily)."""
    global _growing_layer_class
    if _growing_layer_class is None:
        _growing_layer_class = _make_growing_layer_class()
    return _growing_layer_class


def growing_layer() -> Any:
    return growing_layer_class()()


def _make_growing_layer_class() -> type:
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):
        """A DynamicLayer whose ``keys``/``values`` are views of buffers with GROW_COLUMNS spare columns, so a
        step writes its new column in place instead of copying the whole cache (see the module docstring)."""

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
                self.length, self.key_buffer, self.value_buffer = 0, None, None
            end = self.length + key_states.shape[-2]
            if self.key_buffer is None or end > self.key_buffer.shape[-2]:
                rows, heads, _, dim = key_states.shape
                keys = key_states.new_empty(rows, heads, end + GROW_COLUMNS, dim)
                values = value_states.new_empty(rows, heads, end + GROW_COLUMNS, value_states.shape[-1])
                if self.length:
                    keys[:, :, : self.length] = self.keys
                    values[:, :, : self.length] = self.values
                self.key_buffer, self.value_buffer = keys, values
            self.key_buffer[:, :, self.length : end] = key_states
            self.value_buffer[:, :, self.length : end] = value_states
            self.length = end
            self.keys, self.values = self.key_buffer[:, :, :end], self.value_buffer[:, :, :end]
            return self.keys, self.values

        def batch_select_indices(self, indices: Any) -> None:
            if self.is_initialized and self.length:
                self.key_buffer, self.value_buffer = self.key_buffer[indices], self.value_buffer[indices]
                self.keys = self.key_buffer[:, :, : self.length]
                self.values = self.value_buffer[:, :, : self.length]

        def crop(self, tokens_to_remove: int) -> None:  # not used by the loop; kept consistent with the buffers
            super().crop(tokens_to_remove)
            if self.is_initialized and self.key_buffer is not None:
                self.length = self.keys.shape[-2]
                self.key_buffer, self.value_buffer = self.keys, self.values

        def reset(self) -> None:
            super().reset()
            self.length, self.key_buffer, self.value_buffer = 0, None, None

    return GrowingLayer
