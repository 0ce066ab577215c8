"""Threads (a conversation as a sequence of runs, `hierplan run --thread T`) and long-term memory (LangGraph's
BaseStore, written and recalled by the memory node): the rules, the graph with scripted models, the CLI, a kill -9
between turns, and the embedded model answering a follow-up from the earlier turn's answer."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from langgraph.store.memory import InMemoryStore

from fakes import ScriptedChatModel, plan_json
from helpers import WORKER, cli, one_line_error, saved_values
from hierplan import build_graph
from hierplan.app.threads import turn_record
from hierplan.config import CONVERSATION_TURNS, TURN_ANSWER_CHARS
from hierplan.nodes import prompts
from hierplan.options import RunOptions
from hierplan.rules.conversation import cut_answer, memory_key, remember_request, shown_turns
from hierplan.store import open_memory_store

# --- the rules -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("task, fact", [
    ("Remember that my team is Blue.", "my team is Blue"),
    ("remember: my team is Blue", "my team is Blue"),
    ("Please remember my dog is called Rex. What is 2 + 2?", "my dog is called Rex"),
    ("Don't forget that I live in Paris!", "I live in Paris"),
    ("Note that the budget is 500 dollars", "the budget is 500 dollars"),
    ("Note: my flat is on the third floor.", "my flat is on the third floor"),
    ("Note that the file uses semicolons. What is the mean price?", None),  # a remark about this task
    ("Note that the file uses semicolons.\nWhat is the mean price?", None),
    ("Do you remember my team?", None),
    ("Remember what I said?", None),
    ("Remember to buy milk", None),
    ("Note the time", None),
    ("Write a note about tea", None),
    ("Noted that", None),
])
def test_what_a_task_asks_to_remember_is_read_by_rule(task, fact):
    assert remember_request(task) == fact


def test_a_memory_key_is_the_facts_own():
    assert memory_key("My team is  Blue") == memory_key("my team is blue")
    assert memory_key("my team is Blue") != memory_key("my team is Red")


def test_a_long_answer_keeps_its_head_and_its_last_line():
    answer = "Working.\n" + "x" * 2000 + "\nFinal answer: 151"
    cut = cut_answer(answer)
    assert len(cut) <= TURN_ANSWER_CHARS and cut.startswith("Working.") and cut.endswith("Final answer: 151")
    assert cut_answer("51") == "51"
    one_line = "y" * (TURN_ANSWER_CHARS * 2)
    assert cut_answer(one_line).startswith("y" * 10) and len(cut_answer(one_line)) < len(one_line)


def test_only_the_last_turns_are_shown_and_the_rest_counted():
    history = [{"turn": n, "run_id": f"t-{n}", "task": f"task {n}", "final": str(n)}
               for n in range(1, CONVERSATION_TURNS + 3)]
    left_out, shown = shown_turns(history)
    assert left_out == 2 and [t["turn"] for t in shown] == list(range(3, CONVERSATION_TURNS + 3))


# --- the graph, with scripted models ---------------------------------------------------------------------------


def requests_of(model: ScriptedChatModel, node: str) -> list[str]:
    """The user turns (last message) of every call of a node."""
    return [c["messages"][-1].content for c in model.calls if c["node"] == node]


def test_a_follow_up_turn_sees_the_earlier_turn_and_computes_from_its_answer():
    model = ScriptedChatModel(script={"aggregator": ["The answer is 51."],
                                      "python_step": ["```python\nprint(51 + 100)\n```"],
                                      "python_check": ["```python\nprint(151)\n```"]})
    graph = build_graph(model, run_code=None)
    first = graph.invoke({"task": "What is 17 * 3?"}, {"configurable": {"thread_id": "t"}})
    assert first["final"] == "The answer is 51." and "conversation" in first and first["conversation"] == ""
    second = graph.invoke({"task": "now add 100 to that", "kind": "numeric",
                           "history": [turn_record(first, "t", 1)]}, {"configurable": {"thread_id": "t-2"}})
    [program_request] = requests_of(model, "python_step")
    assert "Turn 1. The user asked: What is 17 * 3?\nYour answer: The answer is 51." in program_request
    assert program_request.rstrip().endswith("now add 100 to that")
    assert "Your answer: The answer is 51." in requests_of(model, "python_check")[0]
    assert second["final"].endswith("151")


def test_history_reaches_the_planner_and_the_aggregator():
    model = ScriptedChatModel(script={"planner": [plan_json(["llm", "llm"])], "aggregator": ["the checklist"]})
    graph = build_graph(model, split_writing=True)  # a checklist has parts: the planner plans it
    history = [{"turn": 1, "run_id": "r", "task": "Name our product.", "final": "Call it Tidewater.",
                "files": [{"name": "sales.csv", "size": 3, "sha256": "0" * 64, "media_type": "text/csv",
                           "preview": "x"}]}]
    graph.invoke({"task": "Now write a launch checklist for it", "history": history},
                 {"configurable": {"thread_id": "p"}})
    [planner] = requests_of(model, "planner")
    assert planner.startswith(prompts.PLANNER_USER.format(task=prompts.CONVERSATION_HEADER))
    assert "Your answer: Call it Tidewater." in planner and "sales.csv" in planner
    assert "Call it Tidewater." in requests_of(model, "aggregator")[0]
    # every LLM step's request shows it too (its system prompt names the task)
    assert all("Call it Tidewater." in c["messages"][0].content for c in model.calls if c["node"] == "llm_step")


def test_without_history_or_memories_the_prompts_are_as_before():
    model = ScriptedChatModel(script={"planner": [plan_json(["llm"])]})
    graph = build_graph(model, split_writing=True)  # a checklist has parts: the planner plans it
    out = graph.invoke({"task": "Write a checklist for a picnic"}, {"configurable": {"thread_id": "x"}})
    assert requests_of(model, "planner")[0] == prompts.PLANNER_USER.format(task="Write a checklist for a picnic")
    assert out["conversation"] == "" and out["memories"] == [] and "remembered" not in out


def test_a_remembered_fact_is_recalled_in_another_thread_and_only_for_its_user():
    store = InMemoryStore()
    model = ScriptedChatModel(default={"aggregator": "Noted."})
    graph = build_graph(model, store=store)
    kept = graph.invoke({"task": "Remember that my team is Blue."}, {"configurable": {"thread_id": "a"}})
    assert kept["remembered"] == {"key": memory_key("my team is Blue"), "text": "my team is Blue", "run_id": "a"}
    [item] = store.search(("memories", "local"))
    assert item.value == {"text": "my team is Blue", "run_id": "a"}

    later = graph.invoke({"task": "Which team am I on?"}, {"configurable": {"thread_id": "b"}})
    assert [m["text"] for m in later["memories"]] == ["my team is Blue"] and "remembered" not in later
    assert f"{prompts.MEMORIES_HEADER}\n- my team is Blue" in requests_of(model, "aggregator")[-1]

    other = graph.invoke({"task": "Which team am I on?"}, {"configurable": {"thread_id": "c"},},
                         context=RunOptions(user="ada"))
    assert other["memories"] == [] and "my team is Blue" not in requests_of(model, "aggregator")[-1]


def test_a_graph_without_a_store_remembers_nothing():
    model = ScriptedChatModel(default={"aggregator": "Noted."})
    out = build_graph(model).invoke({"task": "Remember that my team is Blue."},
                                                 {"configurable": {"thread_id": "a"}})
    assert "remembered" not in out and out["memories"] == []


# --- the CLI ---------------------------------------------------------------------------------------------------


def test_turns_of_a_thread_are_numbered_listed_and_shown(models, tmp_path):
    scripts, made = models
    db = str(tmp_path / "runs.sqlite")
    scripts.append({"aggregator": ["The answer is 51."]})
    code, out, err = cli("run", "--thread", "math", "What is 17 * 3?", "--db", db)
    assert code == 0, err
    scripts.append({"python_step": ["```python\nprint(51 + 100)\n```"], "python_check": ["```python\nprint(151)\n```"]})
    code, out, err = cli("run", "--thread", "math", "now add 100 to that", "--kind", "numeric", "--db", db)
    assert code == 0, err
    assert "memory: saw 1 earlier turn" in out
    assert "Your answer: The answer is 51." in made[1].calls[0]["messages"][-1].content

    code, out, _ = cli("runs", "--thread", "math", "--json", "--db", db)
    turns = json.loads(out)
    assert [(t["id"], t["thread"], t["turn"], t["status"]) for t in turns] == [("math", "math", 1, "done"),
                                                                               ("math-2", "math", 2, "done")]
    code, out, _ = cli("runs", "--db", db)
    assert "math #2" in out
    code, out, _ = cli("show", "--thread", "math", "--db", db)
    assert code == 0
    assert re.search(r"Turn 1: run math \(done\).*asked: What is 17 \* 3\?.*answer: The answer is 51\..*"
                     r"Turn 2: run math-2 \(done\).*asked: now add 100 to that.*answer: .*151", out, re.DOTALL)
    code, out, _ = cli("show", "--thread", "math", "--json", "--db", db)
    assert [t["final"].split()[-1] for t in json.loads(out)] == ["51.", "151"]
    code, out, _ = cli("show", "math-2", "--db", db)
    assert "thread: math, turn 2" in out and "memory: saw 1 earlier turn" in out

    code, _, err = cli("show", "--db", db)
    assert code == 2
    one_line_error(err, "RUN_ID or --thread")
    code, _, err = cli("show", "--thread", "nope", "--db", db)
    assert code == 2
    one_line_error(err, "no thread 'nope'")


def test_a_run_on_its_own_is_continued_as_a_thread_and_a_failed_turn_is_finished_first(models, tmp_path):
    scripts, _ = models
    db = str(tmp_path / "runs.sqlite")
    scripts.append({"aggregator": [RuntimeError("model fell over")]})
    code, _, err = cli("run", "Name a colour.", "--run-id", "solo", "--db", db)
    assert code == 1
    code, _, err = cli("run", "--thread", "solo", "And another one.", "--db", db)
    assert code == 2
    one_line_error(err, "thread solo: turn 1 (run solo) is failed", "hierplan resume solo")
    scripts.append({"aggregator": ["Blue."]})
    assert cli("resume", "solo", "--db", db)[0] == 0
    scripts.append({"aggregator": ["Red."]})
    code, _, err = cli("run", "--thread", "solo", "And another one.", "--db", db)
    assert code == 0, err
    values = saved_values(db, "solo-2")
    assert values["history"] == [{"turn": 1, "run_id": "solo", "task": "Name a colour.", "final": "Blue."}]
    assert values["final"] == "Red."


def test_a_thread_carries_its_files_and_artifacts_to_later_turns(models, tmp_path):
    from helpers import CSV_CHART_PROGRAM

    scripts, made = models
    db = str(tmp_path / "runs.sqlite")
    csv = tmp_path / "sales.csv"
    csv.write_text("region,amount\nnorth,10\nsouth,20\neast,30\n")
    scripts.append({"python_step": [CSV_CHART_PROGRAM], "python_check": ["```python\nprint(60)\n```"]})
    code, _, err = cli("run", "--thread", "s", "What is the total amount in sales.csv?", "--file", str(csv),
                       "--db", db)
    assert code == 0, err
    scripts.append({"python_step": ["```python\nprint(open('data/sums.csv').read().split()[-1])\n```"],
                    "python_check": ["```python\nprint(60)\n```"]})
    code, _, err = cli("run", "--thread", "s", "What total did sums.csv record?", "--db", db)
    assert code == 0, err
    values = saved_values(db, "s-2")
    assert [f["name"] for f in values["files"]] == ["sales.csv", "chart.png", "sums.csv"]
    step = values["results"][0]
    assert step["ok"] and step["stdout"].strip() == "60"  # the earlier turn's artifact, read at ./data/
    assert "Files from that turn, which a Python step reads at ./data/NAME: sales.csv, chart.png, sums.csv" in \
        made[1].calls[0]["messages"][-1].content


def test_a_memory_is_recalled_by_a_new_process_in_a_new_thread(models, tmp_path):
    scripts, made = models
    db = str(tmp_path / "runs.sqlite")
    scripts.append({"aggregator": ["Noted."]})
    code, out, err = cli("run", "--thread", "a", "Remember that my team is Blue.", "--db", db)
    assert code == 0, err
    assert "memory: remembered: my team is Blue; recalled 1 memory" in out
    # a fresh store on the same file, as a new process opens it
    assert [i.value["text"] for i in open_memory_store(db).search(("memories", "local"))] == ["my team is Blue"]
    scripts.append({"aggregator": ["Your team is Blue."]})
    code, out, err = cli("run", "--thread", "b", "Which team am I on?", "--db", db)
    assert code == 0, err
    assert "- my team is Blue" in made[1].calls[-1]["messages"][-1].content
    assert saved_values(db, "b")["memories"][0]["text"] == "my team is Blue"


# --- kill -9 between turns ---------------------------------------------------------------------------------------


def worker(argv, tmp_path, spec, calls="calls.json"):
    env = dict(os.environ, HIERPLAN_WORKER_SPEC=json.dumps(spec), HIERPLAN_WORKER_DIR=str(tmp_path),
               HIERPLAN_WORKER_CALLS=str(tmp_path / calls), PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, WORKER, *argv], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_a_follow_up_after_a_kill_9_is_answered_from_the_earlier_answer(tmp_path):
    db = str(tmp_path / "runs.sqlite")
    spec = {"final": "The answer is 51.", "add_to_earlier": True}
    proc = worker(["run", "--thread", "k", "What is 17 * 3?", "--db", db, "--json"], tmp_path,
                  {**spec, "pause": {"at": "aggregator", "seconds": 60}})
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "paused").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()

    # the killed turn is interrupted: the next turn waits for it
    follow_up = ["run", "--thread", "k", "now add 100 to that", "--kind", "numeric", "--db", db]
    refused = subprocess.run([sys.executable, WORKER, *follow_up], capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, HIERPLAN_WORKER_SPEC=json.dumps(spec)))
    assert refused.returncode == 2
    one_line_error(refused.stderr, "turn 1 (run k) is interrupted", "hierplan resume k")

    for argv in (["resume", "k", "--db", db], follow_up):
        done = subprocess.run([sys.executable, WORKER, *argv], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, HIERPLAN_WORKER_SPEC=json.dumps(spec)))
        assert done.returncode == 0, done.stdout + done.stderr
    assert saved_values(db, "k")["final"] == "The answer is 51."
    second = saved_values(db, "k-2")
    assert second["history"][0]["final"] == "The answer is 51."
    assert second["final"].strip().endswith("151")
    assert second["results"][-1]["stdout"].strip() == "151"


# --- the embedded model ------------------------------------------------------------------------------------------


@pytest.mark.real_model
def test_the_embedded_model_answers_a_follow_up_from_the_earlier_answer(tmp_path):
    from hierplan import load_chat_model, open_checkpointer
    from hierplan.eval.scoring import last_number

    graph = build_graph(load_chat_model(), open_checkpointer(str(tmp_path / "runs.sqlite")), seed=3,
                        max_repairs=1)
    first = graph.invoke({"task": "What is 17 * 3?", "kind": "numeric"}, {"configurable": {"thread_id": "m"}})
    assert last_number(first["final"]) == "51"
    second = graph.invoke({"task": "now add 100 to that", "kind": "numeric", "history": [turn_record(first, "m", 1)]},
                          {"configurable": {"thread_id": "m-2"}})
    assert last_number(second["final"]) == "151"
