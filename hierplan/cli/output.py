"""What a run prints: the plan, each step as it completes, the final answer; or JSON events, one per line."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO


class JsonReporter:
    """One JSON object per line on stdout, for other programs."""

    def __init__(self, out: TextIO | None = None):
        self.out = out or sys.stdout

    def emit(self, event: str, **fields: Any) -> None:
        self.out.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
        self.out.flush()

    def status(self, text: str) -> None:
        pass

    def run_started(self, run_id: str, task: str, resumed: bool = False, model: dict | None = None) -> None:
        self.emit("run_started", run_id=run_id, task=task, resumed=resumed, model=model)

    def update(self, node: str, update: dict[str, Any]) -> None:
        if node == "planner":
            self.emit("plan", plan=update["plan"], source=update["plan_source"],
                      failures=len(update.get("plan_failures") or []))
        elif node in ("python_step", "llm_step"):
            for result in update.get("results") or []:
                self.emit("step_finished", **result)
        elif node == "replanner":
            for revision in update.get("replans") or []:
                self.emit("replan", **revision)
        if "final" in update:  # the aggregator's answer, or a rejected plan's note
            self.emit("final", final=update["final"])

    def live(self, event: dict[str, Any]) -> None:
        """Events the nodes emit while they work (steps_started, code_attempt, final_token, ...)."""
        self.emit(**event)

    def run_finished(self, run_id: str, status: str, final: str | None = None, error: str | None = None) -> None:
        self.emit("run_finished", run_id=run_id, status=status, final=final, error=error)

    def close(self) -> None:
        pass


class HumanReporter:
    """The original tutorial's verbose output, with a progress line on stderr while the model works."""

    def __init__(self, out: TextIO | None = None):
        from rich.console import Console

        self.console = Console(file=out or sys.stdout, highlight=False)
        self.err = Console(stderr=True)
        self._status = self.err.status("starting") if self.err.is_terminal else None
        if self._status:
            self._status.start()
        self.plan: dict[str, Any] | None = None
        self.done: set[int] = set()
        self.streaming_final = False
        self.streamed = ""  # the answer as it streamed: the kept answer may differ (a check revised or ended it)

    def status(self, text: str) -> None:
        if self._status:
            self._status.update(text)

    def run_started(self, run_id: str, task: str, resumed: bool = False, model: dict | None = None) -> None:
        verb = "Resuming" if resumed else "Run"
        self.console.print(f"[bold]{verb} {run_id}[/bold]: {task}")
        if model:
            self.console.print(f"[dim]model: {describe_model(model)}[/dim]")
        self.status("planning")

    def update(self, node: str, update: dict[str, Any]) -> None:
        if node == "planner":
            self.plan = update["plan"]
            self._print_plan(update)
        elif node in ("python_step", "llm_step"):
            for result in update.get("results") or []:
                self.done.add(result["step_id"])
                self._print_step(result)
        elif node == "replanner":
            if "plan" in update:
                self.plan = update["plan"]
            for revision in update.get("replans") or []:
                print_revision(self.console, revision)
        if "final" in update:  # the aggregator's answer, or a rejected plan's note
            if self.streaming_final:
                self.console.print()  # the answer was printed token by token
                self.streaming_final = False
                if update["final"].strip() != self.streamed.strip():
                    self.console.rule("Final answer, as checked")
                    self.console.print(update["final"], markup=False)
            else:
                self.console.rule("Final answer")
                self.console.print(update["final"], markup=False)
        self._update_progress()

    def live(self, event: dict[str, Any]) -> None:
        kind = event["event"]
        if kind == "final_token":
            if not self.streaming_final:
                self.close()
                self.console.rule("Final answer")
                self.streaming_final = True
            self.streamed += event["text"]
            self.console.print(event["text"], end="", markup=False, highlight=False)
        elif kind == "code_attempt" and not event["ok"]:
            self.console.print(f"[dim]step {event['step_id']}: attempt {event['attempt']} failed "
                               f"({event['exit_reason']}): {event['error']}[/dim]", highlight=False)
        elif kind == "steps_started" and self.plan:
            titles = {s["id"]: s["title"] for s in self.plan["steps"]}
            ids = event["step_ids"]
            label = ", ".join(str(i) for i in ids)
            self.status(f"step{'s' if len(ids) > 1 else ''} {label} [{event['tool']}]: "
                        f"{titles.get(ids[0], '')}{' …' if len(ids) > 1 else ''}")
        elif kind == "planning":
            self.status("planning" if event["attempt"] != "retry" else "planning (retrying with a stricter prompt)")

    def _update_progress(self) -> None:
        if not self.plan:
            return
        pending = [s for s in self.plan["steps"] if s["id"] not in self.done]
        total = len(self.plan["steps"])
        if pending:
            step = pending[0]
            self.status(f"step {step['id']}/{total} [{step['tool']}]: {step['title']}")
        else:
            self.status("writing the final answer")

    def _print_plan(self, update: dict[str, Any]) -> None:
        plan = update["plan"]
        self.console.rule(f"Plan ({update['plan_source']})")
        if update["plan_source"] == "fallback":
            self.console.print("[yellow]The model gave no valid plan; using the fixed fallback plan.[/yellow]")
        self.console.print(f"[bold]Goal:[/bold] {plan['goal']}", markup=True)
        for assumption in plan["assumptions"]:
            self.console.print(f"  - {assumption}", markup=False)
        for step in plan["steps"]:
            self.console.print(f"  {step['id']}. [{step['tool']}] {step['title']}", markup=False)

    def _print_step(self, result: dict[str, Any]) -> None:
        mark = "[green]ok[/green]" if result["ok"] else "[red]FAILED[/red]"
        self.console.rule(f"Step {result['step_id']} [{result['tool']}] {result['title']}", style="dim")
        tokens = sum(c.get("generated_tokens") or 0 for c in result.get("calls") or [])
        attempts = len(result.get("attempts") or [])
        tries = f", {attempts} attempts" if attempts > 1 else ""
        self.console.print(f"{mark} in {result['seconds']:.1f} s, {tokens} tokens{tries}")
        if result.get("check"):
            self.console.print(format_check(result["check"]), markup=False, style="dim")
        if result.get("code"):
            self.console.print(result["code"], markup=False, style="cyan")
        self.console.print(result["output"], markup=False)

    def run_finished(self, run_id: str, status: str, final: str | None = None, error: str | None = None) -> None:
        self.close()
        if status == "done":
            self.err.print(f"[dim]run {run_id} done; see it again with: hierplan show {run_id}[/dim]")

    def close(self) -> None:
        if self._status:
            self._status.stop()
            self._status = None


