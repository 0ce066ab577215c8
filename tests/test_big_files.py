"""A 200 MB CSV attached to a run, end to end, in real processes (tests/cli_worker.py, a scripted fake model): the
run answers from the file read in place by the sandbox, the checkpoint database stays small, the process's peak
RSS stays well under the file's size, a run killed with kill -9 resumes without copying the file again, and a
stored file that went missing or changed stops the run with one line naming it. Postgres: a second machine (its
own cache folder) reading the same database finds the files."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import WORKER, events, one_line_error, saved_values, statuses

PLAN = ["llm", "python", "llm", "llm"]  # step 2 reads the file
TASK = "Do the four steps"  # a task with parts: the planner plans it
COUNT = "print(sum(1 for _ in open('data/big.csv', 'rb')) - 1)\n"  # streamed: the program holds a line at a time
BIG_MB = 200


def write_csv(path: Path, megabytes: int) -> int:
    """A CSV of about ``megabytes`` MB, written as one repeated block (fast); its number of rows."""
    rows = b"".join(b"%d,%s,%d.%d,2024-%02d-%02d\n" % (i, (b"north", b"south", b"east", b"")[i % 4], i % 1000, i % 10,
                                                      i % 12 + 1, i % 28 + 1) for i in range(20_000))
    header = b"id,region,amount,day\n"
    repeats = megabytes * 1024 * 1024 // len(rows)
    with open(path, "wb") as f:
        f.write(header)
        for _ in range(repeats):
            f.write(rows)
    return repeats * 20_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("big") / "big.csv"
    return path, write_csv(path, BIG_MB)


def env(tmp: Path, spec: dict, calls: str, **extra: str) -> dict:
    return dict(os.environ, HIERPLAN_WORKER_SPEC=json.dumps(spec), HIERPLAN_WORKER_DIR=str(tmp),
                HIERPLAN_WORKER_CALLS=str(tmp / calls), PYTHONUNBUFFERED="1", **extra)


def run_worker(argv: list[str], environ: dict, tmp: Path, name: str, *, kill_at_pause: bool = False,
               timeout: float = 300) -> tuple[int, str, str, int, float]:
    """The CLI in a subprocess: (exit status or -signal, stdout, stderr, peak RSS in bytes, seconds). With
    ``kill_at_pause`` it is killed with SIGKILL once it writes the pause marker."""
    out, err = tmp / f"{name}.out", tmp / f"{name}.err"
    marker = tmp / "paused"
    marker.unlink(missing_ok=True)
    start = time.monotonic()
    with open(out, "w") as o, open(err, "w") as e:
        proc = subprocess.Popen([sys.executable, WORKER, *argv], env=environ, stdout=o, stderr=e)
    deadline = start + timeout
    while kill_at_pause and not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"{name} never paused: {err.read_text()[-2000:]}")
        time.sleep(0.02)
    if kill_at_pause:
        proc.send_signal(signal.SIGKILL)
    # wait4: the process's own peak RSS (and its sandboxes', which it waited for)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out.read_text(), err.read_text(), usage.ru_maxrss * 1024, time.monotonic() - start


def store_listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every file in a store folder: relative path -> (inode, mtime)."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file():
            st = path.stat()
            found[str(path.relative_to(root))] = (st.st_ino, st.st_mtime_ns)
    return found


@pytest.mark.slow
def test_a_200_mb_csv_is_answered_in_bounded_memory_and_a_killed_run_resumes_without_copying_it(tmp_path, big_csv):
    csv_path, rows = big_csv
    size = csv_path.stat().st_size
    db, run_id = str(tmp_path / "runs.sqlite"), "big"
    # the same run over a 3-row CSV, to the end: what the process takes whatever the file (imports, pandas)
    small = tmp_path / "small" / "big.csv"
    small.parent.mkdir()
    small.write_bytes(b"id,region,amount,day\n1,north,1.5,2024-01-01\n2,,2.5,2024-01-02\n3,east,3.5,2024-01-03\n")
    code, out, err, base_rss, _ = run_worker(["run", "--json", "--db", str(tmp_path / "small.sqlite"), "--file",
                                              str(small), TASK], env(tmp_path, {"plan": PLAN, "code": COUNT}, "c0.json"),
                                             tmp_path, "small")
    assert code == 0 and '"output": "3"' in out, err[-2000:]
    spec = {"plan": PLAN, "code": COUNT, "pause": {"at": "python_step", "step": 2, "seconds": 120}}

    # attached, previewed, then killed with SIGKILL when step 2's program is asked for
    code, out, err, first_rss, _ = run_worker(["run", "--json", "--db", db, "--run-id", run_id, "--file",
                                               str(csv_path), TASK], env(tmp_path, spec, "c1.json"), tmp_path,
                                              "first", kill_at_pause=True)
    assert code == -signal.SIGKILL, err[-2000:]
    assert statuses(db)[run_id] == "interrupted"
    [f] = saved_values(db, run_id)["files"]
    assert set(f) == {"name", "size", "sha256", "media_type", "preview"} and f["size"] == size
    assert f["preview"].startswith(f"CSV, {rows:,} rows; columns: id (int), region (text), amount (float), day (text)")
    assert f"missing values: region {rows // 4:,}" in f["preview"]
    store = Path(db + ".files")
    stored = store / f["sha256"][:2] / f["sha256"]
    assert stored.stat().st_size == size
    before = store_listing(store)
    assert list(before) == [str(stored.relative_to(store))]  # the one file, nothing half-copied beside it

    # resumed in a fresh process: step 2's program reads the stored file in place and counts its rows
    code, out, err, resumed_rss, _ = run_worker(["resume", run_id, "--json", "--db", db],
                                                env(tmp_path, {"plan": PLAN, "code": COUNT}, "c2.json"),
                                                tmp_path, "resumed")
    assert code == 0, err[-2000:]
    assert events(out)[-1]["status"] == "done"
    values = saved_values(db, run_id)
    assert values["results"][1]["output"] == str(rows)
    assert store_listing(store) == before  # not copied again: same inode, same mtime, nothing new written
    with open(csv_path, "rb") as fh:
        assert hashlib.file_digest(fh, "sha256").hexdigest() == f["sha256"]
    # the checkpoints hold records, not bytes
    checkpoints = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
    assert checkpoints < 2 * 1024 * 1024, checkpoints
    # a 200 MB file adds less than half its size to any process's peak (a preview chunk, buffers): never the file
    for rss in (first_rss, resumed_rss):
        assert rss - base_rss < size // 2, (base_rss, first_rss, resumed_rss, size)


def test_a_stored_file_missing_or_changed_stops_the_resume_with_one_line(tmp_path):
    csv_path = tmp_path / "sales.csv"
    csv_path.write_bytes(b"region,amount\nnorth,10\nsouth,20\n")
    db, run_id = str(tmp_path / "runs.sqlite"), "gone"
    spec = {"plan": PLAN, "code": "print(open('data/sales.csv').read().count('\\n'))",
            "pause": {"at": "python_step", "step": 2, "seconds": 120}}
    code, _, err, _, _ = run_worker(["run", "--json", "--db", db, "--run-id", run_id, "--file", str(csv_path), TASK],
                                    env(tmp_path, spec, "c1.json"), tmp_path, "first", kill_at_pause=True)
    assert code == -signal.SIGKILL, err
    [f] = saved_values(db, run_id)["files"]
    stored = Path(db + ".files") / f["sha256"][:2] / f["sha256"]

    os.chmod(stored, 0o644)
    stored.write_bytes(b"region,amount\nnorth,99\n")  # changed behind the run's back
    code, out, err, _, _ = run_worker(["resume", run_id, "--db", db], env(tmp_path, {"plan": PLAN}, "c2.json"),
                                      tmp_path, "changed")
    assert code == 1 and out == ""
    one_line_error(err, f"run {run_id}: file sales.csv", "no longer matches its sha256")
    assert statuses(db)[run_id] == "interrupted"  # left as it was, to be resumed once the file is back

    stored.unlink()
    code, out, err, _, _ = run_worker(["resume", run_id, "--db", db], env(tmp_path, {"plan": PLAN}, "c3.json"),
                                      tmp_path, "missing")
    assert code == 1
    one_line_error(err, f"run {run_id}: file sales.csv", "is missing from the file store")
    assert not (tmp_path / "c2.json").exists() and not (tmp_path / "c3.json").exists()  # no model was asked


def test_a_run_that_loses_its_file_while_it_works_fails_with_one_line(tmp_path, models):
    """The Python API's resume has no run service to check first: the step that needs the file says it."""
    from fakes import ScriptedChatModel, plan_json
    from hierplan import build_graph
    from hierplan.errors import HierplanError
    from hierplan.store.files import LocalFileStore
    from hierplan.tools.files import load_files

    store = LocalFileStore(str(tmp_path / "store"))
    csv_path = tmp_path / "sales.csv"
    csv_path.write_bytes(b"region,amount\nnorth,10\n")
    files = load_files([csv_path], store)
    Path(store.path_of(files[0]["sha256"])).unlink()
    model = ScriptedChatModel(script={"planner": [plan_json(["python", "llm"])], "python_step": ["print(1)"]})
    graph = build_graph(model, constrain=False, file_store=store)
    with pytest.raises(HierplanError, match=r"^file sales\.csv \(sha256 [0-9a-f]{12}…\) is missing from the file store"):
        graph.invoke({"task": "Count it in steps", "files": files}, {"configurable": {"thread_id": "lost"}})
