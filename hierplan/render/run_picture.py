"""A picture of one run: its plan as a DAG (``depends_on`` edges), each step's tool, status and seconds,
colour-coded, steps replaced by a replan shown as such, and the final answer.

``draw_run(state)`` gives Mermaid text; ``draw_run_image(state, "png" | "svg")`` gives the rendered bytes.
``state`` is a run's state values (``graph.get_state(config).values``, ``graph.invoke(...)``'s result) or the
StateSnapshot itself.

A replan keeps the finished steps and drops the unfinished ones from the plan; the state keeps no copy of
them. Their ids are known (new steps are numbered after every old id), their titles and tools only from
earlier states: pass ``history`` (e.g. ``graph.get_state_history(config)``) to show them.
"""

from __future__ import annotations

from typing import Any, Iterable

from hierplan.render.picture import Edge, Node, Picture, render, shorten

RUN_STATUSES = ("running", "waiting", "interrupted", "failed", "done")
ANSWER_CHARS = 40


def _values(state: Any) -> dict[str, Any]:
    return dict(state.values if hasattr(state, "values") and not isinstance(state, dict) else state or {})


def _seconds(value: float | None) -> str:
    return "" if value is None else f", {value:.1f} s"


class _Builder:
    def __init__(self, values: dict[str, Any], history: Iterable[Any], run_status: str | None):
        self.values = values
        self.run_status = run_status
        self.plan = values.get("plan") or {"steps": []}
        self.results = {r["step_id"]: r for r in values.get("results") or []}
        self.active = {s["id"]: s for s in self.plan["steps"]}
        self.known = self._known_steps(history)
        self.picture = Picture()

    def _known_steps(self, history: Iterable[Any]) -> dict[int, dict[str, Any]]:
        """Every step any plan of this run held, by id (ids are never reused)."""
        known: dict[int, dict[str, Any]] = {}
        for state in history or []:
            for step in (_values(state).get("plan") or {}).get("steps") or []:
                known.setdefault(step["id"], step)
        known.update(self.active)
        return known

    def replaced_by(self) -> dict[int, int]:
        """step id -> the number (1-based) of the applied revision that replaced it."""
        replaced: dict[int, int] = {}
        applied = [r for r in self.values.get("replans") or [] if r.get("applied") and r.get("steps")]
        for number, revision in enumerate(applied, start=1):
            first_new = min(s["id"] for s in revision["steps"])
            # every id below the revision's first new id was in the plan then (or replaced before);
            # those without a result were the unfinished steps it replaced
            for step_id in range(1, first_new):
                if step_id not in self.results and step_id not in replaced and step_id not in self.active:
                    replaced[step_id] = number
        return replaced

    def status(self, step: dict[str, Any]) -> str:
        result = self.results.get(step["id"])
        if result is not None:
            return "done" if result["ok"] else "failed"
        if step["id"] in self.calls_waiting():
            return "waiting"  # its tool call waits for a person (approve_tools)
        if self.run_status == "running" and all(d in self.results for d in self._deps(step)):
            return "running"
        return "pending"

    def _deps(self, step: dict[str, Any]) -> list[int]:
        wanted = step.get("depends_on")
        return [i for i in self.active if i < step["id"]] if wanted is None else list(wanted)

    def _drawn_deps(self, step: dict[str, Any]) -> list[int]:
        """depends_on as given; 'every earlier step' (None) drawn as the earlier steps nothing later depends on,
        which says the same with fewer arrows."""
        if step.get("depends_on") is not None:
            return list(step["depends_on"])
        earlier = [i for i in self.active if i < step["id"]]
        feeding = {d for i in earlier for d in self._ancestors(i)}
        return [i for i in earlier if i not in feeding]

    def _ancestors(self, step_id: int) -> set[int]:
        seen: set[int] = set()
        todo = list(self._deps(self.active[step_id]))
        while todo:
            i = todo.pop()
            if i not in seen and i in self.active:
                seen.add(i)
                todo.extend(self._deps(self.active[i]))
        return seen

    def build(self, title: str | None) -> Picture:
        p = self.picture
        p.title = title if title is not None else (shorten(self.plan["goal"], 80) if self.plan.get("goal") else None)
        approval = self._approval_node()
        revision_of = {s["id"]: r for r in self.values.get("replans") or [] if r.get("applied")
                       for s in r.get("steps") or []}
        unrevised = {r["failed_step"] for r in self.values.get("replans") or [] if not r.get("applied")}
        for step_id, step in sorted(self.active.items()):
            status = self.status(step)
            result = self.results.get(step_id)
            lines = [f"{step_id}. {shorten(step['title'])}",
                     f"{step['tool']}, {status}{_seconds(result['seconds'] if result else None)}"]
            if step_id in unrevised:
                lines.append("replan: no usable revision")
            p.nodes.append(Node(f"s{step_id}", lines, status))
            deps = self._drawn_deps(step)
            revision = revision_of.get(step_id)
            failed = revision["failed_step"] if revision else None
            if failed is not None and failed not in deps and not (set(deps) & self._descendants_of(failed)):
                deps.append(failed)  # a revision's first steps hang off the failure that caused it
            for dep in sorted(deps):
                if dep == failed:
                    p.edges.append(Edge(f"s{dep}", f"s{step_id}", "thick", "replan"))
                else:
                    p.edges.append(Edge(f"s{dep}", f"s{step_id}"))
            if approval and not self._deps(step):
                p.edges.append(Edge("approval", f"s{step_id}"))
        for step_id, number in sorted(self.replaced_by().items()):
            step = self.known.get(step_id)
            title = shorten(step["title"]) if step else "(a step of an earlier plan)"
            tool = f"{step['tool']}, " if step else ""
            p.nodes.append(Node(f"s{step_id}", [f"{step_id}. {title}", f"{tool}replaced (replan {number})"],
                                "replaced"))
            deps = step.get("depends_on") if step else None
            if deps is None:  # every earlier step: drawn from the one before (ids of a plan are 1..n)
                deps = [step_id - 1] if step_id > 1 else []
            for dep in deps:
                p.edges.append(Edge(f"s{dep}", f"s{step_id}", "dotted"))
        self._final_node(approval)
        # steps in id order (replaced ones among them), the answer last: Mermaid lays nodes out in this order
        p.nodes.sort(key=lambda n: (n.id == "answer", n.id != "approval", int(n.id[1:]) if n.id[1:].isdigit() else 0))
        return p

    def _descendants_of(self, step_id: int) -> set[int]:
        return {i for i in self.active if step_id in self._ancestors(i)}

    def calls_waiting(self) -> set[int]:
        """The steps whose tool call was written and waits for a person's decision (approve_tools)."""
        return {int(k) for k, call in (self.values.get("tool_calls") or {}).items() if not call.get("decision")}

    def _approval_node(self) -> bool:
        decision = self.values.get("approval")
        if decision is None and (self.run_status != "waiting" or self.calls_waiting()):
            return False  # no plan approval, or the run waits at a tool call, not at the plan
        status = {"approved": "done", "edited": "done", "rejected": "failed"}.get(decision, "waiting")
        self.picture.nodes.append(Node("approval", ["plan approval", decision or "waiting"], status, round=True))
        return True

    def _final_node(self, approval: bool) -> None:
        v = self.values
        answer_calls = [c for c in v.get("calls") or [] if c.get("node") == "aggregator"]
        seconds = sum(c.get("seconds") or 0 for c in answer_calls) if answer_calls else None
        if v.get("approval") == "rejected":
            lines, status = ["final answer", "none: the plan was rejected"], "failed"
        elif v.get("final"):
            lines = ["final answer", f"done{_seconds(seconds)}", f"“{shorten(v['final'], ANSWER_CHARS)}”"]
            status = "done"
        else:
            every_step_ran = self.active and all(i in self.results for i in self.active)
            status = "running" if self.run_status == "running" and every_step_ran else "pending"
            lines = ["final answer", status]
        check = v.get("answer_check")
        if isinstance(check, dict) and "ok" in check:
            lines.append("answer check: ok" if check["ok"] else "answer check: differs from the computation")
        self.picture.nodes.append(Node("answer", lines, status, round=True))
        if v.get("approval") == "rejected":
            self.picture.edges.append(Edge("approval", "answer"))
            return
        feeding = {d for i in self.active for d in self._deps(self.active[i])}
        for step_id in sorted(i for i in self.active if i not in feeding):
            self.picture.edges.append(Edge(f"s{step_id}", "answer"))


def run_picture(state: Any, *, history: Iterable[Any] = (), run_status: str | None = None,
                title: str | None = None) -> Picture:
    """The run as a Picture. ``run_status``: the run's status (hierplan runs: running, waiting, ...); with
    "running", ready steps without a result are shown running; with "waiting", the plan waits for approval.
    A StateSnapshot that waits at an interrupt counts as "waiting" when no status is given."""
    if run_status is not None and run_status not in RUN_STATUSES:
        raise ValueError(f"run_status must be one of {RUN_STATUSES}, got {run_status!r}")
    if run_status is None and getattr(state, "interrupts", None):
        run_status = "waiting"
    return _Builder(_values(state), history, run_status).build(title)


def draw_run(state: Any, *, history: Iterable[Any] = (), run_status: str | None = None) -> str:
    """Mermaid text for a run (paste it into Markdown in a ```mermaid block)."""
    return run_picture(state, history=history, run_status=run_status).mermaid()


def draw_run_image(state: Any, fmt: str = "png", *, history: Iterable[Any] = (), run_status: str | None = None,
                   title: str | None = None) -> bytes:
    """PNG or SVG bytes for a run, rendered locally through pygraphviz."""
    return render(run_picture(state, history=history, run_status=run_status, title=title), fmt)
