"""Files in and out on the web page: the start form's uploads reach the run as `hierplan run --file` gives them
(checked, sha256, streamed into the file store, read by a Python step in the real sandbox), and what a Python
step saved under out/ is shown on the run's page (images inline, other files as downloads) and served from the
store by its own route."""

from __future__ import annotations

import hashlib
import html as htmllib
import os
import re
import tempfile

import pytest

pytest.importorskip("starlette", reason="the web page needs the server extra (starlette)")

from starlette.testclient import TestClient  # noqa: E402

from fakes import plan_json  # noqa: E402
from helpers import CSV_CHART_PROGRAM, saved_values  # noqa: E402
from hierplan.store import RunStore, open_file_store  # noqa: E402
from hierplan.ui.app import create_app  # noqa: E402
from hierplan.ui.uploads import upload_limit  # noqa: E402
from ui_support import ORIGIN, page  # noqa: E402,F401 - page is a fixture

SALES = b"region,amount\nnorth,10\nsouth,20\neast,30\n"

PROGRAM = CSV_CHART_PROGRAM
# A step that saves what must never run as a page of this origin: an SVG and an HTML file holding scripts.
HOSTILE = """```python
open("out/evil.svg", "w").write('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
open("out/page.html", "w").write("<script>alert(2)</script>")
print(2)
```"""


@pytest.fixture
def upload_dirs(monkeypatch):
    """Every private folder the page writes uploads to (to check each is gone afterwards)."""
    made: list[str] = []
    real = tempfile.mkdtemp

    def mkdtemp(*args, **kwargs):
        folder = real(*args, **kwargs)
        if str(kwargs.get("prefix", "")).startswith("hierplan-upload-"):
            made.append(folder)
        return folder

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    return made


def script_python_run(page, program: str = PROGRAM) -> None:
    page.fakes.model.script.update({"planner": [plan_json(["python", "llm", "llm"], goal="Sum the sales")],
                                    "python_step": [program]})
    page.fakes.model.default["aggregator"] = "The total is 60; see out/chart.png."


def start_with(page, files, task: str = "Sum the amounts in sales.csv and draw a chart", **form):
    return page.post("/runs", {"task": task, "no_constrain": "on", **form}, files=files)


def browser_post(page, task: str, files: list[tuple[str, bytes]], **fields: str):
    """The start form encoded as a browser encodes it: a file input left empty is a part with filename=""
    (which the test client never writes)."""
    boundary = "----hierplanTestBoundary7MA4YWxkTrZu0gW"
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in {"task": task, **fields}.items()]
    for name, data in files:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
                     "Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return page.client.post("/runs", content=body, follow_redirects=False,
                            headers={"content-type": f"multipart/form-data; boundary={boundary}"})


def error_line(html: str) -> str:
    """The form's one error line, as text."""
    found = re.search(r'<p class="error" id="error">(.*?)</p>', html, re.S)
    assert found, html
    assert "\n" not in found.group(1) and "Traceback" not in html
    return htmllib.unescape(found.group(1))


def test_the_form_is_multipart_with_a_file_field(page, monkeypatch):
    monkeypatch.delenv("HIERPLAN_MAX_FILE_MB", raising=False)
    monkeypatch.delenv("HIERPLAN_MAX_FILES_MB", raising=False)
    html = page.client.get("/").text
    assert '<form method="post" action="/runs" id="new-run" enctype="multipart/form-data">' in html
    assert '<input type="file" name="files" id="files" multiple>' in html
    assert "up to 1,024.0 MiB each, 4,096.0 MiB together" in html


