"""MCP servers' tools as plan steps (`--mcp servers.json`, langchain-mcp-adapters), with the tiny server in
tests/servers/mcp_tools.py, started by the tests themselves (stdio, and streamable HTTP), in a temp dir."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("langchain_mcp_adapters")
# mcp's stdio client takes the stderr of the moment it is first imported as its servers' stderr (a default
# argument): import it now, under pytest's stderr (a file), not inside helpers.cli's StringIO (no file descriptor).
import mcp.client.stdio  # noqa: E402, F401

from fakes import ScriptedChatModel, plan_json  # noqa: E402
from helpers import WORKER, cli, events, one_line_error, statuses  # noqa: E402
from hierplan import build_graph  # noqa: E402
from hierplan.config import MCP_CLOSE_TIMEOUT_S  # noqa: E402
from hierplan.errors import UsageError  # noqa: E402
from hierplan.eval.orphans import left_over  # noqa: E402
from hierplan.tools.mcp import load_tools, read_config  # noqa: E402
from hierplan.tools.registered import call_tool, result_text  # noqa: E402
from servers.launch import free_port  # noqa: E402

SERVER = Path(__file__).parent / "servers" / "mcp_tools.py"
CONFIG = {"configurable": {"thread_id": "mcp-1"}}
ATLANTIS = "The capital of Atlantis is Poseidonia (population 7,301)."
GONE_WITHIN_S = 5


def servers_file(tmp_path: Path, **servers: dict) -> Path:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def stdio(tmp_path: Path) -> dict:
    return {"command": sys.executable, "args": [str(SERVER)], "cwd": str(tmp_path),
            "env": {"MCP_TEST_PID_FILE": str(tmp_path / "server.pid")}}


@pytest.fixture
def facts(tmp_path) -> Path:
    return servers_file(tmp_path, facts=stdio(tmp_path))


# --- the servers' file ----------------------------------------------------------------------------------

@pytest.mark.parametrize("content, needle", [
    (None, "no such file"),
    ("{not json", "not valid JSON"),
    ('{"servers": {}}', '"mcpServers"'),
    ('{"mcpServers": {"x": {"args": []}}}', "server 'x' has no \"command\""),
    ('{"mcpServers": {"x": {"url": "ftp://h", "transport": "streamable_http"}}}', 'no http(s) "url"'),
    ('{"mcpServers": {"x": {"command": "c", "transport": "carrier-pigeon"}}}', "unknown transport"),
])
def test_a_bad_servers_file_is_one_error_line_and_no_run(tmp_path, models, content, needle):
    path = tmp_path / "servers.json"
    if content is not None:
        path.write_text(content)
    db = str(tmp_path / "runs.sqlite")
    code, _, err = cli("run", "--mcp", str(path), "--db", db, "a task")
    assert code == 2
    one_line_error(err, "--mcp", needle)
    assert models[1] == [] and statuses(db) == {}  # no model loaded, no run recorded


def test_a_server_that_does_not_start_is_one_error_line(tmp_path, models):
    path = servers_file(tmp_path, broken={"command": str(tmp_path / "no-such-server")})
    code, _, err = cli("run", "--mcp", str(path), "--db", str(tmp_path / "runs.sqlite"), "a task")
    assert code == 2
    one_line_error(err, "server 'broken' could not be reached")


def test_the_usual_file_shape_becomes_the_adapters_connections(tmp_path):
    path = servers_file(tmp_path, local={"command": "python", "args": ["s.py"], "env": {"K": "v"}, "disabled": False},
                        remote={"url": "http://127.0.0.1:9/mcp", "transport": "streamable_http"},
                        plain={"url": "https://example.org/mcp"})
    assert read_config(path) == {
        "local": {"transport": "stdio", "command": "python", "args": ["s.py"], "env": {"K": "v"}},
        "remote": {"transport": "streamable_http", "url": "http://127.0.0.1:9/mcp"},
        "plain": {"transport": "streamable_http", "url": "https://example.org/mcp"}}


def test_only_the_command_line_names_the_servers_file(monkeypatch):
    """The file starts programs: the web page's form and a server's clients cannot set it."""
    from hierplan.app.fields import from_form, from_mapping
    from hierplan.server.factory import DEFAULTS_ENV, options_from

    assert "mcp" not in from_form({"mcp": "/tmp/evil.json"})
    assert "mcp" not in from_mapping({"mcp": "/tmp/evil.json"})
    assert options_from({"configurable": {"mcp": "/tmp/evil.json"}}, {"mcp": "/tmp/evil.json"}).mcp is None
    monkeypatch.setenv(DEFAULTS_ENV, json.dumps({"mcp": "/srv/servers.json"}))
    assert options_from({"configurable": {"mcp": "/tmp/evil.json"}}).mcp == "/srv/servers.json"


@pytest.mark.parametrize("command", ["ui", "serve"])
def test_ui_and_serve_check_the_file_before_they_start(tmp_path, command):
    code, _, err = cli(command, "--mcp", str(tmp_path / "missing.json"), "--db", str(tmp_path / "runs.sqlite"))
    assert code == 2
    one_line_error(err, "--mcp", "no such file")


def test_help_imports_no_mcp():
    code = ("import sys; from hierplan.cli.main import main\n"
            "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'langchain_mcp_adapters')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "--mcp FILE" in proc.stdout and proc.stdout.strip().endswith("[]")


# --- the tools, over stdio and streamable HTTP --------------------------------------------------------------

def test_a_stdio_servers_tools_run_as_plan_steps_and_their_errors_fail_the_step(tmp_path, facts):
    with load_tools(facts) as tools:
        assert {t.name for t in tools} == {"lookup", "add", "fail", "slow"}
        model = ScriptedChatModel(script={"planner": [plan_json(["lookup", "llm", "llm"])],
                                          "tool_step": ['{"topic": "Atlantis"}']})
        out = build_graph(model, tools=tools, constrain=False).invoke(
            {"task": "What is the capital of Atlantis?"}, CONFIG)
        first = out["results"][0]
        assert first["ok"] and first["output"] == ATLANTIS and first["tool_args"] == {"topic": "Atlantis"}
        [planner] = [c for c in model.calls if c["node"] == "planner"]  # after the requirements are read
        assert "lookup: Look up the facts this server knows" in planner["messages"][-1].content

        failed = call_tool(next(t for t in tools if t.name == "fail"), {"message": "out of quibs"}, 30)
        assert not failed.ok and failed.error == "Error executing tool fail: out of quibs"


def test_a_server_over_streamable_http(tmp_path):
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port)], cwd=tmp_path, stdout=log,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
                time.sleep(0.1)
        path = servers_file(tmp_path, remote={"url": f"http://127.0.0.1:{port}/mcp", "transport": "streamable_http"})
        with load_tools(path) as tools:
            add = next(t for t in tools if t.name == "add")
            got = call_tool(add, {"a": 1, "b": 2.5}, 30)
            assert got.ok and got.text == "3.5"
            again = call_tool(add, {"a": 2, "b": 2}, 30)  # on the same session
            assert again.ok and again.text == "4.0"
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        log.close()


# --- the CLI ------------------------------------------------------------------------------------------------

def test_hierplan_run_with_mcp_records_and_shows_the_tool_call(tmp_path, models, facts, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scripts, _ = models
    scripts.append({"planner": [plan_json(["lookup", "llm", "llm"])], "tool_step": ['{"topic": "atlantis"}']})
    db = str(tmp_path / "runs.sqlite")
    code, out, err = cli("run", "--mcp", "servers.json", "--db", db, "--json", "--run-id", "atl1",
                         "What is the capital of Atlantis?")
    assert code == 0, err
    finished = [e for e in events(out) if e["event"] == "step_finished"]
    assert finished[0]["tool"] == "lookup" and finished[0]["tool_args"] == {"topic": "atlantis"}
    assert finished[0]["output"] == ATLANTIS
    code, shown, err = cli("show", "atl1", "--db", db)
    assert code == 0, err
    assert 'call: lookup {"topic": "atlantis"}' in shown and ATLANTIS in shown
    code, listed, _ = cli("show", "atl1", "--db", db, "--json")
    assert json.loads(listed)["run"]["status"] == "done"
    assert _servers_left() == []  # the run's end closed its session


def test_approve_shows_the_tool_calls_planned(tmp_path, models, facts):
    scripts, _ = models
    scripts.append({"planner": [plan_json(["lookup", "llm", "llm"])]})
    code, out, err = cli("run", "--mcp", str(facts), "--db", str(tmp_path / "runs.sqlite"), "--approve",
                         "What is the capital of Atlantis?")
    assert code == 0, err
    assert "1. [lookup] Step 1 (lookup)" in out
    assert "step 1 calls lookup: Do part 1 (Look up the facts this server knows" in out
    assert "waits for approval" in err
    assert _servers_left() == []  # a run that stops to wait closes its session too


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_stdio_server_dies_with_hierplan_killed_mid_call(tmp_path):
    """kill -9 of hierplan while an MCP tool call runs: the server process is gone within a few seconds."""
    path = servers_file(tmp_path, facts=stdio(tmp_path))
    env = dict(os.environ, PYTHONUNBUFFERED="1", HIERPLAN_WORKER_SPEC=json.dumps(
        {"plan": ["slow", "llm", "llm"], "tool_args": {"seconds": 120}}))
    with (tmp_path / "worker.log").open("wb") as log:  # not a pipe: a surviving server would hold it open
        worker = subprocess.Popen([sys.executable, WORKER, "run", "--mcp", str(path), "--db",
                                   str(tmp_path / "runs.sqlite"), "--json", "Sleep a while"],
                                  env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    pid_file = tmp_path / "server.pid"
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists():
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the tool call never started"
            time.sleep(0.05)
        server = int(pid_file.read_text())
        assert _alive(server)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    deadline = time.monotonic() + GONE_WITHIN_S
    while _alive(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(server):
        os.kill(server, signal.SIGKILL)
        pytest.fail(f"the MCP server (pid {server}) outlived hierplan by {GONE_WITHIN_S} s")


def test_load_tools_refuses_two_tools_of_one_name_and_leaves_no_server(tmp_path):
    path = servers_file(tmp_path, one=stdio(tmp_path), two=stdio(tmp_path))
    with pytest.raises(UsageError, match="two tools are named"):
        load_tools(path)
    assert _servers_left() == []  # both servers were started to list their tools, and ended with the error


def test_the_servers_graph_has_the_tools_of_its_own_mcp_file(monkeypatch, facts):
    """`hierplan serve --mcp FILE` passes the file in the server's defaults; its graph is compiled with the
    file's tools, listed once."""
    from hierplan.server import factory

    monkeypatch.setattr(factory, "_models", {})
    monkeypatch.setattr(factory, "_graphs", {})
    monkeypatch.setenv(factory.DEFAULTS_ENV, json.dumps({"mcp": str(facts)}))
    listed, loaded = [], []
    monkeypatch.setattr(factory, "_tools", lambda options: listed.append(options.mcp)
                        or loaded.append(load_tools(options.mcp)) or loaded[-1])
    model = ScriptedChatModel(script={"planner": [plan_json(["lookup", "llm", "llm"])],
                                      "tool_step": ['{"topic": "atlantis"}']})
    options = factory.options_from({"configurable": {"constrain": False}})
    load = lambda options: model  # noqa: E731 - one loader: graphs are cached per loader and model options
    graph = factory.graph_for(options, load)
    factory.graph_for(options, load)
    assert listed == [str(facts)]
    try:
        out = graph.invoke({"task": "Capital of Atlantis?"}, context=options)
        assert out["results"][0]["output"] == ATLANTIS
    finally:  # a server keeps its graphs' tools until it exits; this test's graph goes now
        for tools in loaded:
            tools.close()


