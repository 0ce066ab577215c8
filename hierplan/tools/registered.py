"""Registered tools: LangChain tools a graph is built with (a ``BaseTool``, an ``@tool`` function, an MCP server's
tool). The model class of a tool's arguments, for structured output, and one call of a tool under a time limit.

A call's failure is returned, not raised: a failed tool call is a failed step, which the replanner handles.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel

from hierplan.config import TOOL_CANCEL_GRACE_S, TOOL_RESULT_CHARS

__all__ = ["ToolOutcome", "args_model", "call_tool", "check_tools", "describe_error", "result_text",
           "session_loop", "takes_arguments"]


@dataclass
class ToolOutcome:
    """One tool call: ``result`` (JSON-safe) and ``text`` when ``ok``, else ``error``."""

    ok: bool
    result: Any = None
    text: str = ""
    error: str | None = None
    seconds: float = 0.0


def check_tools(tools: Any) -> list[BaseTool]:
    """The tools as a list of BaseTools with distinct names that are not the plan's own tools (TypeError,
    ValueError)."""
    from hierplan.schema import check_tool_names

    tools = list(tools or ())
    for item in tools:
        if not isinstance(item, BaseTool):
            raise TypeError(f"tools must be LangChain tools (a BaseTool, or a function decorated with "
                            f"langchain_core.tools.tool), got {type(item).__name__}")
    check_tool_names([t.name for t in tools])
    return tools


def args_model(tool: BaseTool) -> type[BaseModel]:
    """The pydantic class of the arguments the model writes for ``tool``: its own (``tool_call_schema``: without
    injected arguments) or, for a tool described by a JSON schema (an MCP tool), a class whose JSON schema is
    that one and whose validation checks it (with ``jsonschema`` where installed; the tool checks again)."""
    schema = tool.tool_call_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema
    if isinstance(schema, dict):
        return _json_schema_model(tool.name, tool.description, schema)
    raise TypeError(f"tool {tool.name!r}: arguments described by {type(schema).__name__}, not a pydantic class "
                    "or a JSON schema")


def takes_arguments(model: type[BaseModel]) -> bool:
    """Whether the schema has any property to fill (a tool without arguments needs no model call)."""
    return bool(model.model_json_schema().get("properties"))


def _json_schema_model(name: str, description: str, schema: dict[str, Any]) -> type[BaseModel]:
    from hierplan.schema import json_schema_model

    schema = {"type": "object", "properties": {}, **copy.deepcopy(schema)}
    schema.pop("description", None)  # said once, in the prompt; not repeated in every constrained request
    return json_schema_model(name[:59] + "_args", schema, description)  # a server takes names of 64 characters


def call_tool(tool: BaseTool, args: dict[str, Any], timeout_s: float) -> ToolOutcome:
    """Run ``tool`` with ``args``, at most ``timeout_s`` seconds.

    A tool bound to a session that lives on an event loop (an MCP server's tool: ``session_loop``,
    hierplan.tools.mcp) is handed to that loop and cancelled there at the limit, its session left open. Any
    other runs in a thread of its own, so that it works wherever the node runs (an async-only tool gets an event
    loop of its own there, even when the graph is run by ``ainvoke``): a tool with a coroutine is awaited and
    cancelled at the limit; a sync-only tool's thread cannot be stopped, so it is left to finish in the
    background (a daemon thread: it does not keep the process alive). The call is a tool run of the step's, for
    whatever tracer the run has (hierplan.tracing)."""
    from hierplan.tracing import traced_call

    return traced_call(tool.name, args, lambda: _call_tool(tool, args, timeout_s), _outcome)


def _outcome(outcome: ToolOutcome) -> dict[str, Any]:
    return {"ok": outcome.ok, "error": outcome.error, "output": outcome.text}


def _call_tool(tool: BaseTool, args: dict[str, Any], timeout_s: float) -> ToolOutcome:
    start = time.perf_counter()
    loop = session_loop(tool)
    if loop is not None:
        value, error, timed_out = _on_loop(tool, args, timeout_s, loop)
    else:
        value, error, timed_out = _in_thread(tool, args, timeout_s)
    seconds = round(time.perf_counter() - start, 3)
    if timed_out or isinstance(error, (TimeoutError, asyncio.TimeoutError)):
        return ToolOutcome(False, error=f"the tool {tool.name} did not finish within {timeout_s:g} s", seconds=seconds)
    if error is not None:
        return ToolOutcome(False, error=describe_error(error), seconds=seconds)
    text = result_text(value)
    if len(text) > TOOL_RESULT_CHARS:
        text = text[:TOOL_RESULT_CHARS] + " [...]"
    result = _json_safe(value)
    if len(json.dumps(result, ensure_ascii=False)) > TOOL_RESULT_CHARS:
        result = text
    return ToolOutcome(True, result=result, text=text, seconds=seconds)


def session_loop(tool: BaseTool) -> asyncio.AbstractEventLoop | None:
    """The event loop a tool's calls must run on (an MCP tool's, while its session is open), else None."""
    return getattr(tool, "session_loop", None)


def _on_loop(tool: BaseTool, args: dict[str, Any], timeout_s: float,
             loop: asyncio.AbstractEventLoop) -> tuple[Any, BaseException | None, bool]:
    """(value, error, timed out) of a call run on ``loop``: no thread or event loop of its own to start, which
    is most of a fast tool's overhead."""

    async def limited() -> Any:
        return await asyncio.wait_for(tool.ainvoke(args), timeout_s)

    call = limited()
    try:
        future = asyncio.run_coroutine_threadsafe(call, loop)
    except RuntimeError as exc:  # the loop closed meanwhile (the sessions were closed)
        call.close()
        return None, exc, False
    try:
        return future.result(timeout_s + TOOL_CANCEL_GRACE_S), None, False
    except TimeoutError:  # cancelled at the limit (wait_for), or the loop did not answer within the grace
        _cancel(future, loop)
        return None, None, True
    except Exception as exc:  # noqa: BLE001 - whatever the tool raised is the step's error
        return None, exc, False
    except BaseException:  # Ctrl-C while waiting: the call is not left running
        _cancel(future, loop)
        raise


