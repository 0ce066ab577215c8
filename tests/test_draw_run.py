"""A picture of a run (hierplan.draw_run): scripted runs drawn as Mermaid (pinned by snapshots), PNG and SVG.

Snapshots: tests/snapshots/run_*.mmd; rewrite them deliberately with UPDATE_SNAPSHOTS=1.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from langgraph.types import Command

from fakes import FakeExecution, ScriptedChatModel, plan_json
from hierplan import build_graph, draw_run, draw_run_image
from hierplan.render.run_picture import run_picture

SNAPSHOTS = Path(__file__).parent / "snapshots"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CONFIG = {"configurable": {"thread_id": "t"}}
REVISION = json.dumps({"steps": [
    {"id": 1, "title": "Describe the method", "instruction": "Describe how to combine them", "tool": "llm"},
    {"id": 2, "title": "Check the sum", "instruction": "Check it", "tool": "llm"}]})


def failing_runner(code: str, before=()) -> FakeExecution:
    return FakeExecution(False, "", "ZeroDivisionError: division by zero", "error")


def fixed_seconds(values: dict) -> dict:
    """Seconds are measured; the snapshots pin made-up ones (step id * 1.5, aggregator 2.0)."""
    results = [{**r, "seconds": r["step_id"] * 1.5} for r in values.get("results") or []]
    calls = [{**c, "seconds": 2.0} for c in values.get("calls") or []]
    return {**values, "results": results, "calls": calls}


def matches_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.mmd"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(text)
    assert text == path.read_text()


# Each run's task names parts ("steps", "plan") and its graph has split_writing, so the planner plans it: without
# split_writing, a piece of writing with parts is one piece planned by rule.
@pytest.fixture
def failed_run():
    """Step 2 (python) fails after its repairs; with max_replans=0 the run goes on: step 3 done, an answer."""
    model = ScriptedChatModel(script={"planner": [plan_json(["llm", "python", "llm"], depends={3: [1]})]},
                              default={"aggregator": "The total is 42 apples."})
    graph = build_graph(model, run_code=failing_runner, constrain=False, max_replans=0, split_writing=True)
    return fixed_seconds(graph.invoke({"task": "Count the apples in steps"}, CONFIG))


@pytest.fixture
def replanned_run():
    """Step 2 fails; the replanner replaces the unfinished steps 3 and 4 with two new ones (5 and 6)."""
    model = ScriptedChatModel(script={"planner": [plan_json(["llm", "python", "llm", "llm"])],
                                      "replanner": [REVISION]},
                              default={"aggregator": "It is 42."})
    graph = build_graph(model, run_code=failing_runner, constrain=False, split_writing=True)
    values = fixed_seconds(graph.invoke({"task": "Add the numbers in steps"}, CONFIG))
    return values, list(graph.get_state_history(CONFIG))


@pytest.fixture
def waiting_run():
    """approve=True: the plan (a diamond: 2 and 3 after 1, 4 after both) waits for a person."""
    model = ScriptedChatModel(script={"planner": [plan_json(["llm", "python", "llm", "llm"],
                                                            depends={2: [1], 3: [1], 4: [2, 3]})]})
    graph = build_graph(model, constrain=False, approve=True, split_writing=True)
    graph.invoke({"task": "Plan a trip"}, CONFIG)
    return graph, model


def test_a_failed_step(failed_run):
    text = draw_run(failed_run)
    matches_snapshot("run_failed", text)
    assert 's2["2. Step 2 (python)<br/>python, failed, 3.0 s"]:::failed' in text
    assert "s1 --> s3" in text and "s1 --> s2" in text and "s2 --> s3" not in text  # depends_on as given
    assert "s2 --> answer" in text and "s3 --> answer" in text  # what nothing else depends on feeds the answer


def test_a_replan_shows_the_replaced_steps_and_the_new_ones(replanned_run):
    values, history = replanned_run
    text = draw_run(values, history=history)
    matches_snapshot("run_replanned", text)
    assert 's3["3. Step 3 (llm)<br/>llm, replaced (replan 1)"]:::replaced' in text
    assert 's4["4. Step 4 (llm)<br/>llm, replaced (replan 1)"]:::replaced' in text
    assert "s2 ==>|replan| s5" in text and "s5 --> s6" in text and "s6 --> answer" in text
    assert "classDef replaced" in text and "stroke-dasharray" in text


def test_a_replan_without_history_still_marks_the_replaced_ids(replanned_run):
    values, _ = replanned_run
    text = draw_run(values)
    assert 's3["3. (a step of an earlier plan)<br/>replaced (replan 1)"]:::replaced' in text
    assert "s2 ==>|replan| s5" in text


def test_a_run_waiting_for_approval(waiting_run):
    graph, _ = waiting_run
    snapshot = graph.get_state(CONFIG)
    text = draw_run(snapshot)  # a snapshot at an interrupt counts as waiting
    matches_snapshot("run_waiting", text)
    assert 'approval(["plan approval<br/>waiting"]):::waiting' in text
    assert "approval --> s1" in text and "s2 --> s4" in text and "s3 --> s4" in text and "s1 --> s4" not in text
    assert all('python, pending"]' in line for line in text.splitlines() if line.startswith("    s2["))
    assert 'answer(["final answer<br/>pending"]):::pending' in text


def test_approved_then_done_and_a_rejected_plan(waiting_run):
    graph, _ = waiting_run
    graph.invoke(Command(resume={"action": "reject"}), CONFIG)
    text = draw_run(graph.get_state(CONFIG))
    assert 'approval(["plan approval<br/>rejected"]):::failed' in text and "approval --> answer" in text
    assert "none: the plan was rejected" in text


def test_a_running_run_shows_its_ready_steps_running(replanned_run):
    _, history = replanned_run
    after_step_one = next(s for s in reversed(history) if len(s.values.get("results") or []) == 1)
    text = draw_run(after_step_one.values, run_status="running")
    assert "llm, done" in text and "python, running" in text and "3. Step 3 (llm)<br/>llm, pending" in text
    assert "final answer<br/>pending" in text
    assert "python, pending" in draw_run(after_step_one.values)  # no status given: nothing is running


def test_answer_check_and_labels_that_need_escaping(failed_run):
    values = {**failed_run, "answer_check": {"ok": False, "answer_number": 41, "computed": 42, "note": "x"}}
    values["plan"] = {**values["plan"], "steps": [{**values["plan"]["steps"][0], "title": 'Say "hi" <b>#1</b> `x`'},
                                                  *values["plan"]["steps"][1:]]}
    text = draw_run(values)
    assert "answer check: differs from the computation" in text
    assert '1. Say #quot;hi#quot; #lt;b#gt;#35;1#lt;/b#gt; #96;x#96;' in text
    for line in text.splitlines()[1:]:  # every label is one quoted string
        if "[" in line:
            inner = line.split('"', 1)[1].rsplit('"', 1)[0]
            assert '"' not in inner


def test_png_and_svg(replanned_run, tmp_path):  # pygraphviz is a main dependency: no skip
    values, history = replanned_run
    png = draw_run_image(values, "png", history=history, title="run r1 (done)")
    assert png[:8] == PNG_MAGIC and len(png) > 1000
    svg = draw_run_image(values, "svg", history=history)
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "replaced (replan 1)" in texts and "final answer" in texts
    fills = {e.get("fill") for e in root.iter("{http://www.w3.org/2000/svg}path")} | \
        {e.get("fill") for e in root.iter("{http://www.w3.org/2000/svg}polygon")}
    assert {"#d3f9d8", "#ffe3e3", "#f8f9fa"} <= fills  # done, failed and replaced colours
    with pytest.raises(ValueError, match="format"):
        draw_run_image(values, "gif")


def test_picture_without_a_plan_is_just_the_answer():
    picture = run_picture({"task": "t"})
    assert [n.id for n in picture.nodes] == ["answer"] and picture.edges == []
    with pytest.raises(ValueError, match="run_status"):
        run_picture({"task": "t"}, run_status="sleeping")