# --- one session per server, for as long as the tools -------------------------------------------------------

def _servers_left() -> list[int]:
    """This process's stdio test servers still running (mcp_launch.py execs ``python SERVER``)."""
    return left_over([(sys.executable, str(SERVER))])


def _named(tools, name: str):
    return next(t for t in tools if t.name == name)


def _server_pid(tools, tmp_path: Path) -> int:
    """The process that answers the tools' calls: ``slow`` writes its pid (sleeping 0 s here)."""
    pid_file = tmp_path / "server.pid"
    pid_file.unlink(missing_ok=True)
    got = call_tool(_named(tools, "slow"), {"seconds": 0}, 30)
    assert got.ok, got.error
    return int(pid_file.read_text())


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_WITHIN_S
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _alive(pid)


def test_every_call_of_a_stdio_servers_tools_reaches_the_one_server_process(tmp_path, facts):
    with load_tools(facts) as tools:
        first = _server_pid(tools, tmp_path)
        assert _servers_left() == [first]  # started once, to list the tools, and not again for the call
        answers = []
        callers = [threading.Thread(target=lambda i=i: answers.append(call_tool(_named(tools, "add"),
                                                                                {"a": i, "b": 0.5}, 30)))
                   for i in range(6)]  # parallel steps: concurrent calls share the session
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(60)
        assert all(a.ok for a in answers) and sorted(a.text for a in answers) == [f"{i}.5" for i in range(6)]
        assert _server_pid(tools, tmp_path) == first and _servers_left() == [first]
    assert _gone(first) and _servers_left() == []


