"""LocalChatModel: a LangChain chat model over a local transformers model, with everything hierplan adds.

It wraps langchain-huggingface's ``HuggingFacePipeline`` (``chat.llm``; its ``pipeline`` holds the
transformers model and tokenizer, as users build it) and generates itself, because the pipeline returns
text only (no token ids for usage) and one sampling setting per call (no per-row sampling for batches).
What it owns, all behind the public chat-model API:

* per-call sampling as standard keyword arguments (``invoke(..., temperature=, top_p=, max_tokens=, seed=,
  repetition_penalty=)`` or ``.bind(...)``), honoured per row of a batch (rows.py);
* per-call seeding: a seeded call draws from its own generator (rows.py says what is reproducible);
* one torch thread and one running batch: ``batch`` is prefilled as one, calls from concurrent runs that
  arrive while the model is busy join the rows decoding, and a row leaves as it finishes (batcher.py,
  decode.py);
* streaming (``stream`` yields AIMessageChunks as tokens are generated);
* ``usage_metadata`` on every message, counted from the ids it fed and generated;
* ``with_structured_output(PydanticClass, include_raw=True)``: a grammar-constrained reply (constrained.py),
  ``response_metadata["hierplan_structured"] == "grammar"``;
* ``invoke(..., grammar=LARK)``: a reply constrained to a Lark grammar (lark_grammar.py);
* ``invoke(..., python_scope=[names], python_calls=[names])``: Python that reads only those names or names it
  assigned on an earlier line, and calls only those (name_scope.py), with ``grammar=`` a straight-line program;
* ``invoke(..., stop_repeated_lines=N)``: free text that ends once it loops (repeated_lines.py), finish
  reason "repetition".

Legacy ``pipeline_kwargs={...}`` (max_new_tokens, do_sample, temperature, top_p, repetition_penalty,
min_new_tokens, logits_processor) are translated to the above for older callers.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
from operator import itemgetter
from typing import Any, ClassVar, Iterator

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.runnables.config import ContextThreadPoolExecutor, get_config_list
from langchain_huggingface import HuggingFacePipeline
from pydantic import BaseModel, ConfigDict, PrivateAttr

from hierplan.models import constrained, lark_grammar, name_scope, repeated_lines
from hierplan.models.batcher import Batcher, Gather, Request, generation_context
from hierplan.models.decode import RunningBatch
from hierplan.models.prefix_store import PrefixStore, chunk_bounds
from hierplan.models.rows import Row

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
_OPTIONS = {"temperature", "top_p", "max_tokens", "seed", "repetition_penalty", "min_tokens", "response_format",
            "logits_processor", "grammar", "python_scope", "python_calls", "stop_repeated_lines"}
_LEGACY = {"max_new_tokens": "max_tokens", "min_new_tokens": "min_tokens", "temperature": "temperature",
           "top_p": "top_p", "repetition_penalty": "repetition_penalty", "logits_processor": "logits_processor"}
# Set by ``batch`` in each input's thread: (Gather, index) so its rows go into one pass together.
_GATHER: contextvars.ContextVar[tuple[Gather, int] | None] = contextvars.ContextVar("hierplan_gather", default=None)


def row_seed(seed: int, index: int) -> int:
    """The seed of row ``index`` of a batch seeded with ``seed`` (row 0 keeps it: a batch of one == invoke)."""
    return (seed + index * 0x9E3779B1) % (2**32)


class LocalChatModel(BaseChatModel):
    """A chat model over a local transformers model; see the module docstring."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    llm: HuggingFacePipeline
    model_id: str | None = None
    temperature: float = 0.0
    """Default sampling; 0 = greedy. Every call may override it."""
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    max_tokens: int = 512
    seed: int | None = None
    cpu_share: Any = None
    """On CPU, a cpu_share.CpuShare that picks the torch threads for each pass; None leaves them."""
    accepts_grammar: ClassVar[bool] = True
    """Takes ``grammar=`` (a Lark text), ``python_scope=`` and ``python_calls=`` as call options
    (hierplan.nodes.code_grammar asks)."""
    stops_repeated_lines: ClassVar[bool] = True
    """Takes ``stop_repeated_lines=N``: a row ends once its text loops (hierplan.models.repeated_lines)."""
    _batcher: Batcher | None = PrivateAttr(default=None)
    _prefixes: PrefixStore = PrivateAttr(default_factory=PrefixStore)
    _guard: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "hierplan-local"

    @property
    def tokenizer(self) -> Any:
        return self.llm.pipeline.tokenizer

    @property
    def batcher(self) -> Batcher:
        with self._guard:
            if self._batcher is None:
                self._batcher = Batcher(self._new_batch, generation_context(self.cpu_share))
            return self._batcher

    # ------------------------------------------------------------------ generation

    def _new_batch(self) -> RunningBatch:
        pad = self.tokenizer.pad_token_id
        return RunningBatch(self.llm.pipeline.model, self._stop_ids(), pad if pad is not None else 0, self._prefixes)

    def _stop_ids(self) -> set[int]:
        eos = self.llm.pipeline.model.generation_config.eos_token_id
        eos = self.tokenizer.eos_token_id if eos is None else eos
        return {int(e) for e in (eos if isinstance(eos, list) else [eos])}

    def _prompt_ids(self, messages: list[BaseMessage], *, prompt: bool = True) -> list[int]:
        """The ids of ``messages`` rendered by the chat template, with the assistant's turn opened if ``prompt``."""
        turns = [{"role": _ROLES.get(m.type, m.type), "content": m.content if isinstance(m.content, str)
                  else str(m.content)} for m in messages]
        text = self.tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=prompt)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _prefix_bounds(self, messages: list[BaseMessage], ids: list[int]) -> tuple[int, ...]:
        """Where chunks of the prompt prefix end in ``ids``: message boundaries before the last message
        (prefix_store.chunk_bounds)."""
        # Tokens at a seam may merge differently: a boundary is where both tokenizations still agree.
        boundaries = [len(os.path.commonprefix([self._prompt_ids(messages[:k], prompt=False), ids]))
                      for k in range(1, len(messages))]
        return chunk_bounds(boundaries, len(ids))

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        options = {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens,
                   "seed": self.seed, "repetition_penalty": self.repetition_penalty}
        kwargs.pop("stream", None)  # langchain's "use _stream" switch, already acted on
        legacy = dict(kwargs.pop("pipeline_kwargs", None) or {})
        do_sample = legacy.pop("do_sample", None)
        if do_sample is False:
            legacy["temperature"] = 0.0
        elif do_sample:
            legacy.setdefault("temperature", 1.0)  # transformers' default when sampling
        legacy.pop("return_full_text", None)
        unknown = set(legacy) - set(_LEGACY) | set(kwargs) - _OPTIONS
        if unknown:
            raise TypeError(f"LocalChatModel does not take {sorted(unknown)}")
        options.update({_LEGACY[k]: v for k, v in legacy.items()})
        options.update({k: v for k, v in kwargs.items() if v is not None})
        return options

    def _row(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> tuple[Row, Any]:
        options = self._options(dict(kwargs))
        processors = list(options.get("logits_processor") or [])
        schema = options.get("response_format")
        if schema is not None:
            processors.append(constrained.grammar_processor(
                self.llm.pipeline.model, self.tokenizer, schema, max_new_tokens=int(options["max_tokens"])))
        if options.get("grammar"):
            processors.append(lark_grammar.lark_processor(self.llm.pipeline.model, self.tokenizer, options["grammar"]))
        if options.get("python_scope") is not None:  # after the grammar: it checks the tokens the grammar allows
            processors.append(name_scope.scope_processor(self.tokenizer, options["python_scope"],
                                                         options.get("python_calls") or ()))
        ids = self._prompt_ids(messages)
        row = Row(ids=ids, prefix_bounds=self._prefix_bounds(messages, ids), max_new_tokens=int(options["max_tokens"]),
                  temperature=float(options["temperature"]), top_p=float(options["top_p"]),
                  repetition_penalty=float(options["repetition_penalty"]),
                  min_new_tokens=int(options.get("min_tokens") or 0), seed=options["seed"], processors=processors,
                  stop_when=(repeated_lines.RepeatedLines(self.tokenizer, int(options["stop_repeated_lines"]))
                             if options.get("stop_repeated_lines") else None))
        return row, schema

    def _message_fields(self, row: Row, schema: Any) -> dict[str, Any]:
        usage = {"input_tokens": len(row.ids), "output_tokens": len(row.generated),
                 "total_tokens": len(row.ids) + len(row.generated)}
        metadata = {"model_name": self.model_id, "finish_reason": row.finish}
        if schema is not None:
            metadata["hierplan_structured"] = "grammar"
        return {"usage_metadata": usage, "response_metadata": metadata}

    def _submit(self, messages: list[BaseMessage], kwargs: dict[str, Any],
                on_token: Any = None) -> tuple[Row, Any, Request]:
        """Build the row and queue it: alone, or with the other rows of a ``batch`` (see _GATHER)."""
        gather = _GATHER.get()
        if gather is not None:
            _GATHER.set(None)  # this thread's row is handed in once
        try:
            row, schema = self._row(messages, kwargs)
        except BaseException:
            if gather is not None:
                gather[0].give(gather[1], None)
            raise
        row.on_token = on_token
        request = self.batcher.submit([row]) if gather is None else gather[0].give(gather[1], row)
        return row, schema, request

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        row, schema, request = self._submit(messages, kwargs)
        self.batcher.wait(request)
        text = self.tokenizer.decode(row.generated, skip_special_tokens=True)
        for marker in stop or []:
            text = text.split(marker, 1)[0]
        message = AIMessage(content=text, **self._message_fields(row, schema))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        tokens: queue.Queue[int] = queue.Queue()
        row, schema, request = self._submit(messages, kwargs, on_token=tokens.put)
        ids: list[int] = []
        sent = ""
        try:
            while not (request.done.is_set() and tokens.empty()):
                try:
                    ids.append(tokens.get(timeout=0.05))
                except queue.Empty:
                    continue
                text = self.tokenizer.decode(ids, skip_special_tokens=True)
                if len(text) > len(sent) and not text.endswith("\ufffd"):  # hold back a split character
                    yield self._chunk(text[len(sent):], run_manager)
                    sent = text
        except BaseException:
            row.abandoned.set()
            raise
        self.batcher.wait(request)  # raises the pass's error, if any
        text = self.tokenizer.decode(row.generated, skip_special_tokens=True)
        if len(text) > len(sent):
            yield self._chunk(text[len(sent):], run_manager)
        yield ChatGenerationChunk(message=AIMessageChunk(content="", **self._message_fields(row, schema)))

    @staticmethod
    def _chunk(text: str, run_manager: Any) -> ChatGenerationChunk:
        chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
        if run_manager is not None:
            run_manager.on_llm_new_token(text, chunk=chunk)
        return chunk

    def batch(self, inputs: list[Any], config: Any = None, *, return_exceptions: bool = False,
              **kwargs: Any) -> list[Any]:
        """Every input prefilled in ONE pass and decoded together (each keeps its callbacks, usage and, when seeded, its row seed)."""
        if len(inputs) < 2:
            return super().batch(inputs, config, return_exceptions=return_exceptions, **kwargs)
        configs = get_config_list(config, len(inputs))
        gather = Gather(len(inputs), self.batcher)
        seed = kwargs.pop("seed", self.seed)

        def one(index: int) -> Any:
            _GATHER.set((gather, index))
            row_kwargs = kwargs if seed is None else {**kwargs, "seed": row_seed(seed, index)}
            try:
                return self.invoke(inputs[index], configs[index], **row_kwargs)
            except Exception as error:
                if return_exceptions:
                    return error
                raise
            finally:
                gather.give(index, None)  # no-op once its row was handed in

        with ContextThreadPoolExecutor(max_workers=len(inputs)) as pool:
            return list(pool.map(one, range(len(inputs))))

    # ------------------------------------------------------------------ structured output

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Any:
        """Grammar-constrained JSON for a pydantic class: every reply parses (unless it ran out of tokens).

        Returns a runnable giving the parsed object, or with ``include_raw`` ``{"raw", "parsed",
        "parsing_error"}``. Raises NotImplementedError for other schemas or without llguidance.
        """
        if kwargs.pop("method", "json_schema") != "json_schema" or kwargs:
            raise NotImplementedError(f"LocalChatModel.with_structured_output takes no {sorted(kwargs)}")
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)) or not constrained.available():
            raise NotImplementedError("grammar-constrained output needs a pydantic class and llguidance")
        bound = self.bind(response_format=schema)
        parse = RunnableLambda(lambda message: schema.model_validate_json(message.content))
        if not include_raw:
            return bound | parse
        parsed = RunnablePassthrough.assign(parsed=itemgetter("raw") | parse, parsing_error=lambda _: None)
        unparsed = RunnablePassthrough.assign(parsed=lambda _: None)
        # The model is the first step (not langchain's RunnableMap(raw=model)), so keyword arguments given to
        # ``invoke`` (per-call sampling) reach it: RunnableSequence passes them to its first step only.
        as_raw = RunnableLambda(lambda message: {"raw": message})
        return bound | as_raw | parsed.with_fallbacks([unparsed], exception_key="parsing_error")
