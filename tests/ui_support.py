"""The web page under test: an app (or a live uvicorn server) on a temp database, with a scripted fake model
that the server loads once; helpers to wait for a run's status."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from fakes import ScriptedChatModel, plan_json
from hierplan.store import RunStore

HOST = "127.0.0.1"
ORIGIN = "http://127.0.0.1:8765"  # what the HTTP tests call the page
WAIT_S = 20.0


@dataclass
class FakeModels:
    """What `load_chat_model` returns in these tests: ``model`` each time; ``loads`` counts the loads."""

    model: ScriptedChatModel
    loads: list[dict[str, Any]] = field(default_factory=list)

    def load(self, model=None, **kwargs):
        self.loads.append({"model": model, **kwargs})
        return self.model


def fake_models(monkeypatch, script: dict | None = None, default: dict | None = None) -> FakeModels:
    import hierplan.models

    defaults = {"planner": plan_json(["llm", "none", "llm"], goal="Answer the question"),
                "aggregator": "The final answer is 42."}
    fakes = FakeModels(ScriptedChatModel(script=script or {}, default={**defaults, **(default or {})}))
    monkeypatch.setattr(hierplan.models, "load_chat_model", fakes.load, raising=False)
    return fakes


def status_of(db: str, run_id: str) -> str:
    store = RunStore.open(db)
    try:
        return store.get(run_id).status
    finally:
        store.close()


def wait_status(db: str, run_id: str, *wanted: str, runner=None, timeout: float = WAIT_S) -> str:
    """Wait until the run has one of ``wanted`` statuses (and, with ``runner``, its thread is done)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = status_of(db, run_id)
        if status in wanted and (runner is None or run_id not in runner.working()):
            return status
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} is {status_of(db, run_id)}, not {wanted}, after {timeout} s")


class Gate:
    """A reply that waits until the test opens the gate: holds a run at a known point."""

    def __init__(self, reply: str):
        self.reply, self.opened, self.entered = reply, threading.Event(), threading.Event()

    def __call__(self, messages) -> str:
        self.entered.set()
        self.opened.wait(WAIT_S)
        return self.reply


class LiveServer:
    """The page on a real uvicorn server in a thread of this process (so the fake model applies)."""

    def __init__(self, db: str, token: str | None = None):
        from hierplan.ui.server import bind, make_server

        self.db = db
        self.server, self.runner = make_server(db, {}, host=HOST, port=0, token=token)
        self.sock = bind(HOST, 0)
        self.url = f"http://{HOST}:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + WAIT_S
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise AssertionError("the ui server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(WAIT_S)


class Page:
    """The page's app in Starlette's test client, its POSTs from the page's own origin."""

    def __init__(self, db: str, runner, **app_kwargs):
        from starlette.testclient import TestClient

        from hierplan.ui.app import create_app

        self.db, self.runner = db, runner
        self.client = TestClient(create_app(db, runner=runner, **app_kwargs), base_url=ORIGIN,
                                 headers={"origin": ORIGIN})

    def post(self, path: str, data: dict | None = None, **kwargs):
        return self.client.post(path, data=data, follow_redirects=False, **kwargs)

    def start(self, task: str = "What is 6 * 7? Show the steps.", **form) -> str:
        """Start a run from the form, its split_writing box ticked unless ``form`` says otherwise: the default
        task names parts ("steps"), so the planner plans it (without split_writing, a piece of writing with parts
        is one piece planned by rule, rules.plan)."""
        r = self.post("/runs", {"task": task, "split_writing": "on", **form})
        assert r.status_code == 303, r.text
        return r.headers["location"].rsplit("/", 1)[1]

    def wait(self, run_id: str, *statuses: str) -> str:
        return wait_status(self.db, run_id, *statuses, runner=self.runner)


@pytest.fixture
def page(tmp_path, monkeypatch):
    fakes = fake_models(monkeypatch)
    db = str(tmp_path / "ui.sqlite")
    from hierplan.ui.runner import Runner

    p = Page(db, Runner(db, {}))
    p.fakes = fakes
    return p