def test_the_tools_answer_when_awaited_on_a_callers_own_event_loop(facts):
    """Plain LangChain tools to other code: awaited on another loop, the call is handed to the session's."""
    with load_tools(facts) as tools:
        got = asyncio.run(_named(tools, "lookup").ainvoke({"topic": "zorblat"}))
        assert result_text(got) == "A zorblat is worth 17 quibs."


def test_a_call_past_its_time_limit_is_cancelled_and_the_session_stays_open(tmp_path, facts):
    with load_tools(facts) as tools:
        first = _server_pid(tools, tmp_path)
        late = call_tool(_named(tools, "slow"), {"seconds": 1.5}, 0.3)
        assert not late.ok and late.error == "the tool slow did not finish within 0.3 s" and late.seconds < 1.5
        after = call_tool(_named(tools, "add"), {"a": 1, "b": 2}, 30)  # answered once the server has slept
        assert after.ok and after.text == "3.0"
        assert _server_pid(tools, tmp_path) == first


def test_a_server_killed_between_calls_fails_one_call_and_the_next_starts_it_again(tmp_path, facts):
    with load_tools(facts) as tools:
        first = _server_pid(tools, tmp_path)
        os.kill(first, signal.SIGKILL)
        assert _gone(first)
        add = _named(tools, "add")
        failed = call_tool(add, {"a": 1, "b": 2}, 30)
        assert not failed.ok
        assert failed.error.startswith("ConnectionError: the MCP server 'facts' failed (")
        assert failed.error.endswith("the next call opens a new session")
        again = call_tool(add, {"a": 1, "b": 2}, 30)
        assert again.ok and again.text == "3.0"
        second = _server_pid(tools, tmp_path)
        assert second != first and _servers_left() == [second]
    assert _gone(second)


