"""Tool step overhead (issue 31's target: a tool step's overhead over the tool's own time within 5 % of the step,
beside the model's argument generation). One tool, ``forecast(city)``, which sleeps a fixed time, called side by
side, alternating, in each round:

  (a) the function itself, in-process: the tool's own time;
  (b) as a LangChain ``@tool`` through ``call_tool`` (what the tool_step node runs);
  (c) as an MCP stdio server's tool through ``call_tool``, on the session hierplan keeps for the run;
  (c0) for reference, the same MCP tool with a session per call (langchain-mcp-adapters' connection-based tools,
       what hierplan did before: a server process started for each call);
  (d) with a model: the whole tool_step node, the model writing the arguments, for (b), (c) and (c0).

    python bench/tool_overhead.py [--model NAME] [--rounds 5] [--seconds 0.2] [--no-model] [--doc]

``--no-model`` runs (a) to (c0) only. ``--doc`` writes the section between the tool_overhead markers in
docs/benchmarks.md. The server is this script itself (``--serve SECONDS``), so (c) calls the very function (a) times.
"""

from __future__ import annotations

import sys
import time

TOOL_DESCRIPTION = "The weather forecast for a city, by name."
DEFAULT_SECONDS = 0.2


def forecast(city: str) -> str:
    """The tool: a fixed amount of waiting (``TOOL_SECONDS``), whatever the city, then a fixed answer."""
    time.sleep(TOOL_SECONDS)
    return f"{city.strip()}: sunny, 21 degrees"


TOOL_SECONDS = DEFAULT_SECONDS


def serve(seconds: float) -> None:
    """This script as an MCP stdio server of ``forecast`` (FastMCP only: no hierplan import in the server)."""
    global TOOL_SECONDS
    from mcp.server.fastmcp import FastMCP

    TOOL_SECONDS = seconds
    server = FastMCP("bench-tool-overhead", log_level="WARNING")
    server.tool(name="forecast", description=TOOL_DESCRIPTION)(forecast)
    server.run()


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--serve":
    serve(float(sys.argv[2]))
    sys.exit(0)

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import machine_line, write_section  # noqa: E402

TITLE = "Tool step overhead"
TASK = "What is the weather forecast for Paris tomorrow?"
STEP = {"id": 1, "title": "Get the forecast", "instruction": "Look up the weather forecast for Paris.",
        "tool": "forecast", "expected_output": "the forecast for Paris", "depends_on": [], "tool_reason": None}
TIMEOUT_S = 60.0


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def tools(tmp: Path, seconds: float):
    """{mode: tool} for (b), (c), (c0), and the McpTools to close."""
    from langchain_core.tools import StructuredTool

    from hierplan.tools.mcp import load_tools, read_config
    from hierplan.tools.mcp_sessions import _dying_with_hierplan

    local = StructuredTool.from_function(forecast, name="forecast", description=TOOL_DESCRIPTION)
    servers = tmp / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"bench": {
        "command": sys.executable, "args": [str(Path(__file__).resolve()), "--serve", str(seconds)]}}}))
    session = load_tools(servers)
    from langchain_mcp_adapters.client import MultiServerMCPClient

    client = MultiServerMCPClient({"bench": _dying_with_hierplan(read_config(servers)["bench"])},
                                  handle_tool_errors=False)
    per_call = asyncio.run(client.get_tools())[0]
    return {"langchain": local, "mcp": session[0], "mcp per call": per_call}, session


LABELS = {"own": "(a) the function itself, in-process",
          "langchain": "(b) LangChain `@tool` through `call_tool`",
          "mcp": "(c) MCP stdio tool, the run's session",
          "mcp per call": "(c0) MCP stdio tool, a session per call (before)"}


def calls(by_mode: dict, rounds: int) -> dict[str, list[float]]:
    """Seconds of each way of calling the tool, alternating in every round, after one warm-up each."""
    from hierplan.tools.registered import call_tool

    def through(tool):
        def call():
            got = call_tool(tool, {"city": "Paris"}, TIMEOUT_S)
            if not got.ok:
                raise SystemExit(f"{tool.name}: {got.error}")
        return call

    ways = {"own": lambda: forecast("Paris"), **{mode: through(tool) for mode, tool in by_mode.items()}}
    for call in ways.values():
        call()
    seen: dict[str, list[float]] = {mode: [] for mode in ways}
    for _ in range(rounds):
        for mode, call in ways.items():
            seen[mode].append(timed(call))
    return seen


