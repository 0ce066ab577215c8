"""The examples in examples/ run as shipped: each one's main() on a scripted fake chat model (the model is not the
point), with the real sandbox, the real tool and the real MCP server, started through hierplan's --mcp loader.

No real-model test here: real_model tests run in `make test`, and a whole CSV-and-chart run on the embedded model
takes about a minute on 2 cores (docs/eval.md), for an answer a 1.5B model does not always get right.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from fakes import ScriptedChatModel, plan_json
from helpers import cli, events, assert_none_left, marked_processes
from needs import unavailable

try:
    # Imported now, under pytest's stderr (a real file): mcp's stdio client takes the stderr of the moment it is
    # first imported as its servers' stderr (tests/test_mcp.py), and capsys's is not a file.
    import langchain_mcp_adapters  # noqa: F401
    import mcp.client.stdio  # noqa: F401
    MCP_MISSING = None
except ImportError as exc:
    MCP_MISSING = f"the MCP example needs the mcp extra (pip install 'hierplan[mcp]'): no module {exc.name}"

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SALES = EXAMPLES / "data" / "sales.csv"
GONE_WITHIN_S = 5


def example(name: str):
    """examples/NAME.py as a module (examples/ is not a package: users copy the files)."""
    spec = importlib.util.spec_from_file_location(f"hierplan_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- csv_chart.py: a file in, aggregates and a PNG out --------------------------------------------------------

# What the scripted Python step writes, as a capable model would: it reads the file where the sandbox puts it,
# prints the revenue per region and then the total (the task's number, printed last), and saves the chart.
CSV_PROGRAM = """```python
import csv
from collections import defaultdict
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open("data/sales.csv")))
by_region = defaultdict(int)
for row in rows:
    by_region[row["region"]] += int(row["revenue"])
for region, revenue in sorted(by_region.items()):
    print(region, revenue)
plt.bar(list(by_region), list(by_region.values()))
plt.ylabel("revenue (EUR)")
plt.savefig("out/revenue_by_region.png")
print(sum(by_region.values()))
```"""


def test_csv_chart_computes_from_the_shipped_csv_and_writes_the_png_out(tmp_path, capsys):
    with SALES.open(newline="") as f:
        rows = list(csv.DictReader(f))
    total = sum(int(r["revenue"]) for r in rows)
    by_region: dict[str, int] = defaultdict(int)
    for r in rows:
        by_region[r["region"]] += int(r["revenue"])
    assert len(rows) == 20

    # A question about the file: one program reads it, a second (here the same) checks it, and the answer is
    # what the kept program printed.
    model = ScriptedChatModel(script={"python_step": [CSV_PROGRAM], "python_check": [CSV_PROGRAM]})
    out_dir = tmp_path / "got"
    state = example("csv_chart").main(model, out_dir=out_dir)
    printed = capsys.readouterr().out

    step = state["results"][0]
    assert step["ok"], step.get("error")
    assert step["output"].splitlines() == [f"{k} {v}" for k, v in sorted(by_region.items())] + [str(total)]
    assert "saved out/revenue_by_region.png (image/png" in printed
    assert state["vote"]["agreed"] == 2 and state["final"] == step["output"]
    assert f"Answer: {step['output']}" in printed

    # The file went in as the run's input, with its bytes, and the model was shown its preview.
    assert [f["name"] for f in state["files"]] == ["sales.csv"]
    program_prompt = next(c for c in model.calls if c["node"] == "python_step")["messages"][-1].content
    assert "sales.csv" in program_prompt and "CSV, 20 rows" in program_prompt

    # The chart: a real PNG, written out as `hierplan show --artifacts DIR` writes it.
    png = out_dir / "step-1" / "revenue_by_region.png"
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and png.stat().st_size > 1000
    assert f"wrote {png}" in printed


# --- langchain_tool.py: an @tool function as a plan step ------------------------------------------------------

def _program_from_the_tool_result(messages) -> str:
    """The Python step, as a model that read the earlier step's result would write it: from its JSON."""
    request = messages[-1].content
    found = json.loads(request[request.index('{"item"'):request.index("}", request.index('{"item"')) + 1])
    return f"print(({found['lisbon']} + {found['porto']}) * {found['unit_price_eur']})"


