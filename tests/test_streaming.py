"""Tokens as they are generated: every LLM step, the reviser and the aggregator stream their text, labelled with
their node and step, to `hierplan run` (--json token events, the terminal's live view) and to the web page."""

from __future__ import annotations

import io
import json
import threading

import pytest

from fakes import ScriptedChatModel, Streamed, by_part, plan_json
from hierplan.app.events import TokenEvents
from hierplan.cli.main import main

# A writing task with parts (the planner plans it, with split_writing) and requirements the draft breaks (the
# reviser rewrites it).
TASK = "Write a checklist about tea with exactly 3 bullet points. Do not use the word 'very'."
STEP_ONE = "Green tea is steeped at 80 degrees.\nBlack tea at 95."
STEP_TWO = "Herbal tea needs no\n\nspecial care."
DRAFT = "Tea is very nice and very calming."
GOOD = "- Green tea\n- Black tea\n- Herbal tea"


def tea_script(**extra) -> dict:
    return {"planner": [plan_json(["llm", "llm"], goal="A tea checklist")],
            "llm_step": [by_part({1: STEP_ONE, 2: STEP_TWO})] * 2, "aggregator": [DRAFT], "reviser": [GOOD], **extra}


def by_call(tokens: list[dict]) -> dict[tuple, str]:
    """Each call's text, from its token events, checking that every piece starts where the last one ended."""
    texts: dict[tuple, str] = {}
    for event in tokens:
        key = (event["node"], event["step_id"], event["attempt"])
        assert event["offset"] == len(texts.get(key, "")), event  # in order, nothing missed or repeated
        texts[key] = texts.get(key, "") + event["text"]
    return texts


def test_run_json_streams_each_llm_step_the_answer_and_the_rewrite_in_order(models, tmp_path, capsys):
    models[0].append(tea_script())
    assert main(["run", TASK, "--split-writing", "--json", "--db", str(tmp_path / "s.sqlite"), "--run-id", "s1"]) == 0
    every = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    tokens = [e for e in every if e["event"] == "token"]
    assert {(e["node"], e["step_id"], e["attempt"]) for e in tokens} == {
        ("llm_step", 1, None), ("llm_step", 2, None), ("aggregator", None, None), ("reviser", None, 1)}
    texts = by_call(tokens)
    # what streamed is what each call wrote: the steps' outputs, the draft, the rewrite (the answer kept)
    finished = {e["step_id"]: e for e in every if e["event"] == "step_finished"}
    assert texts["llm_step", 1, None] == STEP_ONE == finished[1]["output"]
    assert texts["llm_step", 2, None] == STEP_TWO == finished[2]["output"]
    assert texts["aggregator", None, None] == DRAFT and texts["reviser", None, 1] == GOOD
    assert every[-1]["event"] == "run_finished" and every[-1]["final"] == GOOD
    # in pieces, as generated: several a call, each call's last one says so, and before what it made is recorded
    assert all(sum(1 for e in tokens if e["step_id"] == i) > 2 for i in (1, 2))
    for key in texts:
        mine = [e for e in tokens if (e["node"], e["step_id"], e["attempt"]) == key]
        assert [e["done"] for e in mine] == [False] * (len(mine) - 1) + [True]
    position = {id(e): i for i, e in enumerate(every)}
    for step_id in (1, 2):
        last = max(position[id(e)] for e in tokens if e["step_id"] == step_id)
        assert last < position[id(finished[step_id])]
    nodes = [e["node"] for e in tokens]
    assert nodes.index("aggregator") > max(i for i, n in enumerate(nodes) if n == "llm_step")
    assert nodes.index("reviser") > max(i for i, n in enumerate(nodes) if n == "aggregator")
    # the plan's JSON and the requirements' checklist are no one's tokens
    assert not {"planner", "read_requirements"} & set(nodes)


def test_a_python_steps_program_streams_with_its_attempt(models, tmp_path, capsys):
    program = "```python\nprint(6 * 7)\n```"
    models[0].append({"planner": [plan_json(["python", "llm"])], "python_step": ["print(", program],
                      "llm_step": ["done"]})
    assert main(["run", "Compute it in steps", "--split-writing", "--json", "--db", str(tmp_path / "p.sqlite")]) == 0
    tokens = [e for e in map(json.loads, capsys.readouterr().out.splitlines()) if e["event"] == "token"]
    texts = by_call([e for e in tokens if e["node"] == "python_step"])
    assert texts == {("python_step", 1, 1): "print(", ("python_step", 1, 2): program}  # the repair: attempt 2


