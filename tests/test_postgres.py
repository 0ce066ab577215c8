"""Postgres as the run database, against a real throwaway server (tests/pg.py): every CLI command works as on
SQLite, the schema appears on first use, bad URLs and passwords give one line that never shows the password,
and a run's lease tells a live run from an interrupted one across processes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest

from fakes import plan_json
from helpers import cli, one_line_error, saved_values, statuses
from hierplan.errors import UsageError
from pg import PASSWORD, free_port, pg_cluster, pg_url  # noqa: F401  (fixtures)

PLAN = ["llm", "python", "llm"]
# A task with parts (rules.plan PARTS_RE): the planner plans it with --split-writing; without it, one piece of
# writing is planned by rule
TASK = "Compute it in steps"


def script(**extra):
    return {"planner": [plan_json(PLAN)], "python_step": ["print(6 * 7)"], "llm_step": ["one", "three"],
            "aggregator": ["FINAL"], **extra}


def tables(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {r[0] for r in rows}


def query(url: str, sql: str, *params) -> list[tuple]:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


def test_every_command_works_on_postgres(models, pg_url, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    scripts, made = models
    assert tables(pg_url) == set()

    scripts.append(script(llm_step=["one", RuntimeError("model fell over")]))
    code, out, err = cli("run", TASK, "--split-writing", "--db", pg_url, "--run-id", "r1")
    assert code == 1
    one_line_error(err, "model fell over", "hierplan resume r1")
    assert {"hierplan_runs", "checkpoints", "checkpoint_writes", "checkpoint_migrations"} <= tables(pg_url)
    assert statuses(pg_url) == {"r1": "failed"}

    scripts.append({"llm_step": ["three"], "aggregator": ["FINAL"]})
    code, out, err = cli("resume", "r1", "--db", pg_url)
    assert code == 0, err
    assert [c["node"] for c in made[1].calls] == ["llm_step", "aggregator"]  # steps 1 and 2 were saved
    assert statuses(pg_url) == {"r1": "done"}

    code, out, _ = cli("show", "r1", "--db", pg_url)
    assert code == 0 and f"Run r1 (done): {TASK}" in out and "42" in out and "FINAL" in out
    code, out, _ = cli("show", "r1", "--json", "--db", pg_url)
    state = json.loads(out)["state"]
    assert [r["output"] for r in state["results"]] == ["one", "42", "three"] and state["final"] == "FINAL"

    code, out, _ = cli("show", "r1", "--history", "--json", "--db", pg_url)
    rows = json.loads(out)
    assert code == 0 and rows[0]["final"] and rows[-1]["source"] == "input"
    after_one = next(r for r in reversed(rows) if r["results"] == 1)
    scripts.append({"python_step": ["print(7 * 6)"], "llm_step": ["THREE"], "aggregator": ["FORKED"]})
    code, out, err = cli("fork", "r1", "--at", after_one["checkpoint"], "--db", pg_url, "--run-id", "f1")
    assert code == 0, err
    assert [r["output"] for r in saved_values(pg_url, "f1")["results"]] == ["one", "42", "THREE"]
    assert saved_values(pg_url, "r1")["final"] == "FINAL"  # the original is untouched

    code, out, _ = cli("runs", "--json", "--db", pg_url)
    listed = json.loads(out)
    assert [r["id"] for r in listed] == ["f1", "r1"] and {r["status"] for r in listed} == {"done"}
    # It all lives in Postgres: the rows are there, and no SQLite file appeared anywhere.
    assert sorted(r[0] for r in query(pg_url, "SELECT id FROM hierplan_runs")) == ["f1", "r1"]
    assert query(pg_url, "SELECT count(DISTINCT thread_id) FROM checkpoints")[0][0] == 2
    assert not list(tmp_path.rglob("*.sqlite")) and not (tmp_path / "postgresql:").exists()


def test_files_live_in_the_database_and_a_run_resumed_on_another_machine_finds_them(models, pg_url, tmp_path,
                                                                                  monkeypatch):
    """Each "machine" has its own cache folder ($HIERPLAN_FILE_CACHE); the bytes are in the database."""
    from hierplan.store import open_file_store

    scripts, made = models
    data = b"region,amount\nnorth,10\nsouth,20\neast,30\n"
    csv = tmp_path / "sales.csv"
    csv.write_bytes(data)
    program = "print(sum(int(line.split(',')[1]) for line in open('data/sales.csv').read().splitlines()[1:]))"
    monkeypatch.setenv("HIERPLAN_FILE_CACHE", str(tmp_path / "machine-a"))
    scripts.append(script(python_step=[RuntimeError("the model went away")]))
    # a piece of writing about the file, so the planner's steps run (a question about it is one program)
    code, _, err = cli("run", "Write a note on the sales, in steps", "--db", pg_url, "--run-id", "p1",
                       "--file", str(csv))
    assert code == 1 and "hierplan resume p1" in err
    [f] = saved_values(pg_url, "p1")["files"]
    assert "data" not in f and query(pg_url, "SELECT size, chunks FROM hierplan_files WHERE sha256 = %s",
                                     f["sha256"]) == [(len(data), 1)]
    assert (tmp_path / "machine-a" / f["sha256"][:2] / f["sha256"]).read_bytes() == data

    monkeypatch.setenv("HIERPLAN_FILE_CACHE", str(tmp_path / "machine-b"))  # another machine: an empty cache
    scripts.append({"python_step": [program], "llm_step": ["three"], "aggregator": ["FINAL"]})
    code, _, err = cli("resume", "p1", "--db", pg_url)
    assert code == 0, err
    assert saved_values(pg_url, "p1")["results"][1]["output"] == "60"  # read from the database on machine b
    assert (tmp_path / "machine-b" / f["sha256"][:2] / f["sha256"]).read_bytes() == data

    # one more machine, through the store itself; a copy in the database that no longer matches is one line
    third = open_file_store(pg_url)
    assert third.cache.root == str(tmp_path / "machine-b")
    monkeypatch.setenv("HIERPLAN_FILE_CACHE", str(tmp_path / "machine-c"))
    query(pg_url, "UPDATE hierplan_file_chunks SET data = 'x'::bytea WHERE sha256 = %s RETURNING 1", f["sha256"])
    from hierplan.store.files import FileStoreError

    with pytest.raises(FileStoreError, match="file sales.csv: its copy in .* no longer matches its sha256"):
        open_file_store(pg_url).local_path(f["sha256"], "sales.csv")
    assert not (tmp_path / "machine-c" / f["sha256"][:2] / f["sha256"]).exists()
    assert third.local_path(f["sha256"], "sales.csv")  # machine b's verified copy is still good


def test_hierplan_db_names_the_server_for_every_command(models, pg_url, monkeypatch):
    monkeypatch.setenv("HIERPLAN_DB", pg_url)
    models[0].append(script())
    assert cli("run", "t", "--run-id", "env1")[0] == 0
    code, out, _ = cli("runs", "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)] == ["env1"]
    assert query(pg_url, "SELECT status FROM hierplan_runs WHERE id = 'env1'") == [("done",)]


def test_a_unix_socket_url_works_too(models, pg_cluster, pg_url):
    """postgresql://user@/db?host=/socket/dir: local set-ups often connect this way (trust auth here)."""
    dbname = pg_url.rsplit("/", 1)[1]
    url = f"postgresql://hierplan@/{dbname}?host={pg_cluster.root}&port={pg_cluster.port}"
    models[0].append(script())
    code, _, err = cli("run", "t", "--db", url, "--run-id", "sock")
    assert code == 0, err
    assert statuses(pg_url) == {"sock": "done"}  # the same database, seen over TCP


