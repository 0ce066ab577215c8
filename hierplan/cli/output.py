"""What a run prints: the plan, each step as it completes, the final answer; or JSON events, one per line.

Tokens (``token`` events, hierplan.app.events.TokenEvents): the final answer and each rewrite of it are printed
as they are generated, whatever stdout is. A step's text (an LLM step's answer, a Python step's program) is
written by steps working side by side, so on a terminal it is shown live under the progress line, the last
``config.PREVIEW_LINES`` lines of each working step, and printed in full when the step finishes; elsewhere (a
pipe, a file) only the finished step is printed.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, TextIO

from hierplan.app.events import PLAN_NODES, Events
from hierplan.config import PREVIEW_LINES
from hierplan.render.text import (describe_models, format_artifact, format_check, format_kind, format_memory,
                                  format_tool_call, plan_lines, planned_tool_calls, revision_lines, revision_title, structured_lines)

STEP_NODES = ("python_step", "llm_step", "tool_step", "approve_tool")  # approve_tool: a rejected call
ANSWER_NODES = ("aggregator", "reviser", "plain_answer")


class JsonReporter(Events):
    """The run's events (hierplan.app.events), one JSON object per line on stdout, for other programs."""

    def __init__(self, out: TextIO | None = None):
        super().__init__()
        self.out = out or sys.stdout

    def emit(self, event: str, **fields: Any) -> None:
        self.out.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
        self.out.flush()


