"""A scripted fake chat model: replies chosen by which node is asking, every call recorded."""

from __future__ import annotations

import inspect
import json
import re
import sqlite3
import threading
from typing import Any, Callable, Iterator

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from hierplan.nodes import prompts


def node_of(messages: list[BaseMessage], graph_node: str | None = None) -> str:
    """Which node sent these messages, read from its system prompt; ``graph_node``: the LangGraph node the call
    came from (its run metadata), which tells a whole-task step from the check when their requests are equal."""
    system = messages[0].content
    if system == prompts.PLANNER_SYSTEM:
        return "planner"
    if system == prompts.READ_REQUIREMENTS_SYSTEM:
        return "read_requirements"
    if system == prompts.PLANNER_RETRY_SYSTEM:
        return "planner_retry"
    if system in (prompts.CHECK_SYSTEM, prompts.DATA_CHECK_SYSTEM):
        # the plan's one Python step of a numeric task is asked for as the check is (with a written plan's outline)
        if graph_node is not None:
            return "python_step" if graph_node == "python_step" else "python_check"
        outline = prompts.PLAN_OUTLINE.split("{")[0]
        return "python_step" if outline in messages[1].content else "python_check"
    if system.startswith(prompts.CODE_SYSTEM.split("{")[0]):
        return "python_step"
    if system in (prompts.AGGREGATOR_SYSTEM, prompts.AGGREGATOR_WRITING_SYSTEM):
        return "aggregator"
    if system == prompts.REVISE_SYSTEM:
        return "reviser"
    if system == prompts.PLAIN_SYSTEM:  # one piece's draft, or an answer that was no piece answered anew
        return "aggregator" if graph_node == "aggregator" else "plain_answer"
    if system == prompts.PARTS_SYSTEM:
        return "reviser_parts"
    if system == prompts.REPLANNER_SYSTEM:
        return "replanner"
    if system.startswith(prompts.TOOL_SYSTEM.split("{")[0]):
        return "tool_step"
    if system.startswith(prompts.STRUCTURED_SYSTEM.split("{")[0]):
        return "structured_answer"
    return "llm_step"


def graph_node(run_manager) -> str | None:
    """The LangGraph node a call comes from: its run metadata, or (LangChain calls ``_stream`` without the run
    manager) the node's own config."""
    if run_manager is not None and run_manager.metadata:
        return run_manager.metadata.get("langgraph_node")
    from langgraph.config import get_config

    try:
        return get_config().get("metadata", {}).get("langgraph_node")
    except RuntimeError:  # not inside a graph run
        return None


NO_REQUIREMENTS = '{"requirements": []}'
"""read_requirements' reply unless a test scripts one: the task states no requirement the model reads."""
STREAM_HOLD_S = 20.0
"""The longest a Streamed reply waits at a held point (a test that forgets to let it go fails, not hangs)."""


class Streamed:
    """A scripted reply given in pieces: streamed (``stream_mode="messages"``), each piece is one chunk, and a
    ``threading.Event`` among them holds the stream there until it is set (the test sees the pieces before it);
    invoked without streaming, the pieces' text at once."""

    def __init__(self, *pieces: Any):
        self.pieces = pieces

    @property
    def text(self) -> str:
        return "".join(p for p in self.pieces if isinstance(p, str))


def pieces_of(text: str) -> list[str]:
    """How the fake streams a plain reply: word by word, each word with the spaces after it."""
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])


def by_part(replies: dict[int, Any]) -> Callable[[list[BaseMessage]], Any]:
    """An LLM step's reply chosen by the step it answers ("Do part N", plan_json's instruction): the rows of a
    batch are answered side by side, so a queue would hand them out in any order."""

    def reply(messages: list[BaseMessage]) -> Any:
        for n, r in replies.items():
            if f"Instruction: Do part {n}\n" in messages[-1].content:
                return r
        raise AssertionError(f"no reply scripted for {messages[-1].content!r}")

    return reply