def test_langchain_tool_is_called_with_the_models_arguments_and_recorded_on_the_step(capsys):
    tool_example = example("langchain_tool")
    model = ScriptedChatModel(script={"planner": [plan_json(["inventory", "python", "llm"])],
                                      "tool_step": ['{"item": "blue widget"}'],
                                      "python_step": [_program_from_the_tool_result],
                                      "aggregator": ["Our blue widgets are worth 563.75 euros."]})
    state = tool_example.main(model)
    printed = capsys.readouterr().out

    looked_up, computed = state["results"][0], state["results"][1]
    assert looked_up["tool"] == "inventory" and looked_up["ok"]
    assert looked_up["tool_args"] == {"item": "blue widget"}
    assert looked_up["tool_result"] == {"item": "blue widget", **tool_example.INVENTORY["blue widget"]}
    assert json.loads(looked_up["output"]) == looked_up["tool_result"]  # the text later steps read
    # The planner was shown the tool, and the next step was given its result.
    planner_prompt = next(c for c in model.calls if c["node"] == "planner")["messages"][-1].content
    assert "inventory: Look up an item of our inventory" in planner_prompt
    assert computed["tool"] == "python" and computed["ok"] and computed["output"] == "563.75"
    assert 'call: inventory {"item": "blue widget"} -> {"item": "blue widget", "lisbon": 140' in printed
    assert state["final"] == "Our blue widgets are worth 563.75 euros."


def test_langchain_tool_refuses_an_unknown_item_as_a_failed_step():
    tool_example = example("langchain_tool")
    model = ScriptedChatModel(script={"planner": [plan_json(["inventory", "llm", "llm"])],
                                      "tool_step": ['{"item": "purple thing"}']})
    state = tool_example.main(model, task="How many purple things are in stock?")
    failed = state["results"][0]
    assert not failed["ok"] and failed["tool_args"] == {"item": "purple thing"}
    assert "no item 'purple thing' in the inventory" in failed["error"]


# --- mcp_server.py, mcp_servers.json, mcp_run.py: an MCP server's tools as plan steps -------------------------

ADA = "Ada Ferreira: team data, room 4.12, extension 3317"


@pytest.fixture
def shipped_servers(tmp_path, monkeypatch) -> tuple[Path, str]:
    """examples/mcp_servers.json as a user runs it (from the repository's root, `python` being the venv's), each
    server with a marker in its environment that finds its processes; (the file, the marker)."""
    if MCP_MISSING:
        unavailable(MCP_MISSING)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    marker = f"HIERPLAN_EXAMPLE_TEST={uuid.uuid4().hex}"
    config = json.loads((EXAMPLES / "mcp_servers.json").read_text())
    for server in config["mcpServers"].values():
        assert "env" not in server  # the shipped file is used as it is, plus the marker
        server["env"] = dict([marker.split("=", 1)])
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(config))
    return path, marker


def _none_left(marker: str) -> None:
    assert_none_left(marker, GONE_WITHIN_S, "the run")


