"""`hierplan eval` on tasks that need the user's data or a tool (hierplan/eval/data/tools15.jsonl): the data set
checked against its files and its MCP server, a task's files and the --mcp servers' tools reaching the runs, every
tool call and attached file in results.jsonl, the --withhold control, the answer-by-name scoring, and no server
process left behind. The model is a scripted fake (the model is not the point); the files, the sandbox and the
MCP server are real.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from fakes import ScriptedChatModel, plan_json
from eval_sets import MCP_MISSING, ROOT, EvalSet
from helpers import cli, one_line_error, assert_none_left
from needs import unavailable
from hierplan.errors import UsageError
from hierplan.eval import load_tasks
from hierplan.eval.scoring import find_text, score_text
from hierplan.nodes import prompts

TOOLS15 = EvalSet("tools15")
TASKS, FILES, SERVERS = TOOLS15.tasks, TOOLS15.files, TOOLS15.servers
GONE_WITHIN_S = 5
task_lines, server_module, rows, document = TOOLS15.lines, TOOLS15.server, TOOLS15.rows, TOOLS15.document


# --- the data set cannot drift from its files and its server -------------------------------------------------


def computed_answers(server) -> dict:
    """Each task's answer, computed here from the files (csv, json) and the server's own tool functions."""
    orders, sensors, parcels = rows("orders.csv"), rows("sensors.csv"), rows("parcels.csv")
    project, restock = document("project.json"), document("restock.json")
    largest = max(orders, key=lambda r: float(r["amount_eur"]))
    gh_b = [float(r["temperature_c"]) for r in sensors if r["sensor"] == "GH-B"]

    def units(sku: str) -> int:
        return int(re.fullmatch(rf"{sku}: (\d+) units in stock", server.stock_level(sku)).group(1))

    def rate(city: str) -> float:
        return float(re.fullmatch(rf"Shipping to {city}: ([\d.]+) EUR per kg", server.shipping_rate(city)).group(1))

    def supplied(sku: str) -> tuple[str, int]:
        found = re.fullmatch(rf"{sku} is supplied by (.+); lead time (\d+) days", server.supplier(sku))
        return found.group(1), int(found.group(2))

    assert {r["city"] for r in parcels} == {"Ostrel"}  # the task says the file lists parcels to Ostrel only
    assert restock["sku"] == "VELK-LAMP"
    return {
        "orders-total": sum(float(r["amount_eur"]) for r in orders),
        "orders-valmora-count": sum(1 for r in orders if r["city"] == "Valmora"),
        "orders-largest-amount": float(largest["amount_eur"]),
        "orders-largest-customer": largest["customer"],
        "sensors-gh-b-average": sum(gh_b) / len(gh_b),
        "sensors-humid-count": sum(1 for r in sensors if int(r["humidity_pct"]) > 80),
        "project-budget": project["budget_eur"],
        "project-hours": sum(m["hours_logged"] for m in project["members"]),
        "stock-velk-lamp": units("VELK-LAMP"),
        "rate-ostrel": rate("Ostrel"),
        "lead-time-orrin-mug": supplied("ORRIN-MUG")[1],
        "supplier-dask-chair": supplied("DASK-CHAIR")[0],
        "ship-cost-brisk-harbor": 12 * rate("Brisk Harbor"),
        "restock-velk-lamp": restock["target_units"] - units("VELK-LAMP"),
        "parcels-ostrel-cost": sum(float(r["weight_kg"]) for r in parcels) * rate("Ostrel"),
    }


def test_every_tools15_answer_is_what_its_files_and_server_say():
    TOOLS15.check_answers(computed_answers(server_module()))


def test_tools15_mixes_files_and_tools_and_names_only_the_servers_tools():
    import asyncio

    server = server_module()
    tools = {t.name for t in asyncio.run(server.server.list_tools())}
    assert tools == {"stock_level", "shipping_rate", "supplier"}
    tasks = load_tasks(TASKS)
    kinds = [(bool(t.files), bool(t.needs_tools)) for t in tasks]
    assert len(tasks) == 15
    assert (kinds.count((True, False)), kinds.count((False, True)), kinds.count((True, True))) == (8, 5, 2)
    assert all(set(t.needs_tools) <= tools for t in tasks)
    TOOLS15.check_files_and_servers(tasks)


def test_the_servers_tools_refuse_what_they_do_not_know():
    server = server_module()
    assert server.stock_level(" velk lamp ") == "VELK-LAMP: 238 units in stock"
    assert server.shipping_rate("brisk  HARBOR") == "Shipping to Brisk Harbor: 5.15 EUR per kg"
    with pytest.raises(ValueError, match="no product 'BLUE-THING'; products: DASK-CHAIR"):
        server.supplier("BLUE-THING")
    with pytest.raises(ValueError, match="we do not ship to 'Lisbon'"):
        server.shipping_rate("Lisbon")


# --- scoring by name -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("final, expected, found", [
    ("Brennick Hotels placed the largest order.", "Brennick Hotels", "Brennick Hotels"),
    ("It was BRENNICK\nhotels, by far.", "Brennick Hotels", "BRENNICK\nhotels"),  # case and spacing
    ("**Tamberlin Works**", "Tamberlin Works", "Tamberlin Works"),               # Markdown around it
    ("Tamberlin Workshop supplies it.", "Tamberlin Works", None),                 # a longer word is not it
    ("We ship to Ostrelia.", "Ostrel", None),
    ("Brennick  and Hotels", "Brennick Hotels", None),
    ("", "Brennick Hotels", None),
    (None, "Brennick Hotels", None),
])
def test_a_named_answer_must_appear_as_whole_words(final, expected, found):
    assert find_text(final, expected) == found
    assert score_text(final, expected) == (found, found is not None)


# --- task lines: files and named answers ----------------------------------------------------------------------


def write_tasks(folder: Path, lines: list[dict]) -> Path:
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_task_files_are_read_relative_to_the_tasks_file_and_bad_ones_are_one_line(tmp_path, monkeypatch):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.csv").write_text("x,y\n1,2\n")
    monkeypatch.chdir(ROOT)  # not the tasks file's folder
    [task] = load_tasks(write_tasks(tmp_path, [{"question": "Sum x?", "answer": "1", "files": ["d/a.csv"]}]))
    assert [(f["name"], f["size"], f["sha256"]) for f in task.files] == \
        [("a.csv", 8, hashlib.sha256(b"x,y\n1,2\n").hexdigest())]
    assert "CSV, 1 rows" in task.files[0]["preview"] and task.without_files().files == ()

    for line, message in [
        ({"question": "Q", "files": ["d/missing.csv"]}, r"tasks.jsonl:1: file d/missing.csv: no such file \(looked for "),
        ({"question": "Q", "files": ["d"]}, r"tasks.jsonl:1: --file .*d: is a directory"),
        ({"question": "Q", "files": "d/a.csv"}, r"tasks.jsonl:1: \"files\" must be a list of paths"),
        ({"question": "Q", "answer": "3", "answer_text": "Ada"}, r"tasks.jsonl:1: give one of \"answer\" \(a number\), \"answer_text\" or"),
        ({"question": "Q", "answer_text": " "}, r"tasks.jsonl:1: \"answer_text\" must be a non-empty string"),
        ({"question": "Q", "needs_tools": "supplier"}, r"tasks.jsonl:1: \"needs_tools\" must be a list"),
    ]:
        with pytest.raises(UsageError, match=message):
            load_tasks(write_tasks(tmp_path, [line]))


# --- the orphan count is not vacuous ---------------------------------------------------------------------------


@pytest.fixture
def venv_python_first(monkeypatch):
    """The configuration's `python` is the venv's, and its relative script path resolves, as for a user who runs
    hierplan from the repository's root with the venv active."""
    if MCP_MISSING:
        unavailable(MCP_MISSING)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def test_the_leftover_count_sees_a_running_server_and_then_none(venv_python_first):
    from hierplan.eval.orphans import left_over, orphaned_servers, server_commands

    commands = server_commands(SERVERS)
    assert commands == [("python", "hierplan/eval/data/tools15_server.py")]
    server = subprocess.Popen(list(commands[0]), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        assert left_over(commands) == [server.pid]
        assert orphaned_servers(SERVERS, wait_s=0) == 1
    finally:
        server.kill()
        server.wait(timeout=30)
    assert left_over(commands) == [] and orphaned_servers(SERVERS, wait_s=0) == 0


# --- hierplan eval with the real server and the real files ----------------------------------------------------

IDS = ("orders-total", "stock-velk-lamp", "parcels-ostrel-cost")
UNKNOWN = {"question": "How many units of BLUE-THING do we have in stock?", "answer": "0"}  # a tool error


def task_of(prompt: str) -> str:
    return re.search(r"Task: (.*)", prompt).group(1)


def planner(messages) -> str:
    """As a model that reads the task and the tools it is offered would plan (the fake knows these tasks)."""
    prompt = messages[-1].content
    task, offered = task_of(prompt), "\nTools:" in prompt
    if "in stock" in task:
        return plan_json(["stock_level"] if offered else ["llm"])
    if "parcels.csv" in task:
        return plan_json(["shipping_rate", "python"] if offered else ["python"])
    return plan_json(["python"])


def tool_arguments(messages) -> str:
    system, task = messages[0].content, task_of(messages[-1].content)
    if "shipping_rate" in system:
        return json.dumps({"city": "Ostrel"})
    return json.dumps({"sku": re.search(r"\b([A-Z]+-[A-Z]+)\b", task).group(1)})


def program(messages) -> str:
    """Reads the file where the sandbox puts it; the rate from the earlier tool step's result."""
    request = messages[-1].content
    if "parcels.csv" in task_of(request):
        rate = re.search(r"([\d.]+) EUR per kg", request)
        return ("import csv\nrows = list(csv.DictReader(open('data/parcels.csv')))\n"
                f"print(sum(float(r['weight_kg']) for r in rows) * {rate.group(1) if rate else 'rate'})")
    return ("import csv\nrows = list(csv.DictReader(open('data/orders.csv')))\n"
            "print(sum(float(r['amount_eur']) for r in rows))")


def aggregator(messages) -> str:
    """States what the steps found: the computed value, or the stock the tool reported."""
    prompt = messages[-1].content
    if computed := re.search(r"\(python\):\s+(\S+)", prompt):  # a Python step that succeeded, and what it printed
        return f"The result is {computed.group(1)}."
    if stock := re.search(r"(\d+) units in stock", prompt):
        return f"We have {stock.group(1)} units in stock."
    return "The steps did not find it."


@pytest.fixture
def fake_models(monkeypatch):
    """Every model load is a new scripted fake that knows these tasks; the list holds each one."""
    made = []

    def load(model=None, **kwargs):
        made.append(ScriptedChatModel(default={"planner": planner, "tool_step": tool_arguments,
                                               "python_step": program, "aggregator": aggregator}))
        return made[-1]

    import hierplan.models

    monkeypatch.setattr(hierplan.models, "load_chat_model", load, raising=False)
    return made


@pytest.fixture
def tools15(tmp_path, venv_python_first) -> tuple[Path, Path, str]:
    """(a tasks file of three tools15 tasks and one asking the server for an unknown product, beside a copy of
    the data folder; the servers file with a marker in the server's environment; the marker)."""
    by_id = {line["id"]: line for line in task_lines()}
    shutil.copytree(FILES, tmp_path / "tools15")
    tasks = write_tasks(tmp_path, [by_id[i] for i in IDS] + [UNKNOWN])
    marker = f"HIERPLAN_TOOLS15_TEST={uuid.uuid4().hex}"
    config = json.loads(SERVERS.read_text())
    for server in config["mcpServers"].values():
        server["env"] = dict([marker.split("=", 1)])
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps(config))
    return tasks, servers, marker


