"""The Python sandbox for ordinary code: results, files, errors, limits, levels, status, CLI."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import threading
import warnings

import pytest

from hierplan.errors import IsolationError
from hierplan.tools import ExecutionResult, SandboxLimits, run_python, sandbox_status
from hierplan.tools.sandbox import api
from hierplan.tools.sandbox.probe import probe
from hierplan.tools.sandbox.runner import BASE_ENV

HAVE_BWRAP = probe().available["bwrap"]
needs_bwrap = pytest.mark.skipif(not HAVE_BWRAP, reason=f"bwrap unavailable: {probe().reasons['bwrap']}")


def test_numpy_pandas_and_printing():
    code = """
import math, json, statistics
import numpy as np
import pandas as pd
df = pd.DataFrame({"x": np.arange(10), "y": np.arange(10) ** 2})
print(json.dumps({"sum_y": int(df.y.sum()), "mean": statistics.mean(range(5)), "pi": round(math.pi, 3)}))
print(df.describe().loc["max", "y"])
print("héllo ✓")
"""
    res = run_python(code)
    assert isinstance(res, ExecutionResult)
    assert res.ok and res.exit_reason == "ok" and res.returncode == 0 and res.error is None
    lines = res.stdout.splitlines()
    assert json.loads(lines[0]) == {"sum_y": 285, "mean": 2, "pi": 3.142}
    assert lines[1] == "81.0" and lines[2] == "héllo ✓"
    assert res.duration_s > 0
    assert {"rlimits", "env"} <= set(res.isolation)


def test_files_are_written_into_the_cwd():
    res = run_python("import os\nprint(open('data.csv').read().strip())\nprint(open('sub/b.bin','rb').read())\n"
                     "open('out.txt','w').write('ok'); print(sorted(os.listdir('.')))",
                     files={"data.csv": "a,b\n1,2\n", "sub/b.bin": b"\x00\x01"})
    assert res.ok, res.error
    assert res.stdout.splitlines() == ["a,b", "1,2", "b'\\x00\\x01'", "['data.csv', 'out.txt', 'sub']"]


@pytest.mark.parametrize("name", ["/etc/x", "../x", "a/../../x", "", "."])
def test_file_names_must_stay_in_scratch(name):
    with pytest.raises(ValueError):
        run_python("pass", files={name: "x"})


def test_code_must_be_text():
    with pytest.raises(TypeError):
        run_python(b"print(1)")  # type: ignore[arg-type]


def test_programs_before_the_code_set_its_names_silently_and_a_failing_one_is_skipped():
    before = ["cost = 6\nprint('hidden')", "paid = 10\nprint(paid)\nraise SystemExit(3)", "x = 1 / 0", "y = 2"]
    res = run_python("change = paid - cost\nprint(change, y)", before=before)
    assert res.ok and res.stdout == "4 2\n", res.error
    with pytest.raises(TypeError):
        run_python("pass", before=[b"x = 1"])  # type: ignore[list-item]


def test_an_error_after_programs_before_keeps_the_codes_own_lines():
    res = run_python("a = cost\nb = a + missing\nprint(b)", before=["cost = 6\nz = 1\nw = 2"])
    assert not res.ok
    assert 'File "<code>", line 2' in res.error and "b = a + missing" in res.error
    assert res.error.endswith("NameError: name 'missing' is not defined")


@pytest.mark.skipif(not (probe().available["bwrap"] or probe().available["landlock"]),
                    reason="neither bwrap nor Landlock confines writes on this machine")
def test_an_error_raised_inside_a_library_names_the_programs_line_it_failed_at():
    # pandas' own frames fill a traceback's last lines: the program's line must still be in the error
    res = run_python("import pandas as pd\ntable = pd.DataFrame({'a': [1, 2]})\ntotal = table['b'].sum()\n")
    assert not res.ok and res.exit_reason == "error"
    lines = res.error.splitlines()
    assert lines[0] == '  File "<code>", line 3, in <module>' and lines[1].strip() == "total = table['b'].sum()"
    assert lines[-1] == "KeyError: 'b'" and "pandas" in res.error


def test_an_error_in_the_programs_own_line_is_its_last_lines_as_python_prints_them():
    res = run_python("x = (1\n")
    assert res.error.splitlines() == ['File "<code>", line 1', "    x = (1", "        ^",
                                      "SyntaxError: '(' was never closed"]


def test_programs_before_the_code_are_confined_like_it(tmp_path):
    """They run in the sandboxed child with every layer in force: a write to a host folder does not land
    (with the rlimits layer alone it does, so this fails if they ever ran outside the confinement)."""
    target = tmp_path / "escaped.txt"
    layers = [name for name in ("bwrap", "landlock") if probe().available[name]] + ["rlimits", "env"]
    res = run_python("print('ran')", before=[f"open({str(target)!r}, 'w').write('x')"], layers=layers)
    assert res.ok and res.stdout == "ran\n"
    assert not target.exists()


def test_exception_is_a_result_not_a_raise():
    res = run_python("def f():\n    return 1 / 0\nf()")
    assert not res.ok and res.exit_reason == "error" and res.returncode == 1
    assert res.error.splitlines()[-1] == "ZeroDivisionError: division by zero"
    assert "launcher" not in res.stderr  # the traceback shows only the user's frames
    assert "return 1 / 0" in res.stderr


def test_sys_exit_codes():
    assert run_python("import sys; sys.exit(0)").exit_reason == "ok"
    res = run_python("import sys; sys.exit(3)")
    assert res.exit_reason == "error" and res.returncode == 3


def test_environment_is_an_allow_list(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    res = run_python("import os, json; print(json.dumps(dict(os.environ)))")
    env = json.loads(res.stdout)
    assert set(env) - {"PWD"} == set(BASE_ENV) | {"HOME", "TMPDIR", "MPLCONFIGDIR"}  # bwrap sets PWD
    assert env["OPENBLAS_NUM_THREADS"] == "1"


def test_only_allowed_packages_import():
    res = run_python("import torch")
    assert res.exit_reason == "error" and "ModuleNotFoundError" in res.error


def test_file_size_limit():
    res = run_python("open('big', 'wb').write(b'x' * (2 << 20))", limits=SandboxLimits(file_size=1 << 20))
    assert res.exit_reason == "error" and "File too large" in res.error


@needs_bwrap
def test_scratch_is_size_limited_under_bwrap():
    res = run_python("open('big', 'wb').write(b'x' * (4 << 20))",
                     limits=SandboxLimits(scratch_bytes=1 << 20, file_size=64 << 20))
    assert res.exit_reason == "error" and "No space left" in res.error


def test_limits_are_validated():
    with pytest.raises(ValueError):
        SandboxLimits(wall_seconds=0)
    assert SandboxLimits().memory_bytes == 1 << 30 and SandboxLimits().output_bytes == 1 << 20


def test_concurrent_runs():
    results: list[ExecutionResult] = []
    threads = [threading.Thread(target=lambda i=i: results.append(run_python(f"print({i} * 2)"))) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.stdout for r in results) == ["0\n", "2\n", "4\n", "6\n"]


@needs_bwrap
def test_full_level_when_available():
    if probe().available["landlock"] and probe().available["seccomp"]:
        res = run_python("print(1)", require_isolation="full")
        assert res.level == "full" and set(res.isolation) == {"bwrap", "landlock", "seccomp", "rlimits", "uid", "env"}


def test_requiring_more_than_requested_layers_raises():
    with pytest.raises(IsolationError, match="'full' required"):
        run_python("print(1)", layers=["rlimits", "env"], require_isolation="full")
    assert run_python("print(1)", layers=["rlimits", "env"], require_isolation="none").level == "none"


@pytest.fixture
def no_bwrap(monkeypatch):
    """Pretend bwrap is missing on this machine."""
    real = probe()
    fake = dataclasses.replace(real, available={**real.available, "bwrap": False},
                               reasons={**real.reasons, "bwrap": "bwrap not found on PATH (test)"})
    monkeypatch.setattr(api, "probe", lambda: fake)
    monkeypatch.setattr("hierplan.tools.sandbox.status.probe", lambda: fake)
    monkeypatch.setattr(api, "_warned", set())
    return fake


def test_missing_layer_warns_once_and_full_raises(no_bwrap):
    with pytest.warns(RuntimeWarning) as record:
        res = run_python("print(1)")
    messages = [str(w.message) for w in record]
    assert any("'bwrap' is not available: bwrap not found on PATH" in m for m in messages), messages
    assert res.ok and "bwrap" not in res.isolation and res.level != "full"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_python("print(2)")  # second time: no warning
    with pytest.raises(IsolationError, match="bwrap: bwrap not found"):
        run_python("print(1)", require_isolation="full")


def test_status_lists_every_layer():
    st = sandbox_status()
    assert [entry.name for entry in st.layers] == ["bwrap", "landlock", "seccomp", "rlimits", "uid", "env"]
    assert st.layer("rlimits").active and st.layer("env").active
    for entry in st.layers:
        assert entry.active or entry.reason, entry


def _cli(argv):
    from hierplan.cli import sandbox_cmd

    parser = argparse.ArgumentParser(prog="hierplan")
    sandbox_cmd.add_parser(parser.add_subparsers())
    ns = parser.parse_args(argv)
    return ns.func(ns)


def test_cli_json(capsys):
    assert _cli(["sandbox", "--json", "--require-isolation", "none"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["level"] in ("none", "basic", "full") and len(data["layers"]) == 6


def test_cli_table(capsys):
    assert _cli(["sandbox"]) == 0
    out = capsys.readouterr().out
    assert "landlock" in out and "seccomp" in out


def test_cli_require_isolation_fails_with_one_line(no_bwrap, capsys):
    assert _cli(["sandbox", "--json", "--require-isolation", "full"]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("error: sandbox isolation 'full' is not available") and "bwrap" in out[-1]


def test_site_dirs_of_dead_processes_are_swept(tmp_path):
    import subprocess
    import sys

    from hierplan.tools.sandbox.pyenv import SITE_PREFIX, sweep_stale_site_dirs

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)  # exited: its pid is free (reuse within this test is very unlikely)
    for pid in (dead_pid, os.getpid(), os.getppid()):
        (tmp_path / f"{SITE_PREFIX}{pid}").mkdir()
        (tmp_path / f"{SITE_PREFIX}{pid}" / "numpy").symlink_to(tmp_path)
    (tmp_path / f"{SITE_PREFIX}abc123").mkdir()  # a mkdtemp name mid-rename: not ours to judge
    assert sweep_stale_site_dirs(str(tmp_path)) == [str(tmp_path / f"{SITE_PREFIX}{dead_pid}")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"{SITE_PREFIX}{os.getpid()}", f"{SITE_PREFIX}{os.getppid()}", f"{SITE_PREFIX}abc123"])
    assert tmp_path.exists()  # the symlink was removed, not what it points to