def describe_model(model: dict) -> str:
    """"name on engine (quantization)" for a run's recorded model."""
    where = f" on {model['engine']}" if model.get("engine") else ""
    quant = f" ({model['quantization']})" if model.get("quantization") else ""
    return f"{model.get('name', '?')}{where}{quant}"


def format_check(check: dict[str, Any]) -> str:
    """One line: what the independent programs of a step's check printed (hierplan.nodes.vote)."""
    answers = ", ".join("failed" if a is None else str(a) for a in check.get("answers") or [])
    verdict = "kept" if not check.get("changed") else "changed to"
    return (f"check: {check.get('programs')} programs printed {answers}; {check.get('agreed')} agree, "
            f"{verdict} {check.get('chosen')}")


def print_revision(console, revision: dict[str, Any]) -> None:
    """One replan, as a run prints it live and `hierplan show` prints it afterwards: the new steps, or why
    there were none."""
    console.rule(f"Replan after step {revision['failed_step']} failed", style="yellow")
    if not revision["applied"]:
        reason = f" ({revision['parse_error']})" if revision.get("parse_error") else ""
        console.print(f"the model gave no usable revision{reason}; the plan goes on as it was", markup=False)
    for step in revision.get("steps") or []:
        console.print(f"  {step['id']}. [{step['tool']}] {step['title']}", markup=False)


def make_reporter(as_json: bool):
    return JsonReporter() if as_json else HumanReporter()