class LiveArea:
    """The progress line and, under it, the tail of each working step's text as it streams: a transient rich
    Live on one console (what is printed meanwhile goes above it). Nothing is shown unless that console is a
    terminal."""

    def __init__(self, console: Any):
        from rich.spinner import Spinner

        self.console = console
        self.spinner = Spinner("dots", text="starting")
        self.texts: dict[int, tuple[str, int | None, str]] = {}  # step id -> (label, attempt, text so far)
        self._lock = threading.Lock()
        self._live: Any = None

    def start(self) -> None:
        from rich.live import Live

        if self._live is None and self.console.is_terminal:
            self._live = Live(console=self.console, transient=True, refresh_per_second=8,
                              get_renderable=self.render)
            self._live.start()

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def status(self, text: str) -> None:
        self.spinner.update(text=text)

    def add(self, step_id: int, label: str, attempt: int | None, text: str) -> None:
        """More of a step's text; a new attempt (a repaired program) starts its text again."""
        with self._lock:
            _, seen, before = self.texts.get(step_id, (label, attempt, ""))
            self.texts[step_id] = (label, attempt, (before if seen == attempt else "") + text)

    def drop(self, step_id: int) -> None:
        with self._lock:
            self.texts.pop(step_id, None)

    def render(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        with self._lock:
            shown = list(self.texts.values())
        parts: list[Any] = [self.spinner]
        for label, attempt, text in shown:
            parts.append(Text(label + (f" (attempt {attempt})" if attempt and attempt > 1 else ""), style="dim"))
            parts.extend(Text("  " + line, no_wrap=True, overflow="ellipsis")
                         for line in text.rstrip("\n").split("\n")[-PREVIEW_LINES:])
        return Group(*parts)


class HumanReporter:
    """The original tutorial's verbose output, with a progress line while the model works: on stdout with each
    working step's text under it when stdout is a terminal (``previews``), else on stderr when that is one."""

    def __init__(self, out: TextIO | None = None, previews: bool | None = None):
        from rich.console import Console

        self.console = Console(file=out or sys.stdout, highlight=False, force_terminal=previews)
        self.previews = self.console.is_terminal
        self.err = Console(stderr=True)
        self._area = LiveArea(self.console if self.previews else self.err)
        self._area.start()
        self.plan: dict[str, Any] | None = None
        self.source: str | None = None
        self.done: set[int] = set()
        self.streamed: str | None = None  # the answer (or its latest rewrite) as it streamed (None: nothing streamed)
        self.structured: dict[str, Any] | None = None  # structured_answer's update, printed after the answer

    def status(self, text: str) -> None:
        self._area.status(text)

    def run_started(self, run_id: str, task: str, *, resumed: bool = False, model: dict | None = None,
                    kind: str | None = None, models: dict | None = None) -> None:
        verb = "Resuming" if resumed else "Run"
        self.console.print(f"[bold]{verb} {run_id}[/bold]: {task}")
        if model or models:
            self.console.print(f"model: {describe_models(model, models)}", style="dim", markup=False)
        if kind:
            self.console.print(format_kind(kind), style="dim", markup=False)

    def update(self, node: str, update: dict[str, Any]) -> None:
        if node in PLAN_NODES:
            self.source = update.get("plan_source")
        elif node == "tool_choice" and "plan" in update:
            if self.plan is None:  # the plan as it runs; after a replan the revision is printed instead
                self._print_plan(update["plan"], self.source)
            self.plan = update["plan"]
        elif node in STEP_NODES:
            for result in update.get("results") or []:
                self.done.add(result["step_id"])
                self._area.drop(result["step_id"])
                self._print_step(result)
        elif node == "replanner":
            for revision in update.get("replans") or []:
                print_revision(self.console, revision)
        elif node == "structured_answer":
            self.structured = update
        self._update_progress()

    def live(self, event: dict[str, Any]) -> None:
        kind = event["event"]
        if kind == "token":
            self._token(event)
        elif kind == "memory":
            if line := format_memory(event["turns"], event["remembered"], event["recalled"]):
                self.console.print(line, style="dim", markup=False)
        elif kind == "kind":
            self.console.print(format_kind(event["kind"]) + (" (as given)" if event.get("given") else ""),
                               style="dim", markup=False)
        elif kind == "code_attempt" and not event["ok"]:
            self.console.print(f"step {event['step_id']}: attempt {event['attempt']} failed "
                               f"({event['exit_reason']}): {event['error']}", style="dim", markup=False)
        elif kind == "steps_started" and self.plan:
            if self.streamed is None:  # after an approval asked at the terminal, the steps' progress line again
                self._area.start()
            titles = {s["id"]: s["title"] for s in self.plan["steps"]}
            ids = event["step_ids"]
            label = ", ".join(str(i) for i in ids)
            self.status(f"step{'s' if len(ids) > 1 else ''} {label} [{event['tool']}]: "
                        f"{titles.get(ids[0], '')}{' …' if len(ids) > 1 else ''}")
        elif kind == "planning":
            self.status("planning" if event["attempt"] != "retry" else "planning (retrying with a stricter prompt)")

    def _token(self, event: dict[str, Any]) -> None:
        node, text = event["node"], event["text"]
        if node in ANSWER_NODES:  # the answer, and each rewrite of it, printed as it comes
            if event["offset"] == 0 and (text or event["done"]):
                self.close()
                if self.streamed is not None:
                    self.console.print()
                self.console.rule("Final answer" if node == "aggregator"
                                  else f"Rewrite {event.get('attempt') or 1}, told what the answer broke")
                self.streamed = ""
            self.streamed = (self.streamed or "") + text
            self.console.print(text, end="", markup=False, highlight=False)
        elif self.previews and event["step_id"] is not None and event["step_id"] not in self.done:
            step = next((s for s in (self.plan or {}).get("steps") or [] if s["id"] == event["step_id"]), None)
            label = f"step {event['step_id']}" + (f" [{step['tool']}] {step['title']}" if step else "")
            self._area.add(event["step_id"], label, event.get("attempt"), text)

    def approval_needed(self, run_id: str, request: dict[str, Any]) -> None:
        from hierplan.nodes.tool_approval import is_tool_request

        self.close()
        if is_tool_request(request):  # a tool call waits (approve_tools)
            self.console.rule(f"Step {request['step_id']} [{request['tool']}] {request['title']}: approve this call?")
            self.console.print(f"{request['tool']}: {request['description']}", markup=False, style="dim")
            self.console.print(f"call: {request['tool']} {json.dumps(request['arguments'], ensure_ascii=False)}",
                               markup=False, style="cyan")
            return
        if self.plan is None:  # planned by an earlier process: show it before asking
            self._print_plan(request["plan"], request.get("plan_source"))
        if calls := planned_tool_calls(request["plan"], request.get("tools")):
            self.console.print("Tool calls planned (their arguments are written when the step runs):")
            for line in calls:
                self.console.print(line, markup=False)

    def _update_progress(self) -> None:
        if not self.plan:
            return
        pending = [s for s in self.plan["steps"] if s["id"] not in self.done]
        total = len(self.plan["steps"])
        if pending:
            step = pending[0]
            self.status(f"step {step['id']}/{total} [{step['tool']}]: {step['title']}")
        else:
            self.status("checking and writing the final answer")

    def _print_plan(self, plan: dict[str, Any], source: str | None) -> None:
        self.console.rule(f"Plan ({source})")
        if source == "fallback":
            self.console.print("[yellow]The model gave no valid plan; using the fixed fallback plan.[/yellow]")
        self.console.print(f"[bold]Goal:[/bold] {plan['goal']}", markup=True)
        for assumption in plan["assumptions"]:
            self.console.print(f"  - {assumption}", markup=False)
        for line in plan_lines(plan):
            self.console.print(line, markup=False)

    def _print_step(self, result: dict[str, Any]) -> None:
        from rich.text import Text

        mark = "[green]ok[/green]" if result["ok"] else "[red]FAILED[/red]"
        # as text: "[llm]" and a model-written title are not rich markup
        self.console.rule(Text(f"Step {result['step_id']} [{result['tool']}] {result['title']}"), style="dim")
        tokens = sum(c.get("generated_tokens") or 0 for c in result.get("calls") or [])
        attempts = len(result.get("attempts") or [])
        tries = f", {attempts} attempts" if attempts > 1 else ""
        self.console.print(f"{mark} in {result['seconds']:.1f} s, {tokens} tokens{tries}")
        if mended := (result.get("attempts") or [{}])[-1].get("mended"):
            self.console.print("fixed by rule before it ran: " + "; ".join(mended), markup=False, style="dim")
        if result.get("check"):
            self.console.print(format_check(result["check"]), markup=False, style="dim")
        if result.get("code"):
            self.console.print(result["code"], markup=False, style="cyan")
        if call := format_tool_call(result):
            self.console.print(call, markup=False, style="cyan")
        self.console.print(result["output"], markup=False)
        for artifact in result.get("artifacts") or []:
            self.console.print(format_artifact(artifact), markup=False, style="green")

    def run_finished(self, run_id: str, status: str, final: str | None = None, error: str | None = None) -> None:
        self.close()
        if final is not None:
            self._print_final(final)
        if self.structured is not None:
            print_structured(self.console, self.structured)
        if status == "done":
            self.err.print(f"[dim]run {run_id} done; see it again with: hierplan show {run_id}[/dim]")

    def _print_final(self, final: str) -> None:
        """The run's answer: what streamed stays; the answer as checked follows when the checks changed it."""
        if self.streamed is not None:
            self.console.print()
            if final.strip() == self.streamed.strip():
                return
            self.console.rule("Final answer, as checked")
        else:
            self.console.rule("Final answer")
        self.console.print(final, markup=False)

    def close(self) -> None:
        self._area.stop()


def print_revision(console, revision: dict[str, Any]) -> None:
    """One replan, as a run prints it live and `hierplan show` prints it afterwards."""
    console.rule(revision_title(revision), style="yellow")
    for line in revision_lines(revision):
        console.print(line, markup=False)


def print_structured(console, values: dict[str, Any]) -> None:
    """The answer as the run's response_format, as a run prints it live and `hierplan show` afterwards."""
    lines = structured_lines(values)
    if lines:
        console.rule("Structured answer")
        for line in lines:
            console.print(line, markup=False)


def make_reporter(as_json: bool):
    return JsonReporter() if as_json else HumanReporter()