def steps(model, by_mode: dict, rounds: int) -> dict[str, list[dict]]:
    """The tool_step node on a real model, for (b), (c) and (c0): each step's seconds, its argument generation's
    (the call record), its tool call's."""
    from langgraph.runtime import Runtime

    import hierplan.nodes.tool_step as node_module
    from hierplan.config import SamplingConfig
    from hierplan.options import RunOptions

    recorded = []
    real = node_module.call_tool

    def recording(tool, args, timeout_s):  # the node keeps no tool seconds of its own; the event has them
        outcome = real(tool, args, timeout_s)
        recorded.append(outcome)
        return outcome

    node_module.call_tool = recording
    runtime = Runtime(context=RunOptions())
    payload = {"task": TASK, "kind": "writing", "results": [], "step": STEP,
               "plan": {"goal": TASK, "assumptions": [], "steps": [STEP]}}
    nodes = {mode: node_module.make_tool_step(model, SamplingConfig(), [tool]) for mode, tool in by_mode.items()}
    for node in nodes.values():  # warm-up: the prompt's first prefill
        node(payload, runtime)
    seen: dict[str, list[dict]] = {mode: [] for mode in nodes}
    try:
        for _ in range(rounds):
            for mode, node in nodes.items():
                recorded.clear()
                result = node(payload, runtime)["results"][0]
                if not result["ok"] or not recorded:
                    print(f"  {mode}: a failed step left out: {result['error']}", file=sys.stderr)
                    continue
                seen[mode].append({"step": result["seconds"], "args": sum(c["seconds"] for c in result["calls"]),
                                   "tool": recorded[-1].seconds})
    finally:
        node_module.call_tool = real
    return seen


def calls_table(seen: dict[str, list[float]]) -> tuple[str, float]:
    own = statistics.median(seen["own"])
    lines = ["| how the tool is called | median call ms | overhead over the tool's own time, ms |",
             "|---|---:|---:|"]
    for mode, times in seen.items():
        median = statistics.median(times)
        extra = "" if mode == "own" else f"{1000 * (median - own):.1f}"
        lines.append(f"| {LABELS[mode]} | {1000 * median:.1f} | {extra} |")
    return "\n".join(lines), own


def steps_table(seen: dict[str, list[dict]], own: float) -> str:
    lines = ["| tool step | step s | argument generation s | tool call s | the tool's own s | overhead s | "
             "overhead % of the step (target ≤ 5 %) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for mode, rows in seen.items():
        if not rows:
            lines.append(f"| {_unlettered(mode)} | no step succeeded | | | | | |")
            continue
        step, args, tool = (statistics.median(r[k] for r in rows) for k in ("step", "args", "tool"))
        overhead = statistics.median(r["step"] - r["args"] - own for r in rows)
        share = statistics.median(100 * (r["step"] - r["args"] - own) / r["step"] for r in rows)
        lines.append(f"| {_unlettered(mode)} | {step:.3f} | {args:.3f} | {tool:.3f} | {own:.3f} | {overhead:.3f} | "
                     f"**{share:.2f} %** |")
    return "\n".join(lines)


def _unlettered(mode: str) -> str:
    return re.sub(r"^\(\w+\) ", "", LABELS[mode])


def main() -> None:
    global TOOL_SECONDS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="the model of (d) (default: the embedded model; "
                                                      "smollm2-135m for a quick run)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, help="the tool's own time")
    parser.add_argument("--no-model", action="store_true", help="(a) to (c0) only: no model is loaded")
    parser.add_argument("--doc", action="store_true", help="write the section in docs/benchmarks.md")
    args = parser.parse_args()
    TOOL_SECONDS = args.seconds
    with tempfile.TemporaryDirectory() as tmp:
        by_mode, session = tools(Path(tmp), args.seconds)
        try:
            seen = calls(by_mode, args.rounds)
            table, own = calls_table(seen)
            print(table)
            stepped = None
            if not args.no_model:
                from hierplan.models import load_chat_model

                model = load_chat_model(args.model)
                stepped = steps_table(steps(model, by_mode, args.rounds), own)
                print(stepped)
        finally:
            session.close()
    command = "python bench/tool_overhead.py" + (f" --model {args.model}" if args.model else "") + \
        f" --rounds {args.rounds} --seconds {args.seconds:g}" + (" --no-model" if args.no_model else "")
    model_name = args.model or "the embedded model"
    body = f"""Command: `{command}`
Machine: {machine_line()}

One tool, `forecast(city)`, which sleeps {args.seconds:g} s, called {args.rounds} times each way, alternating, after a
warm-up call each: (a) the function itself; (b) the same function as a LangChain tool through `call_tool` (what the
tool_step node runs); (c) the same function served by an MCP stdio server (FastMCP, loaded as `--mcp` loads it:
one session for the run); (c0) the same server with a session per call (langchain-mcp-adapters' connection-based
tools: a server process started for every call, what hierplan did before). Medians.

{table}
"""
    if stepped:
        body += f"""
The whole tool_step node on {model_name}, for (b), (c) and (c0): the model writes `{{"city": ...}}`, constrained
to the tool's schema; the step's seconds and its argument generation's are those the step records. Overhead =
step − argument generation − the tool's own time (a); medians of {args.rounds} rounds.

{stepped}
"""
    if args.doc:
        write_section(TITLE, body)


if __name__ == "__main__":
    main()
