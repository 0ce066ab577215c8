"""The web page over HTTP (Starlette's test client): every route, on scripted fake models."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("starlette", reason="the web page needs the server extra (starlette)")

from fakes import plan_json  # noqa: E402
from hierplan.app.runs import history  # noqa: E402
from hierplan.nodes.approval import REJECTED_FINAL  # noqa: E402
from hierplan.store import RunStore, open_checkpointer  # noqa: E402
from hierplan.ui.runner import STOPPED_ERROR  # noqa: E402
from helpers import cli, saved_values  # noqa: E402
from ui_support import Gate, LiveServer, page, status_of, wait_status  # noqa: E402,F401 - page is a fixture


def test_a_run_started_from_the_form_runs_to_its_answer(page):
    run_id = page.start(sequential="on", seed="7")
    assert page.wait(run_id, "done", "failed") == "done"
    html = page.client.get(f"/runs/{run_id}").text
    assert html.count('class="card done"') == 3 and "The final answer is 42." in html
    assert "Answer the question" in html and 'src="/runs/%s/picture.svg' % run_id in html
    options = RunStore.open(page.db).get(run_id).options
    assert options["parallel"] is False and options["seed"] == 7 and options["approve"] is False
    svg = page.client.get(f"/runs/{run_id}/picture.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml") and "<svg" in svg.text and "done" in svg.text


def test_the_kind_chosen_on_the_form_is_the_runs_and_shown_on_its_page(page):
    given = page.start("Compute", kind="numeric")
    decided = page.start("Write a haiku about tea")  # no kind chosen: decided from the task's words
    assert page.wait(given, "done") == "done" and page.wait(decided, "done") == "done"
    assert saved_values(page.db, given)["kind"] == "numeric"
    assert '<span id="kind">kind numeric (as given)</span>' in page.client.get(f"/runs/{given}").text
    assert '<span id="kind">kind writing</span>' in page.client.get(f"/runs/{decided}").text
    r = page.post("/runs", {"task": "keep me", "kind": "poetry"})
    assert r.status_code == 400 and "the kind must be one of numeric, writing" in r.text and "keep me" in r.text


def test_the_runs_page_lists_runs_newest_first_with_steps_tokens_seconds(page):
    first = page.start("Draft the first plan")
    page.wait(first, "done")
    second = page.start("Draft the second plan", approve="on")
    page.wait(second, "waiting")
    html = page.client.get("/").text
    assert html.index(second) < html.index(first)
    rows = re.findall(r'<tr data-status="(\w+)" data-run="(\w+)">', html)
    assert rows == [("waiting", second), ("done", first)]
    assert "3/3" in html and "0/3" in html and 'id="new-run"' in html


def test_a_plan_waiting_for_approval_is_approved_from_the_page(page):
    run_id = page.start(approve="on")
    assert page.wait(run_id, "waiting") == "waiting"
    html = page.client.get(f"/runs/{run_id}").text
    assert 'id="approve-plan"' in html and 'id="plan-json"' in html and page.fakes.model.count("llm_step") == 0
    r = page.post(f"/runs/{run_id}/approve")
    assert r.status_code == 303 and r.headers["location"] == f"/runs/{run_id}"
    assert page.wait(run_id, "done") == "done"
    values = saved_values(page.db, run_id)
    assert values["approval"] == "approved" and len(values["results"]) == 3
    assert page.fakes.model.count("planner") == 1


def test_a_rejected_plan_runs_no_step(page):
    run_id = page.start(approve="on")
    page.wait(run_id, "waiting")
    page.post(f"/runs/{run_id}/reject")
    page.wait(run_id, "done")
    assert saved_values(page.db, run_id)["final"] == REJECTED_FINAL and page.fakes.model.count("llm_step") == 0


def test_an_invalid_edited_plan_is_shown_inline_and_nothing_is_saved(page):
    run_id = page.start(approve="on")
    page.wait(run_id, "waiting")
    before = len(history(open_checkpointer(page.db), run_id))
    r = page.post(f"/runs/{run_id}/edit", {"plan": '{"goal": "only a goal"}'})
    assert r.status_code == 400
    assert "the edited plan is invalid" in r.text and "{&#34;goal&#34;: &#34;only a goal&#34;}" in r.text
    assert status_of(page.db, run_id) == "waiting" and len(history(open_checkpointer(page.db), run_id)) == before
    edited = json.loads(plan_json(["llm", "none", "llm"], goal="Edited goal"))
    page.post(f"/runs/{run_id}/edit", {"plan": json.dumps(edited)})
    page.wait(run_id, "done")
    values = saved_values(page.db, run_id)
    assert values["plan"]["goal"] == "Edited goal" and values["plan_source"] == "edited"
    assert [r["tool"] for r in values["results"]] == ["llm", "none", "llm"]


def test_an_edited_plan_may_name_the_runs_registered_tools_and_no_other(page):
    from langchain_core.tools import tool

    calls = []

    @tool
    def stock(sku: str) -> str:
        """Units in stock of a product."""
        calls.append(sku)
        return f"{sku}: 12 units"

    page.runner.service.load_tools = lambda options: [stock]
    page.fakes.model.script["tool_step"] = ['{"sku": "A-1"}']
    run_id = page.start("How many units of A-1 do we have?", approve="on")
    page.wait(run_id, "waiting")
    plan = json.loads(plan_json(["llm"], goal="Units of A-1"))
    plan["steps"][0]["tool"] = "weather"  # not a tool of this run: refused on the page, nothing saved
    r = page.post(f"/runs/{run_id}/edit", {"plan": json.dumps(plan)})
    assert r.status_code == 400 and "the edited plan is invalid" in r.text and status_of(page.db, run_id) == "waiting"
    plan["steps"][0]["tool"] = "stock"
    assert page.post(f"/runs/{run_id}/edit", {"plan": json.dumps(plan)}).status_code == 303
    page.wait(run_id, "done")
    values = saved_values(page.db, run_id)
    assert values["plan_source"] == "edited" and values["results"][0]["tool"] == "stock" and calls == ["A-1"]


def test_a_decision_on_a_run_that_does_not_wait_is_refused(page):
    run_id = page.start()
    page.wait(run_id, "done")
    r = page.post(f"/runs/{run_id}/approve")
    assert r.status_code == 400 and "is not waiting for approval" in r.text
    assert page.post(f"/runs/{run_id}/explode").status_code == 404


def test_a_failed_run_shows_its_error_and_resumes_from_the_page(page):
    page.fakes.model.script["llm_step"] = [RuntimeError("the model fell over")]
    run_id = page.start(sequential="on")
    assert page.wait(run_id, "failed") == "failed"
    html = page.client.get(f"/runs/{run_id}").text
    assert "the model fell over" in html and 'id="resume-run"' in html
    assert page.post(f"/runs/{run_id}/resume").status_code == 303
    assert page.wait(run_id, "done") == "done"
    assert len(saved_values(page.db, run_id)["results"]) == 3
    assert len(page.fakes.loads) == 1  # one model for the server, loaded once


def test_fork_starts_a_new_run_from_a_checkpoint(page):
    run_id = page.start(sequential="on")
    page.wait(run_id, "done")
    rows = history(open_checkpointer(page.db), run_id)
    at = next(r for r in rows if r["plan"] and r["results"] == 1)
    html = page.client.get(f"/runs/{run_id}").text
    assert at["checkpoint"] in html  # offered in the history table
    r = page.post(f"/runs/{run_id}/fork", {"checkpoint": at["checkpoint"]})
    new_id = r.headers["location"].rsplit("/", 1)[1]
    assert new_id != run_id and page.wait(new_id, "done") == "done"
    assert RunStore.open(page.db).get(new_id).options["forked_from"] == run_id
    assert page.fakes.model.count("planner") == 1  # the fork ran from the copied plan
    bad = page.post(f"/runs/{run_id}/fork", {"checkpoint": "nope"})
    assert bad.status_code == 400 and "has no checkpoint" in bad.text


def test_form_errors_are_one_line_and_keep_what_was_typed(page):
    r = page.post("/runs", {"task": "   "})
    assert r.status_code == 400 and "the task is empty" in r.text
    r = page.post("/runs", {"task": "keep me", "temperature": "hot"})
    assert r.status_code == 400 and "temperature must be a number" in r.text and "keep me" in r.text
    r = page.post("/runs", {"task": "x", "max_replans": "-1"})
    assert r.status_code == 400 and "max replans must be 0 or more" in r.text
    assert RunStore.open(page.db).list() == []


def test_unknown_and_malformed_run_ids(page):
    r = page.client.get("/runs/nosuchrun")
    assert r.status_code == 404 and "no run &#39;nosuchrun&#39;" in r.text and "Traceback" not in r.text
    assert page.client.get("/runs/bad%20id").status_code == 400
    assert page.client.get("/runs/nosuchrun/picture.svg").status_code == 404


def test_events_stream_a_run_live_and_end_with_it(page):
    gate = Gate(plan_json(["llm", "none", "llm"], goal="Live goal"))
    page.fakes.model.script["planner"] = [gate]
    run_id = page.start()
    assert gate.entered.wait(10)
    events = []
    with page.client.stream("GET", f"/runs/{run_id}/events") as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        gate.opened.set()
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
            if line.startswith("event: idle"):
                break
    kinds = [e["event"] for e in events]
    for kind in ("plan", "steps_started", "step_finished", "token", "final", "run_finished"):
        assert kind in kinds, kinds
    answer = [e for e in events if e["event"] == "token" and e["node"] == "aggregator"]
    assert "".join(e["text"] for e in answer) == "The final answer is 42."
    assert events[kinds.index("run_finished")]["status"] == "done"
    # a run this server does not work on: the stream says so at once
    with page.client.stream("GET", f"/runs/{run_id}/events") as r:
        assert "event: idle" in r.read().decode()


def test_several_runs_at_once_share_the_one_model(page):
    gate = Gate(plan_json(["llm", "none", "llm"], goal="Held"))
    page.fakes.model.script["planner"] = [gate]
    held = page.start("Draft the held plan")
    assert gate.entered.wait(10)
    others = [page.start(f"Draft plan {i}") for i in range(2)]
    for run_id in others:
        assert page.wait(run_id, "done") == "done"
    assert status_of(page.db, held) == "running"
    gate.opened.set()
    assert page.wait(held, "done") == "done" and len(page.fakes.loads) == 1


def test_a_stopping_server_leaves_its_runs_interrupted_and_resumable(page):
    gate = Gate(plan_json(["llm", "none", "llm"]))
    page.fakes.model.script["planner"] = [gate]
    with LiveServer(page.db) as server:
        run_id = server.runner.start("Draft the held plan", {"split_writing": True})  # the planner plans it
        assert gate.entered.wait(10)
    assert status_of(page.db, run_id) == "interrupted"
    assert RunStore.open(page.db).get(run_id).error == STOPPED_ERROR
    gate.opened.set()
    wait_status(page.db, run_id, "interrupted", "done", runner=server.runner)
    code, out, err = cli("resume", run_id, "--db", page.db)  # the CLI continues it
    assert code == 0 and status_of(page.db, run_id) == "done", err


# --- tool approval (approve_tools) and MCP servers chosen on the form ----------------------------------------

def _stock_tool(page, calls: list):
    from langchain_core.tools import tool

    @tool
    def stock(sku: str, warehouse: int = 1) -> str:
        """Units in stock of a product."""
        calls.append({"sku": sku, "warehouse": warehouse})
        return f"{sku}: 12 units in warehouse {warehouse}"

    page.runner.service.load_tools = lambda options: [stock]
    page.fakes.model.script["planner"] = [plan_json(["stock", "llm", "llm"], goal="Units of A-1")]
    page.fakes.model.script["tool_step"] = ['{"sku": "A-1"}']


def test_a_tool_call_waits_on_the_page_with_its_arguments_and_an_edit_is_checked(page):
    calls: list = []
    _stock_tool(page, calls)
    run_id = page.start("How many units of A-1 do we have?", approve_tools="on")
    assert page.wait(run_id, "waiting") == "waiting"
    html = page.client.get(f"/runs/{run_id}").text
    assert 'id="tool-approval"' in html and 'id="approve-call"' in html and 'id="arguments-json"' in html
    assert "&#34;sku&#34;: &#34;A-1&#34;" in html and 'id="approve-plan"' not in html and calls == []
    r = page.post(f"/runs/{run_id}/edit", {"arguments": "{not json"})  # refused here, kept as typed
    assert r.status_code == 400 and "the edited arguments are not JSON" in r.text and "{not json" in r.text
    assert status_of(page.db, run_id) == "waiting"
    page.post(f"/runs/{run_id}/edit", {"arguments": '{"sku": "A-1", "warehouse": "north"}'})  # does not fit
    page.wait(run_id, "waiting")
    html = page.client.get(f"/runs/{run_id}").text
    assert 'id="tool-error"' in html and "the edited arguments do not fit stock: warehouse" in html
    assert calls == []
    page.post(f"/runs/{run_id}/edit", {"arguments": '{"sku": "A-1", "warehouse": 3}'})
    assert page.wait(run_id, "done") == "done"
    assert calls == [{"sku": "A-1", "warehouse": 3}]
    values = saved_values(page.db, run_id)
    assert values["results"][0]["output"] == "A-1: 12 units in warehouse 3"
    assert values["tool_calls"]["1"]["decision"] == "edited" and page.fakes.model.count("tool_step") == 1


def test_a_tool_call_is_approved_or_rejected_from_the_page(page):
    calls: list = []
    _stock_tool(page, calls)
    run_id = page.start("How many units of A-1 do we have?", approve_tools="on")
    page.wait(run_id, "waiting")
    page.post(f"/runs/{run_id}/approve")
    page.wait(run_id, "done")
    assert calls == [{"sku": "A-1", "warehouse": 1}]
    _stock_tool(page, calls)
    run_id = page.start("How many units of A-1 do we have?", approve_tools="on", max_replans="0")
    page.wait(run_id, "waiting")
    page.post(f"/runs/{run_id}/reject")
    page.wait(run_id, "done")
    first = saved_values(page.db, run_id)["results"][0]
    assert not first["ok"] and first["error"] == "rejected by the user" and len(calls) == 1


def test_the_form_chooses_among_the_hosts_mcp_servers_by_name(tmp_path, monkeypatch):
    pytest.importorskip("langchain_mcp_adapters")
    import sys
    from pathlib import Path

    from hierplan.ui.runner import Runner
    from ui_support import Page, fake_models

    server = Path(__file__).parent / "servers" / "mcp_tools.py"
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {
        "facts": {"command": sys.executable, "args": [str(server)], "cwd": str(tmp_path)},
        "elsewhere": {"url": "http://127.0.0.1:9/mcp"}}}))  # never reached: not chosen
    fakes = fake_models(monkeypatch, script={"planner": [plan_json(["lookup", "llm", "llm"])],
                                             "tool_step": ['{"topic": "atlantis"}']})
    db = str(tmp_path / "ui.sqlite")
    ui = Page(db, Runner(db, {"mcp": str(servers)}))
    html = ui.client.get("/").text
    assert 'id="mcp_servers"' in html and 'placeholder="all: facts, elsewhere"' in html
    r = ui.post("/runs", {"task": "Capital of Atlantis?", "mcp_servers": "nope"})
    import html as html_text

    shown = html_text.unescape(r.text)
    assert r.status_code == 400 and "mcp_servers names 'nope'" in shown and "(it has facts, elsewhere)" in shown
    run_id = ui.start("What is the capital of Atlantis? Show the steps.", mcp_servers="facts")
    assert ui.wait(run_id, "done", "failed") == "done"
    first = saved_values(db, run_id)["results"][0]
    assert first["ok"] and first["output"].startswith("The capital of Atlantis is Poseidonia")
    assert fakes.model.count("tool_step") == 1

def test_a_thread_is_started_and_continued_from_the_page(page):
    first = page.start("Write a checklist for a picnic", thread="picnic")
    assert first == "picnic" and page.wait(first, "done", "failed") == "done"
    html = page.client.get(f"/runs/{first}").text
    assert '<span id="thread">thread picnic, turn 1</span>' in html
    assert 'id="next-turn"' in html and 'name="thread" value="picnic"' in html
    second = page.start("Now shorten it", thread="picnic")  # what the run page's "Next turn" form posts
    assert second == "picnic-2" and page.wait(second, "done", "failed") == "done"
    saved = RunStore.open(page.db).get(second)
    assert (saved.thread, saved.turn) == ("picnic", 2)
    assert "<td>picnic #2</td>" in page.client.get("/").text
    from helpers import saved_values

    assert [t["task"] for t in saved_values(page.db, second)["history"]] == ["Write a checklist for a picnic"]