def none_left(marker: str) -> None:
    assert_none_left(marker, GONE_WITHIN_S, "the evaluation")


def evaluate(out: Path, *argv: str) -> tuple[list[dict], dict, str, str]:
    code, stdout, err = cli("eval", *argv, "--out", str(out), "--sequential", "--max-replans", "0",
                            "--max-repairs", "0", "--json")
    assert code == 0, err
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    saved = json.loads((out / "summary.json").read_text())
    assert json.loads(stdout) == saved["summary"]
    return results, saved, (out / "summary.md").read_text(), err


def digest(name: str) -> str:
    return hashlib.sha256((FILES / name).read_bytes()).hexdigest()


def test_eval_gives_each_task_its_files_and_the_servers_tools_and_records_every_call(fake_models, tools15, tmp_path):
    tasks, servers, marker = tools15
    results, saved, md, err = evaluate(tmp_path / "out", str(tasks), "--mcp", str(servers))
    orders, stock, parcels, unknown = results
    [model] = fake_models

    # A file task: the file reached the run (its bytes: the sandbox's program summed them) and the prompts.
    assert orders["files"] == [{"name": "orders.csv", "size": (FILES / "orders.csv").stat().st_size,
                                "sha256": digest("orders.csv")}]
    assert orders["files_in_code"] == ["orders.csv"] and orders["tool_calls"] == []
    assert (orders["correct"], orders["predicted"], orders["expected"]) == (True, "10647.75", "10647.75")
    planner_prompts = [c["messages"][-1].content for c in model.calls if c["node"] == "planner"]
    assert "- orders.csv (" in planner_prompts[0] and "CSV, 24 rows" in planner_prompts[0]
    assert len(planner_prompts) == 4  # every task is offered the server's tools
    assert all("\nTools:" in p and "\n- stock_level: How many units of a product" in p for p in planner_prompts)

    # A tool task: the real server's answer, recorded with the arguments the model wrote.
    assert stock["tool_calls"] == [{"step_id": 1, "tool": "stock_level", "args": {"sku": "VELK-LAMP"}, "ok": True,
                                    "result": "VELK-LAMP: 238 units in stock", "error": None}]
    assert stock["files"] == [] and stock["needed_tools_called"] is True and stock["correct"] is True

    # Both: the tool's rate reached the Python step, which read the file.
    [call] = parcels["tool_calls"]
    assert (call["tool"], call["args"], call["result"]) == ("shipping_rate", {"city": "Ostrel"},
                                                            "Shipping to Ostrel: 2.75 EUR per kg")
    assert [f["sha256"] for f in parcels["files"]] == [digest("parcels.csv")]
    assert parcels["correct"] is True and parcels["predicted"] == "132.0"

    # A tool's error is recorded as the call's error.
    [failed] = unknown["tool_calls"]
    assert failed["args"] == {"sku": "BLUE-THING"} and failed["ok"] is False and failed["result"] is None
    assert "no product 'BLUE-THING'" in failed["error"]

    summary = saved["summary"]
    assert (summary["correct"], summary["checked"]) == (3, 4)
    assert (summary["tool_calls"], summary["tool_calls_failed"], summary["tasks_with_tool_calls"]) == (3, 1, 3)
    assert (summary["files_attached"], summary["files_in_code"], summary["tasks_with_files"]) == (2, 2, 2)
    assert (summary["tasks_needing_tools"], summary["tasks_needing_tools_called"]) == (2, 2)
    assert summary["orphaned_mcp_processes"] == 0 and summary["files_withheld"] == 0
    assert saved["meta"]["tools"] == "stock_level, shipping_rate, supplier"
    assert "| tool calls made (failed) | 3 (1) in 3/4 tasks; 3 tool steps |" in md
    assert "| files attached (named in a program) | 2 (2) in 2/4 tasks |" in md
    assert "| MCP server processes left after the run | 0 |" in md
    progress = [line for line in err.splitlines() if line.startswith("[")]
    assert " python_ok=1/1 tool_calls=0/0 files=1 " in progress[0]
    assert " tool_calls=1/1 files=1 " in progress[2] and progress[3].startswith("[4/4] wrong (None, expected 0)")
    none_left(marker)


