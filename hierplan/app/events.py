"""What a run tells whoever watches it: the Reporter the run service calls, and Events, the reporter that turns
a run into events (dicts with an "event" key), for `--json` (one per line) and the web page (server-sent).

Events, in order: ``run_started``, ``plan`` (the plan as it runs, tools decided; again after each replan),
``step_finished`` (a step result), ``replan``, ``approval_needed`` (the plan, or with approve_tools a tool call:
``request: "tool_call"``, ``step_id``, ``tool``, ``arguments``), ``final`` (the run's answer, as checked),
``structured_response`` (with a response_format: the answer as its schema, or why none fit), ``run_finished``;
between them the nodes' own live events (``planning``, ``kind``, ``steps_started``,
``code_attempt``, ``tool_call``, ``node_started``, ...: LangGraph custom stream events, passed on as they are),
and ``token``: a piece of text a model call generated, as it is generated (LangGraph's messages stream, read by
TokenEvents): an LLM step's answer, a Python step's program, the aggregator's answer, the reviser's rewrite.
"""

from __future__ import annotations

from typing import Any, Protocol

PLAN_NODES = ("planner", "whole_task_plan")
"""The nodes that write a run's first plan: the plan's source comes from their update."""


class TokenEvents:
    """LangGraph's messages stream (``stream_mode="messages"``: a chat model's chunk and its call's metadata) as
    ``token`` events: ``{"event": "token", "node", "step_id", "attempt", "offset", "text", "done"}``.

    ``node`` is the call's node as its record names it (llm_step, python_step, aggregator, reviser), ``step_id``
    the plan step it writes (None for the answer), ``attempt`` a program's attempt or the reviser's round (else
    None), ``offset`` where ``text`` starts in the call's text so far, and ``done`` is true on the call's last
    event (its text may be empty). Only calls the model doorway streams are shown (hierplan.nodes.model_call:
    they carry ``hierplan_node``; the others are tagged ``nostream`` and never reach the stream)."""

    def __init__(self) -> None:
        self._sent: dict[str, int] = {}  # characters sent so far, per call (its message id)

    def event(self, message: Any, metadata: dict[str, Any]) -> dict[str, Any] | None:
        from langchain_core.messages import AIMessage, AIMessageChunk  # lazily: `hierplan --help` imports none

        node = metadata.get("hierplan_node")
        if node is None or not isinstance(message, AIMessage):
            return None
        text = message.content if isinstance(message.content, str) else message.text
        chunked = isinstance(message, AIMessageChunk)
        done = not chunked or message.chunk_position == "last"  # a whole message: a model that does not stream
        key = message.id or ""
        offset = self._sent.get(key, 0)
        if not text and not done:  # a chunk with usage only
            return None
        if done:
            self._sent.pop(key, None)
        else:
            self._sent[key] = offset + len(text)
        return {"event": "token", "node": node, "step_id": metadata.get("hierplan_step_id"),
                "attempt": metadata.get("hierplan_attempt"), "offset": offset, "text": text, "done": done}


class Reporter(Protocol):
    def status(self, text: str) -> None:
        """What the run is doing now (loading the model, planning, ...)."""

    def run_started(self, run_id: str, task: str, *, resumed: bool, model: dict | None, kind: str | None,
                    models: dict | None = None) -> None:
        """``kind``: the task's kind when already known (a resumed run's, or the caller's). ``model``: the
        executor's model; ``models``: each role's, when they differ (hierplan.roles)."""

    def update(self, node: str, update: dict[str, Any]) -> None:
        """A node finished with this state update."""

    def live(self, event: dict[str, Any]) -> None:
        """An event a node emitted while it worked."""

    def approval_needed(self, run_id: str, request: dict[str, Any]) -> None:
        """The run stopped for a person to approve, edit or reject ``request["plan"]``, or a tool call
        (hierplan.nodes.tool_approval.ToolCallRequest: ``request["tool"]``, ``request["arguments"]``)."""

    def run_finished(self, run_id: str, status: str, final: str | None = None, error: str | None = None) -> None:
        """The run stopped: done (``final`` is its answer), waiting, interrupted or failed (``error``)."""

    def close(self) -> None:
        """Stop any progress display (before the terminal asks a question or the run stops)."""


class Events:
    """A Reporter that sends each happening as an event; subclasses say where (``emit``)."""

    def __init__(self) -> None:
        self.source: dict[str, Any] = {}

    def emit(self, event: str, **fields: Any) -> None:
        raise NotImplementedError

    def status(self, text: str) -> None:
        pass

    def run_started(self, run_id: str, task: str, *, resumed: bool = False, model: dict | None = None,
                    kind: str | None = None, models: dict | None = None) -> None:
        self.emit("run_started", run_id=run_id, task=task, resumed=resumed, model=model, kind=kind,
                  **({"models": models} if models else {}))

    def update(self, node: str, update: dict[str, Any]) -> None:
        if node in PLAN_NODES:  # the plan comes out after the tool choice; its source is the planner's or the rule's
            self.source = {"source": update.get("plan_source"), "failures": len(update.get("plan_failures") or [])}
        elif node == "tool_choice" and "plan" in update:
            self.emit("plan", plan=update["plan"], **self.source)
        elif node in ("python_step", "llm_step", "tool_step", "approve_tool"):  # approve_tool: a rejected call
            for result in update.get("results") or []:
                # an artifact's bytes stay in the run's state (``hierplan show --artifacts DIR``); events name it
                artifacts = [{k: v for k, v in a.items() if k != "data"} for a in result.get("artifacts") or []]
                self.emit("step_finished", **{**result, "artifacts": artifacts})
        elif node == "replanner":
            for revision in update.get("replans") or []:
                self.emit("replan", **revision)
        elif node == "structured_answer":
            self.emit("structured_response", structured_response=update.get("structured_response"),
                      check=update["structured_check"])

    def live(self, event: dict[str, Any]) -> None:
        self.emit(**event)

    def approval_needed(self, run_id: str, request: dict[str, Any]) -> None:
        from hierplan.nodes.tool_approval import is_tool_request

        if is_tool_request(request):  # a tool call waits (approve_tools): its step, tool and arguments
            shown = {k: v for k, v in request.items() if k not in ("schema", "error")}
            self.emit("approval_needed", run_id=run_id, **shown, error=request.get("error"))
            return
        self.emit("approval_needed", run_id=run_id, plan=request["plan"], error=request.get("error"),
                  **({"tools": request["tools"]} if request.get("tools") else {}))

    def run_finished(self, run_id: str, status: str, final: str | None = None, error: str | None = None) -> None:
        if final is not None:
            self.emit("final", final=final)
        self.emit("run_finished", run_id=run_id, status=status, final=final, error=error)

    def close(self) -> None:
        pass