def test_the_terminal_prints_the_answer_and_its_rewrite_as_they_stream_and_steps_live_under_the_progress_line():
    from rich.console import Console

    from hierplan.cli.output import HumanReporter

    events = TokenEvents()
    out = io.StringIO()
    reporter = HumanReporter(out=out, previews=True)  # stdout a terminal
    try:
        reporter.update("tool_choice", {"plan": {"goal": "g", "assumptions": [], "steps": [
            {"id": 1, "title": "Teas", "instruction": "i", "tool": "llm", "expected_output": "o"}]}})
        reporter.live({"event": "steps_started", "step_ids": [1], "tool": "llm", "batch": 1})
        for piece in ("line one\n", "line two\n", "<b>three</b>"):
            reporter.live(token(events, piece, "llm_step", step_id=1))
        view = Console(file=io.StringIO(), width=60, force_terminal=False)
        view.print(reporter._area.render())
        live = view.file.getvalue()
        assert "step 1 [llm] Teas" in live and live.index("line one") < live.index("line two") < live.index(
            "<b>three</b>")  # shown as text, under the step's line
        reporter.update("llm_step", {"results": [{"step_id": 1, "title": "Teas", "tool": "llm", "ok": True,
                                                  "output": "line one\nline two\n<b>three</b>", "seconds": 1.0}]})
        view = Console(file=io.StringIO(), width=60)
        view.print(reporter._area.render())
        assert "line one" not in view.file.getvalue()  # done: printed in full instead
        for piece in ("Tea is ", "very nice."):
            reporter.live(token(events, piece, "aggregator"))
        reporter.live(token(events, "", "aggregator", done=True))
        for piece in ("- Green tea\n", "- Black tea"):
            reporter.live(token(events, piece, "reviser", attempt=1))
        reporter.run_finished("r", "done", final="- Green tea\n- Black tea")
    finally:
        reporter.close()
    shown = out.getvalue()
    assert shown.index("Step 1 [llm] Teas") < shown.index("Final answer") < shown.index("Tea is very nice.")
    assert shown.index("Tea is very nice.") < shown.index("Rewrite 1, told what the answer broke") < shown.index(
        "- Green tea")
    assert "as checked" not in shown  # the rewrite that streamed last is the answer


def test_off_a_terminal_a_steps_tokens_wait_for_the_finished_step():
    from hierplan.cli.output import HumanReporter

    events = TokenEvents()
    out = io.StringIO()
    reporter = HumanReporter(out=out)
    assert not reporter.previews
    reporter.live(token(events, "half of it", "llm_step", step_id=1))
    reporter.close()
    assert "half of it" not in out.getvalue()


def token(events: TokenEvents, text: str, node: str, step_id: int | None = None, attempt: int | None = None,
          done: bool = False) -> dict:
    """A token event as the run service makes one: a model's chunk and its call's metadata, through TokenEvents."""
    from langchain_core.messages import AIMessageChunk

    metadata = {"langgraph_node": node, "hierplan_node": node, "hierplan_step_id": step_id,
                "hierplan_attempt": attempt}
    chunk = AIMessageChunk(content=text, id=f"{node}-{step_id}-{attempt}",
                           **({"chunk_position": "last"} if done else {}))
    return events.event(chunk, metadata)


def test_token_events_count_each_calls_text_and_skip_calls_the_doorway_did_not_stream():
    from langchain_core.messages import AIMessage, AIMessageChunk

    events = TokenEvents()
    assert token(events, "ab", "llm_step", 1)["offset"] == 0
    assert token(events, "cd", "llm_step", 2)["offset"] == 0  # each call its own count
    assert token(events, "é✓", "llm_step", 1)["offset"] == 2
    assert token(events, "", "llm_step", 1, done=True) == {
        "event": "token", "node": "llm_step", "step_id": 1, "attempt": None, "offset": 4, "text": "", "done": True}
    assert events.event(AIMessageChunk(content="", id="u"), {"hierplan_node": "aggregator"}) is None  # usage only
    assert events.event(AIMessageChunk(content="x", id="v"), {"langgraph_node": "planner"}) is None  # not the doorway's
    whole = events.event(AIMessage(content="all at once", id="w"), {"hierplan_node": "reviser", "hierplan_attempt": 2})
    assert whole["text"] == "all at once" and whole["done"] and whole["attempt"] == 2  # a model that does not stream


