"""ChatLlamaCpp: a LangChain chat model over the process's llama.cpp engine (llamacpp_engine.py).

Nodes use it through the public chat-model API only:

* ``invoke`` / ``batch`` / ``stream`` with per-call sampling as standard keyword arguments (temperature (0 =
  greedy), top_p, max_tokens, repetition_penalty, seed, stop), mapped onto llama.cpp's request fields;
* ``batch`` is LangChain's thread map: its requests reach the engine together and decode side by side in its
  slots (continuous batching) with a GPU, as do the requests of concurrent runs; on a CPU they take turns
  (engine.py, CONCURRENT_ENV);
* ``usage_metadata`` from the engine's own token counts (prompt tokens served from its prompt cache are
  counted too, and reported as ``cached_tokens`` in ``response_metadata``);
* ``with_structured_output(PydanticClass, include_raw=True)``: the reply constrained by llama.cpp's grammar
  for the JSON schema hierplan sends every server (remote.structured.server_schema), fitted to the call's
  max_tokens as for a server (llama.cpp cannot close the JSON when the budget runs out, so a plan that ran to
  the cap was cut off and invalid), tagged ``response_metadata["hierplan_structured"] == "grammar"``.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Iterator

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import BaseModel, ConfigDict, Field

from hierplan.models.remote.structured import server_schema
from hierplan.models.structured import parsed_runnable

_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
# Call options -> llama.cpp request fields.
_FIELDS = {"temperature": "temperature", "top_p": "top_p", "max_tokens": "max_tokens", "seed": "seed",
           "repetition_penalty": "repeat_penalty", "stop": "stop", "response_format": "response_format"}
# The bound keyword that carries with_structured_output's pydantic class to ``_request``.
STRUCTURED_KWARG = "hierplan_schema"
# How long a stream waits for its next chunk before checking that the engine thread is still alive.
STREAM_POLL_SECONDS = 0.1


class ChatLlamaCpp(BaseChatModel):
    """A chat model on llama.cpp; see the module docstring."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    engine: Any = Field(exclude=True)
    """A llamacpp_engine.LlamaCppEngine (shared by every chat model on the same GGUF)."""
    model_id: str = "llama.cpp"
    temperature: float = 0.0
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    max_tokens: int = 512
    seed: int | None = None

    @property
    def _llm_type(self) -> str:
        return "hierplan-llamacpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "path": getattr(self.engine, "path", None)}

    def _request(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]) -> dict:
        options = {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens,
                   "repetition_penalty": self.repetition_penalty, "seed": self.seed, "stop": stop}
        kwargs.pop("stream", None)  # langchain's "use _stream" switch, already acted on
        structured = kwargs.pop(STRUCTURED_KWARG, None)
        min_tokens = kwargs.pop("min_tokens", None)
        unknown = set(kwargs) - set(_FIELDS)
        if unknown:
            raise TypeError(f"ChatLlamaCpp does not take {sorted(unknown)}")
        options.update({k: v for k, v in kwargs.items() if v is not None})
        request = {_FIELDS[k]: v for k, v in options.items() if v is not None}
        if structured is not None:
            schema = server_schema(structured, budget=int(request["max_tokens"]))
            request["response_format"] = {"type": "json_schema", "json_schema": {
                "name": structured.__name__, "schema": schema, "strict": True}}
        if min_tokens:
            # llama.cpp's server has no minimum length, only "generate to the cap" (benchmarks of equal work).
            if int(min_tokens) < int(request["max_tokens"]):
                raise TypeError("ChatLlamaCpp takes min_tokens only equal to max_tokens (a fixed length)")
            request["ignore_eos"] = True
        request["messages"] = [{"role": _ROLES.get(m.type, m.type),
                                "content": m.content if isinstance(m.content, str) else str(m.content)}
                               for m in messages]
        return request

    def _fields(self, response: dict[str, Any], request: dict[str, Any], finish: str | None) -> dict[str, Any]:
        usage = response.get("usage") or {}
        prompt, generated = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        metadata = {"model_name": self.model_id, "finish_reason": finish,
                    "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens")}
        if "response_format" in request:
            metadata["hierplan_structured"] = "grammar"
        return {"usage_metadata": {"input_tokens": prompt, "output_tokens": generated,
                                   "total_tokens": prompt + generated},
                "response_metadata": metadata}

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        request = self._request(messages, stop, kwargs)
        response = self.engine.chat(request)
        choice = response["choices"][0]
        message = AIMessage(content=choice["message"].get("content") or "",
                            **self._fields(response, request, choice.get("finish_reason")))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        request = self._request(messages, stop, kwargs)
        chunks: queue.Queue = queue.Queue()
        abandoned = threading.Event()
        outcome: dict[str, Any] = {}

        def on_chunk(chunk: dict[str, Any]) -> bool:
            chunks.put(chunk)
            return abandoned.is_set()

        def work() -> None:
            try:
                self.engine.stream(request, on_chunk)
            except BaseException as error:  # handed to the consumer's thread below
                outcome["error"] = error
            finally:
                chunks.put(None)

        worker = threading.Thread(target=work, name="hierplan-llamacpp-stream", daemon=True)
        worker.start()
        finish, usage = None, {}
        try:
            while (chunk := chunks.get()) is not None:
                if chunk.get("usage"):
                    usage = chunk
                for choice in chunk.get("choices") or []:
                    finish = choice.get("finish_reason") or finish
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        piece = ChatGenerationChunk(message=AIMessageChunk(content=text))
                        if run_manager is not None:
                            run_manager.on_llm_new_token(text, chunk=piece)
                        yield piece
        finally:
            abandoned.set()
            worker.join()
        if "error" in outcome:
            raise outcome["error"]
        yield ChatGenerationChunk(message=AIMessageChunk(content="", **self._fields(usage, request, finish)))

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Any:
        """JSON for a pydantic class, constrained by llama.cpp's grammar for its schema.

        Returns a runnable giving the parsed object, or with ``include_raw`` ``{"raw", "parsed",
        "parsing_error"}`` (parsed None when the reply does not validate, e.g. cut off at max_tokens).
        """
        if kwargs.pop("method", "json_schema") != "json_schema" or kwargs:
            raise NotImplementedError(f"ChatLlamaCpp.with_structured_output takes no {sorted(kwargs)}")
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise NotImplementedError("ChatLlamaCpp.with_structured_output needs a pydantic class")
        # The schema is sent per call (``_request``): its numbered arrays are fitted to that call's max_tokens.
        bound = self.bind(**{STRUCTURED_KWARG: schema})
        return parsed_runnable(bound, schema, include_raw)