def test_withhold_runs_the_same_tasks_without_files_or_tools(fake_models, tools15, tmp_path, monkeypatch):
    from hierplan.app import agent

    tasks, servers, marker = tools15
    started = []
    monkeypatch.setattr(agent, "load_tools", lambda options: started.append(options) or [])
    results, saved, md, _ = evaluate(tmp_path / "out", str(tasks), "--mcp", str(servers), "--withhold")
    [model] = fake_models

    assert started == []  # no server was started
    for call in model.calls:
        prompt = "\n".join(str(m.content) for m in call["messages"])
        assert "\nTools:" not in prompt and prompts.FILES_GIVEN not in prompt
    assert [r["files"] for r in results] == [[], [], [], []]
    assert [r["files_withheld"] for r in results] == [["orders.csv"], [], ["parcels.csv"], []]
    assert [r["tool_calls"] for r in results] == [[]] * 4 and sum(r["tool_steps"] for r in results) == 0
    assert [r["correct"] for r in results] == [False] * 4
    # Without their files and tools none of these questions holds a number: each is a writing task (rules.kind)
    # of one piece, planned by rule and written by the final answer (rules.plan): no program looks for the
    # withheld data/orders.csv, and the planner is never asked
    assert [r["plan_source"] for r in results] == ["rule"] * 4 and model.count("planner") == 0
    assert (results[0]["python_steps"], results[0]["python_errors"]) == (0, [])
    assert results[1]["needed_tools_called"] is False

    summary = saved["summary"]
    assert (summary["correct"], summary["files_withheld"], summary["tool_calls"]) == (0, 2, 0)
    assert summary["orphaned_mcp_processes"] == 0
    assert saved["meta"]["withheld (the control)"] == f"2 files and the tools of {servers}"
    assert "| files withheld (--withhold) | 2 |" in md
    none_left(marker)


