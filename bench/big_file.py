"""A big CSV attached to a run: how long attaching takes, how long a run over it takes with a scripted model (a
Python step that counts its rows in the sandbox), the peak RSS of each process, and the checkpoint database's
size, against the same run over a 3-row CSV.

    python bench/big_file.py [--mb 200] [--doc]

Each figure comes from a fresh process (tests/cli_worker.py, the `hierplan` CLI with a scripted fake model), its
peak RSS from wait4 (its sandboxes included). ``--doc`` rewrites the "A big file attached to a run" section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from report import machine_line, write_section  # noqa: E402
from test_big_files import COUNT, PLAN, TASK, write_csv  # noqa: E402

WORKER = str(Path(__file__).resolve().parent.parent / "tests" / "cli_worker.py")
ATTACH = """
import json, resource, sys, time
from hierplan.store import open_file_store
from hierplan.tools.files import load_files
start = time.perf_counter()
[record] = load_files([sys.argv[1]], open_file_store(sys.argv[2]))
print(json.dumps({"seconds": time.perf_counter() - start, "preview": record["preview"]}))
"""
TITLE = "A big file attached to a run"


def timed(argv: list[str], env: dict) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in bytes, stdout) of one process."""
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.monotonic() - start
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv[:4])} ... failed: {text[-2000:]}")
    return seconds, usage.ru_maxrss * 1024, text


def measure(csv: Path, folder: Path, label: str) -> dict:
    env = dict(os.environ, HIERPLAN_WORKER_SPEC=json.dumps({"plan": PLAN, "code": COUNT}), PYTHONUNBUFFERED="1")
    attach_s, attach_rss, out = timed([sys.executable, "-c", ATTACH, str(csv), str(folder / f"{label}-attach.sqlite")],
                                      env)
    attach_inner = json.loads(out)["seconds"]
    db = folder / f"{label}.sqlite"
    run_s, run_rss, out = timed([sys.executable, WORKER, "run", "--json", "--db", str(db), "--file", str(csv), TASK],
                                env)
    answer = next(json.loads(line) for line in out.splitlines() if '"step_id": 2' in line and "step_finished" in line)
    size = sum(p.stat().st_size for p in folder.glob(f"{label}.sqlite*"))
    return {"file": csv.stat().st_size, "attach_s": attach_inner, "attach_process_s": attach_s,
            "attach_rss": attach_rss, "run_s": run_s, "run_rss": run_rss, "db": size, "output": answer.get("output")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=200, help="the CSV's size in MB (default 200)")
    parser.add_argument("--doc", action="store_true", help="write the section in docs/benchmarks.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hierplan-bigfile-") as tmp:
        folder = Path(tmp)
        small = folder / "small" / "big.csv"
        small.parent.mkdir()
        small.write_bytes(b"id,region,amount,day\n1,north,1.5,2024-01-01\n2,,2.5,2024-01-02\n3,east,3.5,2024-01-03\n")
        big = folder / "big.csv"
        start = time.perf_counter()
        rows = write_csv(big, args.mb)
        generated = time.perf_counter() - start
        base = measure(small, folder, "small")
        got = measure(big, folder, "big")
    assert got["output"] == str(rows), got
    mib = 1024 * 1024
    body = f"""Command: `python bench/big_file.py --mb {args.mb}` — a {got['file'] / mib:,.0f} MiB CSV ({rows:,} rows, 4
columns, written in {generated:.1f} s) attached to a run, against the same run over a 3-row CSV. Attach: `load_files`
into a SQLite database's file store (copied by streaming and hashed, then previewed by pandas in chunks), in a
fresh process. Run: `hierplan run --file` with a scripted model (tests/cli_worker.py) whose Python step counts the
rows in the sandbox (`./data/big.csv`, bind-mounted read-only: no copy), to the end; it attaches the file too.
Peak RSS: each process's own, from wait4, its sandboxes included.
Machine: {machine_line()}.

| | 3-row CSV | {got['file'] / mib:,.0f} MiB CSV |
|---|---:|---:|
| seconds to attach (copy, sha256, preview) | {base['attach_s']:.2f} | {got['attach_s']:.2f} |
| peak RSS of the attaching process | {base['attach_rss'] / mib:,.0f} MiB | {got['attach_rss'] / mib:,.0f} MiB |
| seconds to answer (the whole run, process start to exit) | {base['run_s']:.2f} | {got['run_s']:.2f} |
| peak RSS of the run's process | {base['run_rss'] / mib:,.0f} MiB | {got['run_rss'] / mib:,.0f} MiB |
| checkpoint database (with its WAL) | {base['db'] / 1024:,.0f} KiB | {got['db'] / 1024:,.0f} KiB |

The step's program printed {got['output']}, the file's row count.
"""
    print(body)
    if args.doc:
        write_section(TITLE, body)


if __name__ == "__main__":
    main()