def _slow_call_started(tools, tmp_path):
    """A 120 s call of the slow tool in a thread, returned once the server is in it (it wrote its pid again):
    (the thread, the dict that gets its ``outcome``)."""
    busy = {}
    caller = threading.Thread(target=lambda: busy.update(outcome=call_tool(_named(tools, "slow"),
                                                                           {"seconds": 120}, 300)))
    caller.start()
    deadline = time.monotonic() + 30
    while not (tmp_path / "server.pid").exists():  # the server is in the call (a sync tool: it reads nothing)
        assert time.monotonic() < deadline, "the call never started"
        time.sleep(0.02)
    return caller, busy


def test_close_ends_every_session_and_server_even_one_busy_in_a_call(tmp_path, facts):
    tools = load_tools(facts)
    first = _server_pid(tools, tmp_path)
    (tmp_path / "server.pid").unlink()
    caller, busy = _slow_call_started(tools, tmp_path)
    start = time.monotonic()
    tools.close()
    assert time.monotonic() - start < MCP_CLOSE_TIMEOUT_S
    assert not _alive(first) and _servers_left() == []  # close() returns once the servers are gone
    caller.join(30)
    assert busy["outcome"].error == "RuntimeError: the MCP servers' sessions were closed"
    after = call_tool(_named(tools, "add"), {"a": 1, "b": 2}, 30)
    assert not after.ok and after.error == "RuntimeError: the MCP servers' sessions were closed"
    tools.close()  # again: nothing left to end