def test_eval_keeps_each_task_in_postgres(models, pg_url, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"question": f"Q{i}", "answer": "#### 42"}) + "\n" for i in (1, 2)))
    models[0].append({"planner": [plan_json(["llm"])] * 2, "llm_step": ["x"] * 2,
                      "aggregator": ["The answer is 42."] * 2})
    code, out, err = cli("eval", str(tasks), "--db", pg_url, "--out", str(tmp_path / "o"), "--json",
                         "--no-constrain")
    assert code == 0, err
    assert json.loads(out)["correct"] == 2
    rows = [json.loads(line) for line in (tmp_path / "o" / "results.jsonl").read_text().splitlines()]
    threads = {r[0] for r in query(pg_url, "SELECT DISTINCT thread_id FROM checkpoints")}
    assert threads == {r["thread_id"] for r in rows} and len(threads) == 2


def test_first_use_from_many_threads_sets_the_schema_up_once(pg_url):
    from hierplan.store import postgres

    errors: list[BaseException] = []

    def open_both():
        try:
            postgres._set_up.discard(pg_url)  # each thread really runs the set-up
            postgres.open_checkpointer(pg_url)
            postgres.open_run_store(pg_url).close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=open_both) for _ in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert errors == []
    versions = query(pg_url, "SELECT v FROM checkpoint_migrations ORDER BY v")
    assert [v for (v,) in versions] == list(range(len(versions)))  # each migration recorded once


