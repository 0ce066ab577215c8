"""The light install: `pip install hierplan`, no extras, runs a model on an OpenAI-compatible server without torch,
transformers or llama.cpp; a local model or a PNG asks, in one line, for the extra that brings its engine.

Twice: here, with the extras' packages hidden from import (tests/without_extras.py: fast), and in a clean venv
that pip installs this checkout into with no extra (slow: a minute or two of pip). The server is llama.cpp's, run
by this venv (tests/llama_server.py) on 127.0.0.1; the light hierplan talks to it over HTTP only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hierplan.store import RunStore
from llama_server import MODEL_ALIAS, llama_server, missing
from needs import unavailable

ROOT = Path(__file__).resolve().parents[1]
WITHOUT_EXTRAS = Path(__file__).with_name("without_extras.py")
TASK = "A pen costs 3 dollars. How much do 7 pens cost?"
# Short replies: the run's shape is under test, not the 135M's arithmetic.
RUN_FLAGS = ["--max-new-tokens", "48", "--seed", "1"]
# What a light install must not have (pyproject.toml's local and hf extras bring them).
ENGINE_MODULES = ("torch", "transformers", "xllamacpp", "llguidance", "gguf", "accelerate", "langchain_huggingface",
                  "pygraphviz")
PIP_S = 900
NETWORK_TROUBLE = ("NewConnectionError", "Network is unreachable", "Temporary failure in name resolution",
                   "ConnectTimeout", "Read timed out", "No matching distribution found")


def hidden(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """`hierplan ARGS` in this venv with the extras' packages hidden."""
    return subprocess.run([sys.executable, str(WITHOUT_EXTRAS), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def error_line(done: subprocess.CompletedProcess) -> str:
    """The one line a user error is, and nothing else (no traceback)."""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hierplan: error: "), done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if reason := missing():
        unavailable(reason)
    running = llama_server(tmp_path_factory.mktemp("llama"))
    yield running
    running.stop()


def test_help_graph_and_models_need_no_extra(tmp_path):
    for args in (["--help"], ["graph"], ["run", "--help"]):
        done = hidden(*args, cwd=tmp_path)
        assert done.returncode == 0 and done.stdout, (args, done.stderr)
    listed = hidden("models", cwd=tmp_path)
    assert listed.returncode == 0 and "qwen2.5-coder-1.5b" in listed.stdout
    assert "not installed: pip install 'hierplan[local]'" in listed.stdout
    rows = [json.loads(line) for line in hidden("models", "--json", cwd=tmp_path).stdout.splitlines()]
    assert rows and not any(row["engine_installed"] for row in rows)


@pytest.mark.parametrize("args, says", [
    ([], "the default model (qwen2.5-coder-1.5b) needs the local engine (llama.cpp), which is not installed "
         "(xllamacpp): pip install 'hierplan[local]'"),
    (["--model", "qwen2.5-coder-0.5b"], "--model qwen2.5-coder-0.5b needs the local engine (llama.cpp)"),
    (["--model", "smollm2-135m", "--engine", "transformers"],
     "--model smollm2-135m needs the transformers engine, which is not installed (torch, transformers, "
     "langchain_huggingface, llguidance): pip install 'hierplan[hf]'"),
    (["--model", "FOLDER"], "needs the transformers engine"),
    # a remote planner does not excuse a local executor
    (["--planner-model", "openai:big", "--model", "qwen2.5-coder-0.5b"], "pip install 'hierplan[local]'"),
    # a local model with a server's address: that mistake first (installing the engine would not fix it)
    (["--base-url", "http://127.0.0.1:1/v1"], "--base-url is for models on a server (openai:NAME)"),
])
def test_a_local_model_names_the_extra_it_needs_before_the_run_starts(tmp_path, args, says):
    folder = tmp_path / "a-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    args = [str(folder) if a == "FOLDER" else a for a in args]
    db = tmp_path / "runs.sqlite"
    done = hidden("run", TASK, "--db", str(db), *args, cwd=tmp_path)
    line = error_line(done)
    assert says in line and "openai:NAME" in line
    assert done.returncode == (2 if "--base-url" in args else 1)  # a usage error, or a model that cannot load
    assert not db.exists()  # refused before any run was recorded: nothing to resume


def test_the_page_checks_its_model_before_it_serves(tmp_path):
    done = hidden("ui", "--db", str(tmp_path / "runs.sqlite"), "--port", "0", cwd=tmp_path, timeout=60)
    assert done.returncode == 1 and "pip install 'hierplan[local]'" in error_line(done)


def test_pictures_name_their_extra(tmp_path):
    done = hidden("graph", "--png", str(tmp_path / "graph.png"), cwd=tmp_path)
    assert done.returncode == 1 and not (tmp_path / "graph.png").exists()
    assert "pip install 'hierplan[pictures]'" in error_line(done)


def _check_run(db: Path, run_id: str) -> None:
    record = RunStore.open(str(db)).get(run_id)
    assert record.status == "done", record.error
    assert record.model["name"] == MODEL_ALIAS


@pytest.mark.real_model
def test_a_model_on_a_server_runs_without_the_extras(server, tmp_path):
    db = tmp_path / "runs.sqlite"
    done = hidden("run", TASK, "--model", f"openai:{MODEL_ALIAS}", "--base-url", server.base_url, "--db", str(db),
                  "--run-id", "light", *RUN_FLAGS, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    _check_run(db, "light")


# ---------------------------------------------------------------- the lock, and a clean venv with no extras


def _declared(extras: set[str]) -> list:
    """pyproject.toml's requirements for hierplan with ``extras``, its own extras (hierplan[...]) expanded."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    out, seen, todo = [], set(), [None, *extras]
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in project["dependencies"] if extra is None else project["optional-dependencies"][extra]:
            req = Requirement(text)
            if req.name == project["name"]:
                todo.extend(req.extras)
            elif req.marker is None or req.marker.evaluate({"extra": extra or ""}):
                out.append(req)
    return out


def test_the_lock_pins_every_declared_dependency_at_an_admitted_version():
    """`make setup` installs requirements.lock: a dependency added to pyproject.toml without `make lock` fails
    here (setup still installs it, unpinned). torch is the Makefile's pin, not the lock's."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.split("#")[0].strip():
            req = Requirement(line.split("#")[0])
            (spec,) = req.specifier
            assert spec.operator == "==", line
            pins[canonicalize_name(req.name)] = spec.version
    declared = _declared({"test"})
    assert {canonicalize_name(r.name) for r in declared} >= {"xllamacpp", "transformers", "pygraphviz", "pytest"}
    stale = [str(r) for r in declared if canonicalize_name(r.name) != "torch"
             and not r.specifier.contains(pins.get(canonicalize_name(r.name), "0.0.0.dev0"), prereleases=True)]
    assert not stale, f"requirements.lock lacks or mis-pins {stale}: run `make lock`"
    torch = re.search(r"^TORCH := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert torch and {str(r) for r in declared if r.name == "torch"} == {torch.group(1)}  # one pin, two places


def _source_copy(where: Path) -> Path:
    """What pip needs to build hierplan, copied: the build writes build/ and *.egg-info beside its sources."""
    copy = where / "hierplan-src"
    copy.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(ROOT / "hierplan", copy / "hierplan", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _clean_env() -> dict[str, str]:
    """This environment without what would let the venv see this checkout or this venv."""
    return {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}


@pytest.fixture(scope="module")
def light_venv(tmp_path_factory) -> Path:
    """A new venv with `pip install <this checkout>`, no extras: the bin folder. pip takes the versions the tests
    ran on (-c requirements.lock), so it installs from its cache where `make setup` filled it."""
    where = tmp_path_factory.mktemp("light")
    venv = where / "venv"
    # This venv's pip installs into it (--python): no pip of its own to set up; no .pyc compiled ahead of use.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120,
                   env=_clean_env())
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
           "--no-compile", "--retries", "1", "--timeout", "30", "-c", str(ROOT / "requirements.lock"),
           str(_source_copy(where))]
    done = subprocess.run(pip, capture_output=True, text=True, timeout=PIP_S, env=_clean_env())
    if done.returncode != 0:
        output = done.stdout + done.stderr
        if any(sign in output for sign in NETWORK_TROUBLE):
            unavailable(f"pip could not reach the package registry for the clean venv: {output.strip()[-300:]}")
        pytest.fail(f"pip install of this checkout, no extras, failed: {output[-3000:]}")
    return venv / "bin"


@pytest.mark.slow
@pytest.mark.real_model
def test_a_clean_venv_without_extras_has_no_engine_and_runs_a_model_on_a_server(light_venv, server, tmp_path):
    probe = ("import importlib.util, json, sys; "
             f"print(json.dumps([m for m in {list(ENGINE_MODULES)!r} if importlib.util.find_spec(m)]))")
    found = subprocess.run([str(light_venv / "python"), "-c", probe], capture_output=True, text=True, timeout=60,
                           env=_clean_env(), cwd=tmp_path, check=True)
    assert json.loads(found.stdout) == []

    hierplan = str(light_venv / "hierplan")
    db = tmp_path / "runs.sqlite"
    env = {**_clean_env(), "OPENAI_BASE_URL": server.base_url}  # the standard variable, as a user sets it
    done = subprocess.run([hierplan, "run", TASK, "--model", f"openai:{MODEL_ALIAS}", "--db", str(db), "--run-id",
                           "clean", *RUN_FLAGS], capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    _check_run(db, "clean")
    shown = subprocess.run([hierplan, "show", "clean", "--json", "--db", str(db)], capture_output=True, text=True,
                           timeout=120, env=env, cwd=tmp_path)
    assert shown.returncode == 0 and json.loads(shown.stdout)["state"]["final"], shown.stderr

    refused = subprocess.run([hierplan, "run", TASK, "--db", str(tmp_path / "other.sqlite")], capture_output=True,
                             text=True, timeout=120, env=env, cwd=tmp_path)
    assert refused.returncode == 1
    assert "pip install 'hierplan[local]'" in error_line(refused)