def test_the_marker_finds_a_running_server(shipped_servers):
    """The leftover check below is not vacuous: a server started with the marker is seen."""
    _, marker = shipped_servers
    name, value = marker.split("=", 1)
    server = subprocess.Popen([sys.executable, "examples/mcp_server.py"], env={**os.environ, name: value},
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        assert marked_processes(marker) == [server.pid]
    finally:
        server.kill()
        server.wait(timeout=30)
    assert marked_processes(marker) == []


def test_mcp_example_calls_the_real_server_and_leaves_no_process(shipped_servers, capsys):
    path, marker = shipped_servers
    model = ScriptedChatModel(script={"planner": [plan_json(["find_colleague", "llm", "llm"])],
                                      "tool_step": ['{"name": "Ada Ferreira"}'],
                                      "aggregator": ["Ada Ferreira is in room 4.12; her extension is 3317."]})
    state = example("mcp_run").main(model, servers=path)
    printed = capsys.readouterr().out

    assert printed.startswith("tools: find_colleague, team_members, revenue_target\n")
    step = state["results"][0]
    assert step["tool"] == "find_colleague" and step["ok"], step.get("error")
    assert step["tool_args"] == {"name": "Ada Ferreira"}
    assert step["tool_result"] == ADA and step["output"] == ADA  # only the server knows this
    planner_prompt = next(c for c in model.calls if c["node"] == "planner")["messages"][-1].content
    assert "find_colleague: Find a colleague in the staff directory" in planner_prompt
    assert f'call: find_colleague {{"name": "Ada Ferreira"}} -> {ADA}' in printed
    _none_left(marker)


def test_the_readmes_cli_line_runs_the_shipped_servers_file(shipped_servers, models, tmp_path):
    """`hierplan run --mcp examples/mcp_servers.json TASK`, as examples/README.md gives it; a tool error (an unknown
    name) is a failed step with the server's message."""
    path, marker = shipped_servers
    scripts, _ = models
    scripts.append({"planner": [plan_json(["find_colleague", "team_members", "llm"])],
                    "tool_step": ['{"name": "Ada Ferreira"}', '{"team": "finance"}']})
    code, out, err = cli("run", "--mcp", str(path), "--db", str(tmp_path / "runs.sqlite"), "--json",
                         "--sequential", "--max-replans", "0", "Which room is Ada Ferreira in?")
    assert code == 0, err
    finished = {e["step_id"]: e for e in events(out) if e["event"] == "step_finished"}
    assert finished[1]["tool_args"] == {"name": "Ada Ferreira"} and finished[1]["output"] == ADA
    assert finished[2]["tool"] == "team_members" and finished[2]["ok"] is False
    assert "no team 'finance'; teams: data, platform" in finished[2]["error"]
    _none_left(marker)


def test_the_readmes_csv_and_mcp_line_gives_a_chart_and_an_answer(shipped_servers, models, tmp_path):
    """README's "Your tools and data": `hierplan run --file examples/data/sales.csv --mcp examples/mcp_servers.json`;
    the tool's fact and the file's rows meet in one program, which saves the chart (real server, real sandbox)."""
    path, marker = shipped_servers
    scripts, _ = models
    program = ("import pandas as pd, matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
               "df = pd.read_csv('data/sales.csv')\nby = df.groupby('region')['revenue'].sum()\n"
               "by.plot.bar(); plt.savefig('out/revenue_by_region.png')\nprint(3000 - by['north'])")
    scripts.append({"planner": [plan_json(["revenue_target", "python"])], "tool_step": ['{"region": "north"}'],
                    "python_step": [program], "aggregator": ["The north region needs 650 more."]})
    db = str(tmp_path / "runs.sqlite")
    code, out, err = cli("run", "--file", "examples/data/sales.csv", "--mcp", str(path), "--db", db, "--json",
                         "--run-id", "north", "How much revenue does the north region still need to reach its "
                         "revenue target? Save a bar chart of the revenue by region.")
    assert code == 0, err
    finished = {e["step_id"]: e for e in events(out) if e["event"] == "step_finished"}
    assert finished[1]["tool_result"] == "The north region's revenue target this year: 3000"
    assert finished[2]["ok"] and finished[2]["output"] == "650"  # 3000 - 2350, the file's north revenue
    assert [a["name"] for a in finished[2]["artifacts"]] == ["revenue_by_region.png"]
    code, out, err = cli("show", "north", "--db", db, "--artifacts", str(tmp_path / "charts"))
    assert code == 0, err
    assert (tmp_path / "charts" / "step-2" / "revenue_by_region.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _none_left(marker)