def test_a_lease_tells_running_from_interrupted_across_sessions(pg_url):
    """Two stores are two processes as far as Postgres is concerned (separate sessions)."""
    from hierplan.store import RunStore

    a, b = RunStore.open(pg_url), RunStore.open(pg_url)
    run_id = a.create("t", {})
    assert b.get(run_id).status == "running"
    with pytest.raises(UsageError, match="running in another process"):
        b.set_status(run_id, "running")
    a.close()  # as a process exiting (or killed: its sessions end the same way)
    # The server ends a closed session's backend (and frees its lock) a moment after the client hangs up.
    assert eventually(lambda: b.get(run_id).status == "interrupted")
    b.set_status(run_id, "running")  # resumed by b
    assert RunStore.open(pg_url).get(run_id).status == "running"
    b.set_status(run_id, "done")
    assert RunStore.open(pg_url).get(run_id).status == "done"


# --- bad URLs: one line, exit 1 (2 for a malformed URL), never the password ---------------------------------

def bad_urls(cluster):
    closed = free_port()
    return {
        "wrong password": (cluster.url(password="wrong-" + PASSWORD), "password authentication failed"),
        "no such database": (cluster.url("nope"), 'database "nope" does not exist'),
        "nothing listening": (f"postgresql://hierplan:{PASSWORD}@127.0.0.1:{closed}/db", "Connection refused"),
        "unknown host": (f"postgresql://hierplan:{PASSWORD}@no-such-host.invalid/db", "no-such-host.invalid"),
        "bad port": (f"postgresql://hierplan:{PASSWORD}@127.0.0.1:notaport/db", "notaport"),
        "password in the query": (f"postgresql://hierplan@127.0.0.1:{cluster.port}/postgres?password=wrong-{PASSWORD}",
                                  "password authentication failed"),
    }


@pytest.mark.parametrize("case", ["wrong password", "no such database", "nothing listening", "unknown host",
                                  "bad port", "password in the query"])
@pytest.mark.parametrize("command", [["runs"], ["show", "x"], ["run", "t"], ["resume", "x"]])
def test_a_bad_url_or_password_is_one_line_without_the_password(models, pg_cluster, tmp_path, monkeypatch,
                                                                case, command):
    monkeypatch.chdir(tmp_path)
    url, reason = bad_urls(pg_cluster)[case]
    code, out, err = cli(*command, "--db", url)
    assert code == 1, err
    one_line_error(err, "cannot connect to database postgresql://hierplan", reason)
    assert PASSWORD not in err and PASSWORD not in out and "***" in err
    assert not list(tmp_path.iterdir())  # nothing was created in its place


@pytest.mark.parametrize("db, message", [
    ("mysql://root:pw@localhost/db", "unsupported database URL mysql://"),
    ("sqlite://runs.db", "unsupported database URL sqlite://"),
    ("postgresql:runs", "write the Postgres URL as postgresql://"),
    (f"postgresql://u:{PASSWORD}@127.0.0.1:5432/db?bogus=1", "bad database URL"),
])
def test_an_unusable_url_is_a_usage_error(tmp_path, monkeypatch, db, message):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("runs", "--db", db)
    assert code == 2
    one_line_error(err, message)
    assert PASSWORD not in err and not list(tmp_path.iterdir())


