"""Grammar-constrained JSON decoding for the planner.

``plan_constraint_kwargs(chat_model, schema_model=Plan)`` returns generation kwargs
(``{"logits_processor": LogitsProcessorList([...])}``) that make a local transformers
pipeline emit only compact JSON that ``Plan.model_validate_json`` accepts, then stop.
It returns None when the chat model is not a local transformers pipeline or no
grammar engine is importable; the planner then parses/retries/falls back as before.

The grammar is a regular expression built from the schema (``schema_regex``): every
property is emitted in schema order, strings keep their length bounds, and an
array of objects with an integer ``id`` (the plan's steps) is unrolled by position,
so step *i* has ``"id":i`` and its integer lists (``depends_on``) name only ids < i.
Heavy imports (torch, transformers, llguidance) happen inside functions.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

__all__ = ["plan_constraint_kwargs", "schema_regex", "worst_case_json_bytes"]

# Strings the schema leaves unbounded (e.g. assumption items, checked by a validator) get this cap.
DEFAULT_STRING_CAP = 200
# Integer lists the schema leaves unbounded get at most this many items.
DEFAULT_LIST_CAP = 8
# One decoded character: any non-control character except quote/backslash, or a short escape.
# No \uXXXX escapes: a lone surrogate would not parse.
_CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/nt])'

_lock = threading.Lock()
_compiled: dict[tuple, Any] = {}  # (id(tokenizer), schema key, stop ids) -> (tokenizer, compiled grammar)


# ---------------------------------------------------------------- schema -> regex


def _lit(value: Any) -> str:
    return re.escape(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def _rep(item: str, lo: int, hi: int) -> str:
    """``[`` item (``,`` item){lo-1,hi-1} ``]`` with lo..hi items."""
    if hi <= 0:
        return r"\[\]"
    seq = f"{item}(?:,{item}){{{max(lo - 1, 0)},{hi - 1}}}"
    return rf"\[{seq}\]" if lo >= 1 else rf"\[(?:{seq})?\]"


class _Builder:
    def __init__(self, schema: dict[str, Any]):
        self.defs = schema.get("$defs", {})

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = self.defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def value(self, node: dict[str, Any], earlier: int | None = None) -> str:
        """Regex for one JSON value; ``earlier`` = n means integer lists may only hold 1..n."""
        node = self.resolve(node)
        if "const" in node:
            return _lit(node["const"])
        if "enum" in node:
            return "(?:" + "|".join(_lit(v) for v in node["enum"]) + ")"
        if "anyOf" in node:
            return "(?:" + "|".join(self.value(n, earlier) for n in node["anyOf"]) + ")"
        kind = node.get("type")
        if kind == "null":
            return "null"
        if kind == "boolean":
            return "(?:true|false)"
        if kind == "string":
            lo, hi = node.get("minLength", 0), node.get("maxLength", DEFAULT_STRING_CAP)
            return f'"{_CHAR}{{{lo},{hi}}}"'
        if kind == "integer":
            lo, hi = node.get("minimum"), node.get("maximum")
            if lo is not None and hi is not None and hi - lo <= 64:
                return "(?:" + "|".join(str(v) for v in range(lo, hi + 1)) + ")"
            return r"-?(?:0|[1-9][0-9]{0,8})"
        if kind == "array":
            return self.array(node, earlier)
        if kind == "object":
            return self.obj(node, earlier)
        raise ValueError(f"schema node not supported by the plan grammar: {node}")

    def array(self, node: dict[str, Any], earlier: int | None) -> str:
        items = self.resolve(node.get("items", {}))
        lo, hi = node.get("minItems", 0), node.get("maxItems")
        if items.get("type") == "integer" and earlier is not None:
            # References to earlier positions (depends_on): ids 1..earlier, at most `earlier` of them.
            if earlier == 0:
                return r"\[\]"
            ids = "(?:" + "|".join(str(i) for i in range(1, earlier + 1)) + ")"
            return _rep(ids, lo, min(hi or earlier, earlier))
        if items.get("type") == "object" and items.get("properties", {}).get("id", {}).get("type") == "integer":
            return self.positional(items, lo, hi or DEFAULT_LIST_CAP)
        return _rep(self.value(items), lo, hi if hi is not None else DEFAULT_LIST_CAP)

    def positional(self, item: dict[str, Any], lo: int, hi: int) -> str:
        """Objects numbered 1..n in order: item i has ``"id":i`` and references only ids < i."""
        parts = [self.obj(item, i - 1, fixed_id=i) for i in range(1, hi + 1)]
        tail = ""
        for part in reversed(parts[max(lo, 1):]):
            tail = f"(?:,{part}{tail})?"
        head = ",".join(parts[: max(lo, 1)])
        return rf"\[{head}{tail}\]" if lo >= 1 else rf"\[(?:{head}{tail})?\]"

    def obj(self, node: dict[str, Any], earlier: int | None = None, fixed_id: int | None = None) -> str:
        fields = []
        for key, sub in node.get("properties", {}).items():
            val = str(fixed_id) if (key == "id" and fixed_id is not None) else self.value(sub, earlier)
            fields.append(_lit(key) + ":" + val)
        return r"\{" + ",".join(fields) + r"\}"


def schema_regex(schema_model: Any) -> str:
    """Regex over compact JSON text for ``schema_model`` (a pydantic model class or a JSON-schema dict).

    All properties are emitted, in schema order, with no whitespace. Every match validates
    against the model (the grammar is a subset of the schema).
    """
    schema = schema_model if isinstance(schema_model, dict) else schema_model.model_json_schema()
    return _Builder(schema).value(schema)


def worst_case_json_bytes(schema_model: Any) -> int:
    """Longest compact JSON, in UTF-8 bytes (4 per string character), that the grammar allows.

    With a byte-level BPE vocabulary every token is at least one byte, so this bounds the
    tokens of any constrained generation (plus one for the end-of-sequence token).
    """
    schema = schema_model if isinstance(schema_model, dict) else schema_model.model_json_schema()
    builder = _Builder(schema)

    def longest(node: dict[str, Any], earlier: int | None = None) -> int:
        node = builder.resolve(node)
        if "const" in node:
            return len(json.dumps(node["const"], separators=(",", ":")))
        if "enum" in node:
            return max(len(json.dumps(v)) for v in node["enum"])
        if "anyOf" in node:
            return max(longest(n, earlier) for n in node["anyOf"])
        kind = node.get("type")
        if kind in ("null", "boolean"):
            return 5 if kind == "boolean" else 4
        if kind == "string":
            return 2 + 4 * node.get("maxLength", DEFAULT_STRING_CAP)  # a character is at most 4 bytes
        if kind == "integer":
            lo, hi = node.get("minimum"), node.get("maximum")
            return max(len(str(lo)), len(str(hi))) if lo is not None and hi is not None and hi - lo <= 64 else 10
        if kind == "array":
            items = builder.resolve(node.get("items", {}))
            hi = node.get("maxItems")
            if items.get("type") == "integer" and earlier is not None:
                n = min(hi or earlier, earlier)
                return 2 + max(n * (len(str(earlier)) + 1) - 1, 0)
            if items.get("type") == "object" and items.get("properties", {}).get("id", {}).get("type") == "integer":
                n = hi or DEFAULT_LIST_CAP
                return 2 + sum(obj(items, i - 1) for i in range(1, n + 1)) + n - 1
            n = hi if hi is not None else DEFAULT_LIST_CAP
            return 2 + n * longest(items) + max(n - 1, 0)
        if kind == "object":
            return obj(node, earlier)
        raise ValueError(node)

    def obj(node: dict[str, Any], earlier: int | None = None) -> int:
        props = node.get("properties", {})
        return 2 + sum(len(json.dumps(k)) + 1 + longest(v, earlier) for k, v in props.items()) + len(props) - 1

    return longest(schema)


# ---------------------------------------------------------------- engine (llguidance)

# Token budget the planner decodes under; near its end the processor closes the JSON (see _restrict).
DEFAULT_MAX_NEW_TOKENS = 700


def _pipeline_of(chat_model: Any) -> Any | None:
    """The transformers pipeline behind a ChatHuggingFace / HuggingFacePipeline, else None."""
    llm = getattr(chat_model, "llm", chat_model)
    pipe = getattr(llm, "pipeline", None)
    if pipe is None or not callable(getattr(getattr(pipe, "model", None), "generate", None)):
        return None
    return pipe if getattr(pipe, "tokenizer", None) is not None else None


def _stop_ids(model: Any, tokenizer: Any) -> list[int]:
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    return sorted({eos} if isinstance(eos, int) else set(eos))


class _Compiled:
    """Tokenizer + checked grammar + what the budget closer needs; built once per (tokenizer, schema)."""

    def __init__(self, tokenizer: Any, vocab_size: int, stop_ids: list[int], regex: str):
        import llguidance
        import llguidance.hf

        self.lltok = llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab_size, eos_token=stop_ids)
        self.grammar = llguidance.LLMatcher.grammar_from_regex(regex)
        error = llguidance.LLMatcher.validate_grammar(self.grammar, self.lltok)
        if error and not error.startswith("WARNING"):
            raise ValueError(f"plan grammar rejected by llguidance: {error}")
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
    import llguidance.torch as lt
    import torch

    lt.fill_next_token_bitmask(matcher, bitmask, row)
    # Unpack the 32-bit words here: llguidance's own apply goes through torch.compile (seconds, needs a C compiler).
    bits = (bitmask[row].unsqueeze(-1) >> torch.arange(32, dtype=torch.int32)) & 1
    scores[row].masked_fill_(bits.flatten()[: scores.shape[1]] == 0, float("-inf"))
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
            self.prompt_len = 0

        def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
            if not self.matchers:
                self.matchers = [comp.matcher() for _ in range(input_ids.shape[0])]
                self.states = [(False, False)] * input_ids.shape[0]
                self.bitmask = lt.allocate_token_bitmask(input_ids.shape[0], comp.vocab_size)
                self.prompt_len = input_ids.shape[1]
            else:
                for row, matcher in enumerate(self.matchers):
                    token = int(input_ids[row, -1])
                    if matcher.is_stopped():
                        continue
                    if not matcher.consume_token(token):
                        raise RuntimeError(f"token {token} broke the plan grammar: {matcher.get_error()}")
                    if closing_from is not None:
                        self.states[row] = _scan(self.states[row], comp.lltok.decode_bytes([token]))
            generated = input_ids.shape[1] - self.prompt_len
            closing = closing_from is not None and generated >= closing_from
            view = scores[:, : comp.vocab_size]
            if scores.shape[1] > comp.vocab_size:
                scores[:, comp.vocab_size :] = float("-inf")
            for row, matcher in enumerate(self.matchers):
                if matcher.is_stopped():  # JSON complete: only a stop token
                    done = torch.full_like(view[row], float("-inf"))
                    done[comp.stop_ids] = view[row, comp.stop_ids]
                    view[row] = done
                else:
                    _restrict(matcher, self.bitmask, view, comp, closing, row, self.states[row][0])
            return scores

    return PlanGrammarProcessor()


def _compiled_for(pipe: Any, schema_model: Any) -> _Compiled:
    tokenizer, model = pipe.tokenizer, pipe.model
    vocab_size = int(model.get_output_embeddings().weight.shape[0])
    stop = _stop_ids(model, tokenizer)
    regex = schema_regex(schema_model)
    key = (id(tokenizer), regex, tuple(stop), vocab_size)
    with _lock:
        hit = _compiled.get(key)
        if hit is None or hit[0] is not tokenizer:
            hit = _compiled[key] = (tokenizer, _Compiled(tokenizer, vocab_size, stop, regex))
    return hit[1]


def plan_constraint_kwargs(
    chat_model: Any, schema_model: Any = None, *, max_new_tokens: int | None = DEFAULT_MAX_NEW_TOKENS
) -> dict[str, Any] | None:
    """Generation kwargs that constrain a local transformers chat model to ``schema_model`` JSON.

    Merge the result into ``pipeline_kwargs`` of ``chat_model.invoke``. Returns None when
    ``chat_model`` is not backed by a local transformers pipeline or llguidance is missing.
    ``max_new_tokens`` must be the budget you generate with: the processor keeps enough
    tokens back to close the JSON before it runs out (None disables that guard).
    """
    if schema_model is None:
        from hierplan.schema import Plan as schema_model
    pipe = _pipeline_of(chat_model)
    if pipe is None:
        return None
    try:
        # Engine: llguidance -- 0.07 ms/token mask with string escapes; xgrammar stalls (150+ ms) on them.
        import llguidance  # noqa: F401
    except ImportError:
        return None
    from transformers import LogitsProcessorList

    comp = _compiled_for(pipe, schema_model)
    return {"logits_processor": LogitsProcessorList([_make_processor(comp, max_new_tokens)])}