def test_a_50_mb_upload_is_streamed_into_the_store_and_the_page_shows_its_preview(page, upload_dirs, monkeypatch):
    from starlette.datastructures import UploadFile

    from hierplan.ui.uploads import COPY_CHUNK_BYTES

    reads: list[int] = []
    real_read = UploadFile.read

    async def read(self, size: int = -1):  # how the page reads an upload: in chunks, never whole
        reads.append(size)
        return await real_read(self, size)

    monkeypatch.setattr(UploadFile, "read", read)
    rows = b"".join(b"%d,north,%d.5\n" % (i, i % 97) for i in range(1000))
    block = rows * 8
    data = b"id,region,amount\n" + block * (50 * 1024 * 1024 // len(block))
    page.fakes.model.script.update({"planner": [plan_json(["python", "llm"], goal="Count the rows")],
                                    "python_step": ["print(sum(1 for _ in open('data/big.csv')) - 1)"]})
    page.fakes.model.default["aggregator"] = "Counted."
    r = start_with(page, [("files", ("big.csv", data, "text/csv"))], task="How many rows does big.csv have, in steps?",
                   sequential="on")
    assert r.status_code == 303, r.text[-500:]
    run_id = r.headers["location"].rsplit("/", 1)[1]
    assert page.wait(run_id, "done", "failed") == "done"
    values = saved_values(page.db, run_id)
    [f] = values["files"]
    rows_in = data.count(b"\n") - 1
    assert f["size"] == len(data) and f["preview"].startswith(f"CSV, {rows_in:,} rows; columns: id (int)")
    assert values["results"][0]["output"] == str(rows_in)
    stored = open_file_store(page.db).local_path(f["sha256"], "big.csv")
    assert os.path.getsize(stored) == len(data) and os.path.getsize(page.db) < 2 * 1024 * 1024
    html = page.client.get(f"/runs/{run_id}").text
    assert f"CSV, {rows_in:,} rows; columns: id (int), region (text), amount (float)" in html
    # Starlette spools the part to disk past 1 MiB; the page copies it on a chunk at a time
    assert len(reads) > 50 and all(0 < n <= COPY_CHUNK_BYTES for n in reads)
    assert upload_dirs and not any(os.path.exists(d) for d in upload_dirs)


def test_an_uploaded_csv_reaches_the_python_step_and_its_chart_and_table_show_on_the_run_page(page, upload_dirs):
    script_python_run(page)
    r = start_with(page, [("files", ("sales.csv", SALES, "text/csv"))], sequential="on", seed="3")
    assert r.status_code == 303, r.text
    run_id = r.headers["location"].rsplit("/", 1)[1]
    assert page.wait(run_id, "done", "failed") == "done"

    # the run has the file as `--file` gives it: name, size, sha256, preview, its bytes in the file store
    values = saved_values(page.db, run_id)
    [f] = values["files"]
    assert (f["name"], f["size"], f["sha256"]) == ("sales.csv", len(SALES), hashlib.sha256(SALES).hexdigest())
    assert "data" not in f and f["preview"].startswith("CSV, 3 rows; columns: region (text)")
    store = open_file_store(page.db)
    assert store.read_bytes(f["sha256"], "sales.csv") == SALES
    options = RunStore.open(page.db).get(run_id).options
    assert options["parallel"] is False and options["seed"] == 3
    # the Python step read it in the real sandbox, and saved a chart and a table
    step = values["results"][0]
    assert step["ok"] and step["output"] == "60"
    assert {a["name"] for a in step["artifacts"]} == {"chart.png", "sums.csv"}
    python_prompt = next(c for c in page.fakes.model.calls if c["node"] == "python_step")["messages"][-1].content
    assert f"sales.csv ({len(SALES)} bytes): CSV, 3 rows" in python_prompt
    assert upload_dirs and not any(os.path.exists(d) for d in upload_dirs)  # the upload folder is gone

    html = page.client.get(f"/runs/{run_id}").text
    base = f"/runs/{run_id}/artifacts/1"
    assert f'<img src="{base}/chart.png" alt="out/chart.png, saved by step 1">' in html
    assert f'<a href="{base}/sums.csv" download>saved out/sums.csv (text/csv, 9 bytes)</a>' in html
    assert f'<img src="{base}/sums.csv"' not in html
    files = html[html.index('<section class="files" id="files">'):]
    assert "sales.csv" in files and f"{len(SALES)} bytes" in files and hashlib.sha256(SALES).hexdigest() in files
    assert "CSV, 3 rows" in files

    # the route serves the very bytes the step saved, as what they are, never sniffed
    png = page.client.get(f"{base}/chart.png")
    saved = {a["name"]: store.read_bytes(a["sha256"], a["name"]) for a in step["artifacts"]}
    assert png.status_code == 200 and png.content == saved["chart.png"] and png.content.startswith(b"\x89PNG")
    assert png.headers["content-type"] == "image/png" and png.headers["x-content-type-options"] == "nosniff"
    assert png.headers["content-disposition"].startswith("inline")
    csv = page.client.get(f"{base}/sums.csv")
    assert csv.status_code == 200 and csv.content == b"total\n60\n"
    assert csv.headers["content-type"] == "text/csv" and csv.headers["x-content-type-options"] == "nosniff"
    assert csv.headers["content-disposition"] == "attachment; filename=\"sums.csv\"; filename*=UTF-8''sums.csv"
    for wrong in (f"{base}/nope.png", f"/runs/{run_id}/artifacts/2/chart.png", f"/runs/{run_id}/artifacts/x/chart.png",
                  "/runs/nosuchrun/artifacts/1/chart.png", f"{base}/out/chart.png"):
        r = page.client.get(wrong)
        assert r.status_code == 404 and "image/png" not in r.headers["content-type"], wrong


def test_a_saved_svg_or_html_file_is_never_served_as_a_page(page):
    script_python_run(page, HOSTILE)
    run_id = page.start("Write the files in steps", no_constrain="on")  # parts: the planner plans it
    assert page.wait(run_id, "done", "failed") == "done"
    html = page.client.get(f"/runs/{run_id}").text
    base = f"/runs/{run_id}/artifacts/1"
    assert f'<img src="{base}/evil.svg"' in html  # shown through <img>, where an SVG runs nothing
    assert f'<a href="{base}/page.html" download>' in html and f'<img src="{base}/page.html"' not in html
    assert "<script>alert" not in html
    for name, media in (("evil.svg", "image/svg+xml"), ("page.html", "text/html")):
        r = page.client.get(f"{base}/{name}")
        assert r.status_code == 200 and b"<script>" in r.content
        assert r.headers["content-type"] == media and r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["content-disposition"].startswith("attachment")  # opened directly: a download
        assert "sandbox" in r.headers["content-security-policy"] and "script-src" not in r.headers[
            "content-security-policy"]


def test_upload_errors_are_one_line_on_the_form_and_start_nothing(page, upload_dirs):
    page.runner.options.update(max_file_mb=1, max_files_mb=2)  # as `hierplan ui --max-file-mb 1 --max-files-mb 2`
    big = b"x" * (1024 * 1024 + 1)
    r = start_with(page, [("files", ("big.csv", big, "text/csv"))], task="keep me")
    assert r.status_code == 400
    assert error_line(r.text) == ("file big.csv: 1.0 MiB; the limit is 1.0 MiB per file (--max-file-mb, "
                                  "$HIERPLAN_MAX_FILE_MB)")
    assert "keep me" in r.text and 'id="new-run"' in r.text  # what was typed stays
    two = [("files", ("a.csv", b"a\n1\n", "text/csv")), ("files", ("a.csv", b"a\n2\n", "text/csv"))]
    r = start_with(page, two)
    assert r.status_code == 400 and error_line(r.text) == (
        "file a.csv: another file is named 'a.csv' too; the sandbox sees files by name")
    r = start_with(page, [("files", ("empty.csv", b"", "text/csv"))])
    assert r.status_code == 400 and error_line(r.text) == "file empty.csv: the upload is empty (0 bytes)"
    r = browser_post(page, "x", [("", b"a,b\n")])
    assert r.status_code == 400 and error_line(r.text) == "an uploaded file has no name"
    # past the whole upload's bound the body is not even read on
    bound = upload_limit(page.runner.file_limits())
    r = start_with(page, [("files", ("huge.bin", b"y" * (bound + 1), "application/octet-stream"))])
    assert r.status_code == 400 and error_line(r.text).startswith("the upload is over 2.5 MiB")
    assert RunStore.open(page.db).list() == [] and page.fakes.loads == []  # no run, not even a model load
    assert upload_dirs and not any(os.path.exists(d) for d in upload_dirs)


def test_the_form_with_no_file_chosen_starts_a_run_without_files(page):
    # what a browser sends for a file input left empty: a part with no name and no bytes
    r = browser_post(page, "What is 6 * 7?", [("", b"")], seed="5", sequential="on")
    assert r.status_code == 303, r.text
    run_id = r.headers["location"].rsplit("/", 1)[1]
    assert page.wait(run_id, "done") == "done"
    assert "files" not in saved_values(page.db, run_id) or not saved_values(page.db, run_id)["files"]
    options = RunStore.open(page.db).get(run_id).options
    assert options["seed"] == 5 and options["parallel"] is False
    assert 'id="files"' not in page.client.get(f"/runs/{run_id}").text


def test_the_guard_refuses_a_cross_origin_or_tokenless_upload(page, upload_dirs):
    files = [("files", ("sales.csv", SALES, "text/csv"))]
    for headers in ({"origin": "http://evil.example"}, {"referer": "http://evil.example/x"}, {}):
        client = TestClient(create_app(page.db, runner=page.runner), base_url=ORIGIN, headers=headers)
        r = client.post("/runs", data={"task": "x"}, files=files, follow_redirects=False)
        assert r.status_code == 403 and "did not come from this page" in r.text, headers
    app = create_app(page.db, runner=page.runner, token="s3cret-token", loopback=False)
    client = TestClient(app, base_url="http://10.0.0.5:8765", headers={"origin": "http://10.0.0.5:8765"})
    assert client.post("/runs", data={"task": "x"}, files=files).status_code == 401
    assert client.get("/runs/x/artifacts/1/chart.png").status_code == 401  # the saved files too
    assert RunStore.open(page.db).list() == [] and upload_dirs == []  # refused before the body was read
    same = TestClient(create_app(page.db, runner=page.runner), base_url=ORIGIN, headers={"referer": ORIGIN + "/"})
    r = same.post("/runs", data={"task": "Say hi"}, files=files, follow_redirects=False)
    assert r.status_code == 303 and len(RunStore.open(page.db).list()) == 1
    assert page.wait(r.headers["location"].rsplit("/", 1)[1], "done") == "done"