@pytest.mark.parametrize("url, shown, secret", [
    ("postgresql://u:Zq9x@h:5432/db", "postgresql://u:***@h:5432/db", "Zq9x"),
    ("postgresql://u@h/db", "postgresql://u@h/db", None),
    ("postgres://u:p%40ss:w@h/db?sslmode=require", "postgres://u:***@h/db?sslmode=require", "p@ss:w"),
    ("postgresql://u@h/db?sslmode=require&password=Zq9x", "postgresql://u@h/db?sslmode=require&password=***", "Zq9x"),
    ("postgresql://u:a@Zq9x@h/db", "postgresql://u:***@h/db", "a@Zq9x"),  # an unencoded @ in the password
])
def test_display_name_masks_every_password_form(url, shown, secret):
    from hierplan.store import display_name
    from hierplan.store.postgres import redact

    assert display_name(url) == shown
    if secret:  # an error text that quotes the password (decoded) or the URL loses both
        text = redact(f"failed for {url}: password {secret!r} rejected", url)
        assert secret not in text and shown in text


def test_a_sqlite_path_is_still_a_sqlite_path(tmp_path):
    from hierplan.store import backend, sqlite

    for db in (str(tmp_path / "a.sqlite"), ":memory:", "runs:v2.sqlite", "C://x.sqlite"):
        assert backend(db) is sqlite


def test_sqlite_commands_never_import_psycopg(tmp_path):
    code = ("import sys; from hierplan.cli.main import main; main(['runs', '--db', sys.argv[1]]); "
            "assert not [m for m in sys.modules if m.startswith(('psycopg', 'langgraph.checkpoint.postgres'))]")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.sqlite")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def eventually(check, seconds: float = 5.0) -> bool:
    """True once ``check()`` is, polled until ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_threads_and_memories_live_in_postgres_and_a_new_process_recalls_them(models, pg_url, tmp_path):
    """A thread's turns and a remembered fact, on Postgres; the next turn and another thread in a new process
    (tests/cli_worker.py, its scripted model computing from the earlier answer it is shown)."""
    import os

    from helpers import WORKER

    scripts, _ = models
    scripts.append({"aggregator": ["The answer is 51."]})
    assert cli("run", "--thread", "pg", "What is 17 * 3?", "--db", pg_url)[0] == 0
    scripts.append({"aggregator": ["Noted."]})
    code, out, err = cli("run", "--thread", "pg", "Remember that my team is Blue.", "--db", pg_url)
    assert code == 0, err
    assert query(pg_url, "SELECT key, value->>'text' FROM store WHERE prefix = 'memories.local'") == [
        (saved_values(pg_url, "pg-2")["remembered"]["key"], "my team is Blue")]

    spec = {"final": "Your team is Blue.", "add_to_earlier": True}
    env = dict(os.environ, HIERPLAN_WORKER_SPEC=json.dumps(spec))
    for argv in (["run", "--thread", "pg", "now add 100 to the first answer", "--kind", "numeric"],
                 ["run", "--thread", "other", "Which team am I on?"]):
        done = subprocess.run([sys.executable, WORKER, *argv, "--db", pg_url], capture_output=True, text=True,
                              timeout=120, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    third = saved_values(pg_url, "pg-3")
    assert [t["turn"] for t in third["history"]] == [1, 2] and third["results"][-1]["stdout"].strip() == "151"
    other = saved_values(pg_url, "other")
    assert [m["text"] for m in other["memories"]] == ["my team is Blue"]
    assert "- my team is Blue" in other["conversation"] and "history" not in other
    code, out, _ = cli("runs", "--thread", "pg", "--json", "--db", pg_url)
    assert [(r["id"], r["turn"]) for r in json.loads(out)] == [("pg", 1), ("pg-2", 2), ("pg-3", 3)]