def _cancel(future: Any, loop: asyncio.AbstractEventLoop) -> None:
    if not loop.is_closed():  # a closed loop cancelled its calls itself
        future.cancel()


def _in_thread(tool: BaseTool, args: dict[str, Any], timeout_s: float) -> tuple[Any, BaseException | None, bool]:
    """(value, error, timed out) of a call run in a thread of its own."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            if _has_coroutine(tool):
                box["value"] = asyncio.run(asyncio.wait_for(tool.ainvoke(args), timeout_s))
            else:
                box["value"] = tool.invoke(args)
        except BaseException as exc:  # noqa: BLE001 - whatever the tool raised is the step's error
            box["error"] = exc

    thread = threading.Thread(target=work, name=f"hierplan-tool-{tool.name}", daemon=True)
    thread.start()
    thread.join(timeout_s + (TOOL_CANCEL_GRACE_S if _has_coroutine(tool) else 0))
    return box.get("value"), box.get("error"), thread.is_alive()


def _has_coroutine(tool: BaseTool) -> bool:
    """A StructuredTool (an MCP tool, an async ``@tool``) made with a coroutine, or a tool class with its own
    ``_arun``."""
    if hasattr(tool, "coroutine"):
        return getattr(tool, "coroutine") is not None
    return type(tool)._arun is not BaseTool._arun


def describe_error(exc: BaseException) -> str:
    """One exception as the step's error, on one line: a ToolException (what a tool reports, an MCP tool's error)
    by its message, others with their type; an ExceptionGroup (anyio's, from an MCP session) by its first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    message = " ".join(str(exc).split())
    if isinstance(exc, ToolException) and message:
        return message
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _content_blocks(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(b, dict) and "type" in b for b in value)


def result_text(value: Any) -> str:
    """What later steps and the answer read of a tool's result: text as it is, a list of content blocks (an MCP
    tool's) as their text, anything else as JSON."""
    if isinstance(value, BaseMessage):
        value = value.content
    if isinstance(value, str):
        return value
    if _content_blocks(value):
        return "\n".join(b["text"] if b["type"] == "text" else f"[{b['type']} {b.get('mime_type') or ''}]".strip()
                         for b in value)
    return json.dumps(_json_safe(value), ensure_ascii=False)


def _json_safe(value: Any) -> Any:
    """The result as it is kept with the step: an MCP tool's content blocks as their text (their ids change every
    call), a pydantic model as its dump, anything else through JSON (unknown objects as their str)."""
    if isinstance(value, BaseMessage):
        value = value.content
    if _content_blocks(value):
        return result_text(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))