def test_a_server_killed_in_a_call_fails_that_call_at_once_and_the_next_starts_it_again(tmp_path, facts):
    with load_tools(facts) as tools:
        first = _server_pid(tools, tmp_path)
        (tmp_path / "server.pid").unlink()
        caller, busy = _slow_call_started(tools, tmp_path)
        os.kill(first, signal.SIGKILL)
        caller.join(GONE_WITHIN_S)
        assert not caller.is_alive(), "the call outlived its server"
        failed = busy["outcome"]
        assert not failed.ok and failed.error.startswith("ConnectionError: the MCP server 'facts' failed (")
        again = call_tool(_named(tools, "add"), {"a": 2, "b": 2}, 30)
        assert again.ok and again.text == "4.0"
        assert _server_pid(tools, tmp_path) != first


# --- MCP everywhere: build_graph's mcp_servers, and servers chosen by name (the page's form, a server's client) ---

def test_build_graph_takes_the_servers_configuration_itself(tmp_path, monkeypatch):
    from hierplan.tools import mcp

    real, loaded = mcp.load_servers, []  # kept to end its server here: a graph keeps it for the process
    monkeypatch.setattr(mcp, "load_servers", lambda servers: loaded.append(real(servers)) or loaded[-1])
    config = {"mcpServers": {"facts": stdio(tmp_path)}}
    model = ScriptedChatModel(script={"planner": [plan_json(["lookup", "llm", "llm"])],
                                      "tool_step": ['{"topic": "atlantis"}']})
    try:
        graph = build_graph(model, constrain=False, mcp_servers=config)
        out = graph.invoke({"task": "What is the capital of Atlantis?"}, CONFIG)
        assert out["results"][0]["ok"] and out["results"][0]["output"] == ATLANTIS
        assert len(_servers_left()) == 1
    finally:
        for tools in loaded:
            tools.close()
    assert _servers_left() == []
    with pytest.raises(UsageError, match="mcp_servers: server 'x' has no"):
        build_graph(model, mcp_servers={"mcpServers": {"x": {"args": []}}})