def test_graph_stream_gives_the_tokens_in_python_and_an_unwatched_run_is_the_same_run():
    from hierplan import build_graph

    model = ScriptedChatModel(script=tea_script())
    graph = build_graph(model, constrain=False, split_writing=True)
    config = {"configurable": {"thread_id": "g"}}
    tokens, events = [], TokenEvents()
    for mode, chunk in graph.stream({"task": TASK}, config, stream_mode=["updates", "messages"]):
        if mode == "messages" and (event := events.event(*chunk)) is not None:
            tokens.append(event)
    assert by_call(tokens)["reviser", None, 1] == GOOD
    assert {e["node"] for e in tokens} == {"llm_step", "aggregator", "reviser"}  # the plan's JSON is not shown
    quiet = ScriptedChatModel(script=tea_script())
    out = build_graph(quiet, constrain=False, split_writing=True).invoke({"task": TASK}, {"configurable": {"thread_id": "q"}})
    assert out["final"] == GOOD  # unwatched, the same run


# --- the page -------------------------------------------------------------------------------------------------

pytest.importorskip("starlette", reason="the web page needs the server extra (starlette)")

from ui_support import page  # noqa: E402,F401


def sse(page, run_id: str, until=lambda events: False) -> list[dict]:
    events = []
    with page.client.stream("GET", f"/runs/{run_id}/events") as r:
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if until(events):
                    break
            if line.startswith("event: idle"):
                break
    return events


def test_the_pages_events_carry_each_steps_and_the_rewrites_tokens_and_its_boxes_show_them_escaped(page):
    held, rewrite_held = threading.Event(), threading.Event()
    evil = "<script>window.__pwned = 1</script>"
    step_one = Streamed("Green ", "tea ", evil, held, " steeps", " at 80.")
    page.fakes.model.script.update(tea_script(llm_step=[by_part({1: step_one, 2: STEP_TWO})] * 2,
                                              reviser=[Streamed("- Green tea\n", rewrite_held, GOOD[12:])]))
    run_id = page.start(TASK, split_writing="on")
    got: list[dict] = []

    def watch():
        got.extend(sse(page, run_id))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        body = wait_body(page, run_id, 'id="live-step-1"', "Green tea &lt;script&gt;")
        # the working step's box holds what streamed so far, as text: no script, no tag
        box = body.split('id="live-step-1"', 1)[1].split("</pre>", 1)[0]
        assert "Green tea &lt;script&gt;window.__pwned = 1&lt;/script&gt;" in box and "<script" not in box
        held.set()
        body = wait_body(page, run_id, 'id="live-revision"', "- Green tea")
        revision = body.split('id="live-revision"', 1)[1].split("</pre>", 1)[0]
        assert revision.endswith("\n- Green tea\n") and "Rewrite 1, told what the answer broke" in body
        rewrite_held.set()
    finally:
        held.set(), rewrite_held.set()
        watcher.join(30)
    assert page.wait(run_id, "done") == "done"
    tokens = [e for e in got if e["event"] == "token"]
    texts = by_call(tokens)
    assert texts["llm_step", 1, None] == step_one.text and texts["llm_step", 2, None] == STEP_TWO
    assert texts["aggregator", None, None] == DRAFT and texts["reviser", None, 1] == GOOD
    # done: the step's output and the answer are drawn as Markdown, the script as text
    html = page.client.get(f"/runs/{run_id}/body").text
    assert 'id="live-step-1"' not in html and 'id="live-revision"' not in html and "<script" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    final = html.split('<div id="final" class="markdown">', 1)[1].split("</div>", 1)[0]
    assert "<li>Green tea</li>" in final


def wait_body(page, run_id: str, *wanted: str, timeout: float = 20.0) -> str:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = page.client.get(f"/runs/{run_id}/body").text
        if all(w in body for w in wanted):
            return body
        time.sleep(0.05)
    raise AssertionError(f"the run's body never showed {wanted}: {body}")