class ScriptedChatModel(BaseChatModel):
    """Replies come from per-node queues (str, Streamed, or callable(messages) -> str or Streamed, or
    callable(messages, kwargs) -> str), then from ``default``; every call is recorded. Streamed (LangGraph's messages stream attaches
    a streaming callback to every call in a node), a reply comes word by word, or as a Streamed's pieces."""

    script: dict[str, list[Any]] = Field(default_factory=dict)
    default: dict[str, Any] = Field(default_factory=dict)
    calls: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _reply(self, messages: list[BaseMessage], run_manager, kwargs) -> Any:
        kwargs.pop("stream", None)  # LangChain's per-call switch (model_call sends stream=False), not sampling
        node = node_of(messages, graph_node(run_manager))
        self.calls.append({"node": node, "messages": messages, "kwargs": kwargs})
        queue = self.script.get(node) or []
        reply = queue.pop(0) if queue else self.default.get(node, NO_REQUIREMENTS if node == "read_requirements"
                                                             else f"{node} reply {len(self.calls)}")
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Streamed):
            return reply
        # A callable reply of two parameters also sees the call's keyword arguments (temperature, seed, ...).
        takes_kwargs = callable(reply) and len(inspect.signature(reply).parameters) == 2
        return (reply(messages, kwargs) if takes_kwargs else reply(messages)) if callable(reply) else reply  # str or Streamed

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs) -> ChatResult:
        reply = self._reply(messages, run_manager, kwargs)
        text = reply.text if isinstance(reply, Streamed) else reply
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    def _stream(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs) -> Iterator[Any]:
        reply = self._reply(messages, run_manager, kwargs)
        for piece in reply.pieces if isinstance(reply, Streamed) else pieces_of(reply):
            if isinstance(piece, threading.Event):
                piece.wait(STREAM_HOLD_S)
            else:
                yield ChatGenerationChunk(message=AIMessageChunk(content=piece))

    def count(self, node: str) -> int:
        return sum(1 for c in self.calls if c["node"] == node)


class StructuredScriptedChatModel(ScriptedChatModel):
    """A ScriptedChatModel with ``with_structured_output``: the scripted reply is the raw message, marked
    with ``response_metadata["hierplan_structured"] = method``; ``parsed`` is the schema's validation of it.
    The schema is recorded in the call's kwargs as ``response_format``."""

    method: str = "grammar"

    def with_structured_output(self, schema, *, include_raw: bool = False, **kwargs):
        from langchain_core.runnables import RunnableLambda

        def run(messages, config=None, **call_kwargs):
            raw = self.invoke(messages, response_format=schema, **call_kwargs)
            raw.response_metadata["hierplan_structured"] = self.method
            try:
                parsed, error = schema.model_validate_json(raw.content), None
            except ValueError as exc:
                parsed, error = None, exc
            return {"raw": raw, "parsed": parsed, "parsing_error": error} if include_raw else parsed

        class Structured:
            def invoke(self, messages, config=None, **call_kwargs):
                return run(messages, config, **call_kwargs)

        return Structured()


def plan_json(tools: list[str], goal: str = "Do the task", fenced: bool = False, prose: bool = False,
              depends: dict[int, list[int]] | None = None) -> str:
    steps = [{"id": i, "title": f"Step {i} ({tool})", "instruction": f"Compute part {i}" if tool == "python" else f"Do part {i}", "tool": tool,
              "expected_output": f"result {i}", **({"depends_on": depends[i]} if depends and i in depends else {})}
             for i, tool in enumerate(tools, start=1)]
    text = json.dumps({"goal": goal, "assumptions": ["none"], "steps": steps})
    if fenced:
        text = f"Here is the plan:\n```json\n{text}\n```\nGood luck."
    elif prose:
        text = f"Sure! The plan is {text} and that is all."
    return text


def answer_token(text: str, offset: int = 0, node: str = "aggregator", done: bool = False) -> dict:
    """A ``token`` event of the answer, as hierplan.app.events.TokenEvents sends it."""
    return {"event": "token", "node": node, "step_id": None, "attempt": None, "offset": offset, "text": text,
            "done": done}


class FakeExecution:
    """What the sandbox returns, for tests of the node logic that do not need a real process."""

    def __init__(self, ok: bool, stdout: str = "", error: str | None = None, exit_reason: str = "ok"):
        self.ok, self.stdout, self.error, self.exit_reason = ok, stdout, error, exit_reason


def scripted_runner(results: list[FakeExecution]) -> Callable[..., FakeExecution]:
    """A code runner answering from ``results``; ``seen`` records each code, ``seen_before`` its earlier programs."""
    seen: list[str] = []
    seen_before: list[list[str]] = []

    def run(code: str, before=()) -> FakeExecution:
        seen.append(code)
        seen_before.append(list(before))
        return results.pop(0)

    run.seen = seen  # type: ignore[attr-defined]
    run.seen_before = seen_before  # type: ignore[attr-defined]
    return run


def integrity(db: str) -> str:
    """SQLite's own verdict on a database file ("ok" when sound)."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()