def test_a_client_chooses_servers_of_the_hosts_file_by_name_never_a_program(tmp_path, monkeypatch):
    """A server's client (and the page's form) names servers of `hierplan serve --mcp FILE`: its graph has
    only their tools; a name the file lacks, or names without a file, are one line the client sees."""
    from hierplan.app.fields import from_form
    from hierplan.server import factory

    calc = tmp_path / "calc"
    calc.mkdir()
    path = servers_file(tmp_path, facts=stdio(tmp_path), calc=stdio(calc))
    monkeypatch.setattr(factory, "_models", {})
    monkeypatch.setattr(factory, "_graphs", {})
    real_tools, loaded = factory._tools, []
    monkeypatch.setattr(factory, "_tools", lambda options: loaded.append(real_tools(options)) or loaded[-1])
    assert from_form({"mcp_servers": "calc"})["mcp_servers"] == "calc"  # the page's form may set it
    with pytest.raises(factory.OptionError, match="none is configured"):
        factory.graph_for(factory.options_from({"configurable": {"mcp_servers": ["facts"]}}), lambda o: None)
    monkeypatch.setenv(factory.DEFAULTS_ENV, json.dumps({"mcp": str(path)}))
    with pytest.raises(factory.OptionError, match=r"names 'nope', which --mcp .* does not have \(it has facts, calc\)"):
        factory.graph_for(factory.options_from({"configurable": {"mcp_servers": "nope"}}), lambda o: None)
    model = ScriptedChatModel(script={"planner": [plan_json(["lookup", "llm", "llm"])],
                                      "tool_step": ['{"topic": "atlantis"}']})
    options = factory.options_from({"configurable": {"constrain": False, "mcp_servers": ["calc"]}})
    assert options.mcp == str(path) and options.mcp_servers == "calc"
    try:
        out = factory.graph_for(options, lambda o: model).invoke({"task": "Capital of Atlantis?"}, context=options)
        assert out["results"][0]["output"] == ATLANTIS
        # one server's tools: the file's two servers together would name each tool twice (refused)
        assert [sorted(t.name for t in tools) for tools in loaded] == [["add", "fail", "lookup", "slow"]]
    finally:  # a server keeps its graphs' tools until it exits; this test's go now
        for tools in loaded:
            tools.close()


@pytest.mark.slow
def test_a_langgraph_server_client_names_the_hosts_servers_and_approves_the_call(tmp_path):
    """A real `hierplan serve --mcp FILE` (LangGraph Server): a client's configurable names one of the file's
    servers and asks for approve_tools; the run waits at the call with its arguments, and the client's
    Command(resume=...) approves it; the real stdio server answers."""
    from needs import unavailable
    from server_fixtures import missing, start_server

    if reason := missing():
        unavailable(reason)
    path = servers_file(tmp_path, facts=stdio(tmp_path), elsewhere={"url": "http://127.0.0.1:9/mcp"})
    server = start_server(tmp_path / "server", args=("--mcp", str(path)))

    async def go():
        from langgraph_sdk import get_client

        c = get_client(url=server.url)
        config = {"configurable": {"model": "scripted-lookup", "mcp_servers": ["facts"], "approve_tools": True}}
        thread = (await c.threads.create())["thread_id"]
        await c.runs.wait(thread, "hierplan", input={"task": "What is the capital of Atlantis? In steps."},
                          config=config)
        waiting = await c.threads.get_state(thread)
        await c.runs.wait(thread, "hierplan", command={"resume": {"action": "approve"}}, config=config)
        return waiting, await c.threads.get_state(thread)

    try:
        waiting, done = asyncio.run(go())
    except Exception:
        print(server.log_tail())
        raise
    finally:
        server.stop()
    assert waiting["next"] == ["approve_tool"]
    request = waiting["tasks"][0]["interrupts"][0]["value"]
    assert (request["tool"], request["arguments"]) == ("lookup", {"topic": "atlantis"})
    first = done["values"]["results"][0]
    assert first["ok"] and first["output"] == ATLANTIS and done["values"]["final"]


def test_a_server_process_is_running_until_it_exits_reaped_or_not():
    from hierplan.processes import running as _running

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert _running(child.pid)
        child.kill()
        deadline = time.monotonic() + GONE_WITHIN_S
        # killed and not yet waited for: a zombie, which has exited (a call on its session must not wait on it)
        while _running(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not _running(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not _running(child.pid)


def test_each_stdio_server_start_records_its_process_id_for_the_sessions(tmp_path, facts):
    with load_tools(facts) as tools:
        first = _server_pid(tools, tmp_path)
        sessions = _named(tools, "add")._sessions  # the tools' sessions (McpSessionTool keeps them privately)
        assert sessions._servers["facts"].pid == first
        os.kill(first, signal.SIGKILL)
        assert _gone(first)
        assert not call_tool(_named(tools, "add"), {"a": 1, "b": 2}, 30).ok
        second = _server_pid(tools, tmp_path)
        assert sessions._servers["facts"].pid == second != first
