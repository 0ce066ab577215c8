"""The web page's safety over HTTP: text shown as text, no secret in a page, same-origin POSTs, loopback host
names, the token, assets from the package only, and the command's refusals."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytest.importorskip("starlette", reason="the web page needs the server extra (starlette)")

from starlette.testclient import TestClient  # noqa: E402

from helpers import cli, one_line_error  # noqa: E402
from hierplan.store import RunStore  # noqa: E402
from hierplan.ui.app import create_app  # noqa: E402
from ui_support import ORIGIN, Page, page  # noqa: E402,F401 - page is a fixture


def test_model_and_user_text_is_shown_as_text(page):
    page.fakes.model.default["aggregator"] = "<img src=x onerror=alert(2)> done"
    page.fakes.model.default["llm_step"] = "<script>alert(3)</script>"
    run_id = page.start("<script>alert(1)</script> & more")
    page.wait(run_id, "done")
    for path in (f"/runs/{run_id}", f"/runs/{run_id}/body", "/"):
        r = page.client.get(path)
        assert "<script>alert" not in r.text and "<img src=x" not in r.text
        assert "script-src 'self'" in r.headers["content-security-policy"]
    html = page.client.get(f"/runs/{run_id}").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "<script>" not in page.client.get(f"/runs/{run_id}/picture.svg").text


def test_no_secret_reaches_a_page(page, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-VERYSECRET123")
    page = Page(page.db, page.runner)  # the scrubber reads the key when the app is made
    page.runner.hub  # same runner
    import hierplan.models

    monkeypatch.setattr(hierplan.models, "load_chat_model", lambda *a, **k: (_ for _ in ()).throw(
        RuntimeError("401 for key sk-test-VERYSECRET123")), raising=False)
    page.runner._model = None
    run_id = page.start()
    assert page.wait(run_id, "failed") == "failed"
    html = page.client.get(f"/runs/{run_id}").text + page.client.get("/").text
    assert "VERYSECRET" not in html and "401 for key ***" in html


# --- safe by default -----------------------------------------------------------------------------------

def test_posts_from_another_origin_are_refused(page):
    for headers in ({"origin": "http://evil.example"}, {"origin": ""}, {"referer": "http://evil.example/x"}):
        client = TestClient(create_app(page.db, runner=page.runner), base_url=ORIGIN, headers=headers)
        r = client.post("/runs", data={"task": "x"}, follow_redirects=False)
        assert r.status_code == 403, headers
    same = TestClient(create_app(page.db, runner=page.runner), base_url=ORIGIN, headers={"referer": ORIGIN + "/"})
    assert same.post("/runs", data={"task": "x"}, follow_redirects=False).status_code == 303
    assert RunStore.open(page.db).list()[0].task == "x" and len(RunStore.open(page.db).list()) == 1


def test_loopback_page_refuses_foreign_host_names(page):
    client = TestClient(create_app(page.db, runner=page.runner), base_url="http://rebound.example:8765")
    assert client.get("/").status_code == 403
    assert TestClient(create_app(page.db, runner=page.runner), base_url="http://localhost:8765").get("/").status_code == 200


def test_a_token_is_required_on_every_request(page):
    app = create_app(page.db, runner=page.runner, token="s3cret-token", loopback=False)
    client = TestClient(app, base_url="http://10.0.0.5:8765", headers={"origin": "http://10.0.0.5:8765"})
    for path in ("/", "/static/ui.css", "/runs/x", "/runs/x/events"):
        assert client.get(path).status_code == 401, path
    assert client.get("/?token=wrong").status_code == 401
    assert client.post("/runs", data={"task": "x"}).status_code == 401
    r = client.get("/runs/abc?token=s3cret-token", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/runs/abc" and "httponly" in r.headers["set-cookie"].lower()
    assert client.get("/").status_code == 200  # the cookie now
    bearer = TestClient(app, base_url="http://10.0.0.5:8765", headers={"authorization": "Bearer s3cret-token"})
    assert bearer.get("/").status_code == 200 and "s3cret-token" not in bearer.get("/").text


def test_static_assets_ship_in_the_package(page):
    for name, kind in (("ui.css", "text/css"), ("ui.js", "javascript")):
        r = page.client.get(f"/static/{name}")
        assert r.status_code == 200 and kind in r.headers["content-type"]
    html = page.client.get("/").text
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing from another host


# --- the command ----------------------------------------------------------------------------------------

def test_ui_command_refuses_unsafe_or_unusable_settings():
    code, _, err = cli("ui", "--host", "0.0.0.0")
    assert code == 2
    one_line_error(err, "--token")
    code, _, err = cli("ui", "--host", "0.0.0.0", "--token", "short")
    one_line_error(err, "at least 8")
    code, _, err = cli("ui", "--db", ":memory:")
    one_line_error(err, "outlives")


def test_ui_command_reports_a_taken_port(tmp_path):
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        code, _, err = cli("ui", "--db", str(tmp_path / "u.sqlite"), "--port", str(taken.getsockname()[1]))
    finally:
        taken.close()
    assert code == 2
    one_line_error(err, "cannot listen", "--port")


def test_help_imports_no_web_stack():
    code = ("import sys; from hierplan.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in ('starlette', 'uvicorn', 'jinja2', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
