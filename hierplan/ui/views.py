"""What the pages show, read from the run database (the truth after any reload) plus the live bits the
server's hub holds for the runs it works on. Plain dicts: the templates only lay them out."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from hierplan.app.runs import approval_request, checkpoints, past_states, run_state
from hierplan.errors import RunNotFoundError
from hierplan.render import text
from hierplan.store import RunStore, open_checkpointer, read_checkpoint
from hierplan.ui.hub import Hub

LIST_LIMIT = 200  # newest runs on the runs page
HISTORY_LIMIT = 60  # checkpoints offered for a fork
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Saved files the artifact route serves inline: images that can hold no script."""
IMAGE_TYPES = INLINE_TYPES | {"image/svg+xml"}
"""Saved files the run page shows as pictures: through <img>, where an SVG runs nothing (its route serves it
only as a download, so opened directly it is never a page)."""
FILE_FIELDS = ("name", "size", "sha256", "media_type")


class NotFound(RunNotFoundError):
    """A run has no such step or saved file: answered as an unknown run is (404)."""


def totals(values: dict[str, Any]) -> dict[str, Any]:
    """Steps done of the plan's, generated tokens and model/sandbox seconds of a run's state."""
    results = values.get("results") or []
    calls = text.all_calls(values)
    steps = (values.get("plan") or {}).get("steps") or []
    seconds = sum(c.get("seconds") or 0 for c in values.get("calls") or []) + sum(r.get("seconds") or 0 for r in results)
    return {"steps_done": sum(1 for r in results if r.get("ok")), "steps_total": len(steps),
            "tokens": sum(c.get("generated_tokens") or 0 for c in calls), "seconds": seconds}


def run_rows(db: str) -> list[dict[str, Any]]:
    store = RunStore.open(db)
    try:
        records = store.list()[:LIST_LIMIT]
    finally:
        store.close()
    saver = open_checkpointer(db)
    return [{**r.as_json(), **totals(read_checkpoint(saver, r.id, db))} for r in records]


def picture_svg(db: str, run_id: str) -> bytes:
    from hierplan.render.run_picture import draw_run_image

    record, values = run_state(db, run_id)
    return draw_run_image(values, "svg", history=past_states(db, record.id), run_status=record.status)


def artifact_url(run_id: str, step_id: int, name: str) -> str:
    return f"/runs/{quote(run_id, safe='')}/artifacts/{step_id}/{quote(name)}"


def artifact_views(run_id: str, result: dict[str, Any] | None) -> list[dict[str, Any]]:
    """What a step saved under out/, without the bytes: each with its URL, whether it is shown as a picture,
    and its line as `hierplan show` prints it."""
    return [{**{k: a[k] for k in FILE_FIELDS}, "image": a["media_type"] in IMAGE_TYPES,
             "url": artifact_url(run_id, result["step_id"], a["name"]), "line": text.format_artifact(a)}
            for a in (result or {}).get("artifacts") or []]


def artifact(db: str, run_id: str, step_id: str, name: str) -> dict[str, Any]:
    """The saved file ``name`` of step ``step_id`` (its record as the run page lists it; its bytes: stored_path)."""
    record, values = run_state(db, run_id)
    results = {str(r["step_id"]): r for r in values.get("results") or []}
    for a in (results.get(step_id) or {}).get("artifacts") or []:
        if a["name"] == name:
            return a
    raise NotFound(f"run {record.id} has no file out/{name[:200]} saved by step {step_id[:20]}")


def stored_path(db: str, record: dict[str, Any]) -> str:
    """Where a saved file's bytes are on this machine: the database's file store (hierplan.store.files)."""
    from hierplan.store import open_file_store
    from hierplan.tools.files import local_path

    return local_path(record, open_file_store(db))


def _step_statuses(values: dict[str, Any], history: list[dict[str, Any]], status: str) -> dict[int, str]:
    """Each step's status as the run picture colours it (done, failed, running, pending, replaced)."""
    from hierplan.render.run_picture import run_picture

    picture = run_picture(values, history=history, run_status=status)
    return {int(n.id[1:]): n.status for n in picture.nodes if n.id.startswith("s") and n.id[1:].isdigit()}


def printed_answer(values: dict[str, Any]) -> bool:
    """Whether the final answer is what a program printed (a question about the user's data is answered by the
    kept program's output, a table perhaps): the page shows it as printed, not as Markdown."""
    final = (values.get("final") or "").strip()
    vote = values.get("vote") or {}
    printed = {(vote.get("stdout") or "").strip()}
    printed |= {(r.get("stdout") or "").strip() for r in values.get("results") or [] if r.get("tool") == "python"}
    return bool(final) and final in printed


def run_view(db: str, run_id: str, hub: Hub) -> dict[str, Any]:
    record, values = run_state(db, run_id)
    past = past_states(db, record.id)
    statuses = _step_statuses(values, past, record.status)
    live = hub.live(record.id)
    working = live.working if live else set()
    results = {r["step_id"]: r for r in values.get("results") or []}
    plan = values.get("plan") or {}
    known: dict[int, dict[str, Any]] = {}
    for state in past:
        for step in (state.get("plan") or {}).get("steps") or []:
            known.setdefault(step["id"], step)
    known.update({s["id"]: s for s in plan.get("steps") or []})
    cards = []
    for step_id in sorted(statuses):
        result = results.get(step_id)
        step_status = "running" if step_id in working else statuses[step_id]
        calls = (result or {}).get("calls") or []
        cards.append({"step": known.get(step_id, {"id": step_id, "title": "(a step of an earlier plan)"}),
                      "result": result, "status": step_status, "artifacts": artifact_views(record.id, result),
                      "tokens": sum(c.get("generated_tokens") or 0 for c in calls),
                      # what the step's model call has written so far, while this server works on it
                      "streamed": live.step_text.get(step_id, "") if live and step_id in working else None,
                      "attempt": live.step_attempt.get(step_id) if live else None})
    return {
        "run": record.as_json(), "status": record.status, "options": record.options, "plan": plan,
        "kind": values.get("kind") or record.options.get("kind"), "kind_given": bool(record.options.get("kind")),
        "files": [{**{k: f[k] for k in FILE_FIELDS}, "preview": f.get("preview") or ""}
                  for f in values.get("files") or []],
        "plan_source": values.get("plan_source"), "cards": cards, "replans": values.get("replans") or [],
        "final": values.get("final"), "final_printed": printed_answer(values), "approval": values.get("approval"),
        "answer_check": text.format_answer_check(values["answer_check"]) if values.get("answer_check") else None,
        "instruction_check": (text.describe_instructions(values["instruction_check"])
                              if values.get("instruction_check") else None),
        "calls": text.format_calls(values) if values.get("calls") or results else None,
        "totals": totals(values), "checkpoints": checkpoints(db, record.id)[:HISTORY_LIMIT],
        "plan_json": json.dumps(plan, indent=2, ensure_ascii=False) if plan else "",
        "request": approval_request(db, record.id) if record.status == "waiting" else None,
        "tool_calls": values.get("tool_calls") or {},
        "live": live, "working_here": live is not None,
        "version": len(past) + len(working),  # the picture's cache key: changes when a checkpoint is added
    }