def test_a_bad_servers_file_or_mcp_with_ray_fails_in_one_line_before_any_model_loads(fake_models, tmp_path):
    tasks = write_tasks(tmp_path, [{"question": "Q", "answer": "1"}])
    code, _, err = cli("eval", str(tasks), "--mcp", str(tmp_path / "none.json"), "--out", str(tmp_path / "o"))
    assert code == 2
    one_line_error(err, "--mcp", "none.json: no such file")
    code, _, err = cli("eval", str(tasks), "--mcp", str(SERVERS), "--ray", "--db", str(tmp_path / "r.sqlite"))
    assert code == 2
    one_line_error(err, "--mcp does not work with --ray")
    assert fake_models == []


def test_the_summary_rewritten_from_results_keeps_the_leftover_count(fake_models, tools15, tmp_path, capsys):
    from hierplan.eval import report

    tasks, servers, _ = tools15
    out = tmp_path / "out"
    evaluate(out, str(tasks), "--mcp", str(servers), "--limit", "1")
    (out / "summary.md").unlink()
    capsys.readouterr()
    assert report.main([str(out)]) == 0
    assert "| MCP server processes left after the run | 0 |" in (out / "summary.md").read_text()
    assert json.loads((out / "summary.json").read_text())["summary"]["orphaned_mcp_processes"] == 0


def test_task_files_go_to_the_run_databases_store_where_every_graph_reads_them(tmp_path):
    from hierplan.eval.tasks import load_tasks
    from hierplan.store import open_file_store
    from hierplan.tools.files import local_path

    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text(json.dumps({"question": "Sum a and b.", "files": ["t.csv"]}) + "\n")
    db = str(tmp_path / "runs.sqlite")
    [task] = load_tasks(tasks_file, store=open_file_store(db))
    # a second opening of the same database (another process, a Ray actor) finds the bytes
    with open(local_path(task.files[0], open_file_store(db)), "rb") as f:
        assert f.read() == b"a,b\n1,2\n"
