"""Files in (--file, the input's ``files``) and artifacts out (what a Python step saves under out/): the checks
before any model call, the file store (by sha256, streamed, once), the preview the prompts carry, the real
sandbox's data/ and out/ folders in every layer set, and the artifacts recorded, listed, written out and kept
across a resume. The 200 MB run, a kill -9 and a damaged store: tests/test_big_files.py."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os

import pytest

from fakes import ScriptedChatModel, plan_json
from helpers import CSV_CHART_PROGRAM, cli, one_line_error, saved_values
from hierplan import build_graph
from hierplan.config import ARTIFACTS_MAX_BYTES, FILE_MAX_BYTES, FILES_MAX_BYTES
from hierplan.errors import UsageError
from hierplan.nodes import prompts
from hierplan.store import open_file_store
from hierplan.store.files import FileStoreError, LocalFileStore, process_store
from hierplan.tools import run_python
from hierplan.tools.files import collect_artifacts, file_limits, load_files, local_path, preview

SALES = b"region,amount,rate\nnorth,10,0.5\nsouth,20,1.5\neast,30,2.0\n"
# What the scripted Python step writes: it reads the CSV given with --file, prints the sum, saves a chart and a table.
PROGRAM = CSV_CHART_PROGRAM


@pytest.fixture
def sales(tmp_path):
    path = tmp_path / "sales.csv"
    path.write_bytes(SALES)
    return str(path)


# --- files in: the checks ---------------------------------------------------------------------------------------

def test_a_file_is_copied_into_the_store_with_its_sha256_size_and_preview_and_the_record_holds_no_bytes(sales):
    store = process_store()
    [f] = load_files([sales], store)
    assert set(f) == {"name", "size", "sha256", "media_type", "preview"}  # no bytes in the state
    assert (f["name"], f["size"], f["media_type"]) == ("sales.csv", len(SALES), "text/csv")
    assert f["sha256"] == hashlib.sha256(SALES).hexdigest()
    assert store.read_bytes(f["sha256"], "sales.csv") == SALES
    assert f["preview"].startswith("CSV, 3 rows; columns: region (text), amount (int), rate (float)")
    assert "north,10,0.5" in f["preview"]


def test_the_store_keeps_a_file_once_by_sha256_and_never_rewrites_it(tmp_path):
    store = LocalFileStore(str(tmp_path / "runs.sqlite.files"))
    a = store.put_bytes(b"same bytes\n")
    path = store.local_path(a.sha256, "a.txt")
    before = os.stat(path)
    assert path == str(tmp_path / "runs.sqlite.files" / a.sha256[:2] / a.sha256)
    assert (a.sha256, a.size) == (hashlib.sha256(b"same bytes\n").hexdigest(), 11)
    assert store.put_stream(io.BytesIO(b"same bytes\n")) == a  # dedupe: the same file, not written again
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert oct(after.st_mode & 0o777) == "0o444" and oct(os.stat(store.root).st_mode & 0o777) == "0o700"
    assert os.listdir(os.path.join(store.root, "incoming")) == []  # nothing half-copied is left
    b = store.put_bytes(b"other\n")
    assert b.sha256 != a.sha256 and store.has(b.sha256) and not store.has("0" * 64)
    with pytest.raises(OverflowError):
        store.put_stream(io.BytesIO(b"x" * 10), limit=5)  # load_files turns this into its limit's line


def test_a_sqlite_database_keeps_its_files_beside_it_and_memory_runs_in_a_temporary_folder(tmp_path):
    store = open_file_store(str(tmp_path / "runs.sqlite"))
    assert store.location == str(tmp_path / "runs.sqlite.files")
    assert open_file_store(":memory:") is process_store()


def test_a_missing_or_changed_stored_file_is_one_line_naming_it(tmp_path):
    store = LocalFileStore(str(tmp_path / "store"))
    a = store.put_bytes(b"a,b\n1,2\n")
    record = {"name": "t.csv", "sha256": a.sha256, "size": a.size}
    path = local_path(record, store)
    os.chmod(path, 0o644)
    with open(path, "ab") as f:
        f.write(b"3,4\n")  # changed behind the run's back
    with pytest.raises(FileStoreError, match=r"^file t\.csv: its stored copy .* no longer matches its sha256") as exc:
        local_path(record, store)
    assert "\n" not in str(exc.value)
    os.unlink(path)
    with pytest.raises(FileStoreError, match=r"^file t\.csv \(sha256 [0-9a-f]{12}…\) is missing from the file store"):
        local_path(record, store)


def test_previews_of_json_and_text_and_binary():
    assert preview("a.json", b'{"cities": [{"name": "x"}], "n": 2}') == (
        "JSON, object of 2 keys {'cities': list of 1 items of object of 1 keys {'name': str}, 'n': int}\n"
        "as a table, 1 rows; columns: name (text)\nfirst rows:\n{\"name\": \"x\"}")
    # deeper than JSON_PREVIEW_DEPTH containers, an object is only counted
    assert preview("b.json", b'{"a": [{"b": {"c": 1}}]}').startswith(
        "JSON, object of 1 keys {'a': list of 1 items of object of 1 keys {'b': object of 1 keys}}")
    assert preview("notes.txt", b"one\ntwo\nthree\nfour\n") == "text, 4 lines; first lines:\none\ntwo\nthree"
    assert preview("x.bin", b"\0\1\2") == "binary, 3 bytes"
    assert preview("x.csv", b"\xff\xfe\0\0binary") == "binary, 10 bytes"  # a binary file named .csv is still taken
    assert len(preview("big.txt", b"y" * 10_000)) <= 1200


def test_a_table_preview_has_types_rows_missing_values_and_the_first_rows_within_its_budget():
    data = b"id,city,price,when\n" + b"".join(b"%d,%s,%s,2024-01-0%d\n" % (i, b"Oslo" if i % 2 else b"", b"" if i % 3 == 0
                                                                         else b"%d.5" % i, i % 9 + 1)
                                             for i in range(1, 5001))
    text = preview("sales.csv", data)
    assert text.splitlines()[0] == "CSV, 5,000 rows; columns: id (int), city (text), price (float), when (text)"
    assert text.splitlines()[1] == "missing values: city 2,500, price 1,666"
    assert text.splitlines()[2:] == ["first rows:", "id,city,price,when", "1,Oslo,1.5,2024-01-02", "2,,2.5,2024-01-03",
                                     "3,Oslo,,2024-01-04"]
    wide = b",".join(b"column_%d" % i for i in range(400)) + b"\n" + b",".join(b"1" for _ in range(400)) + b"\n"
    assert len(preview("wide.csv", wide)) <= 1200 and "first rows:" in preview("wide.csv", wide)
    assert preview("t.tsv", b"a\tb\n1\tx\n").startswith("TSV, 1 rows; columns: a (int), b (text)")
    assert preview("t.jsonl", b'{"a": 1}\n{"a": null, "b": "x"}\n').startswith(
        "JSON Lines, 2 rows; columns: a (float), b (text)\nmissing values: a 1, b 1")
    broken = preview("bad.csv", b'a,b\n1,2,3,4\n"never closed\n')
    assert broken.startswith("CSV that pandas could not read (") and "first lines:\na,b" in broken


def test_parquet_and_excel_previews():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 2, None, 4], "b": ["x", "y", "z", None]})
    pytest.importorskip("pyarrow", reason="Parquet previews need pyarrow (pip install 'hierplan[files]')")
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    assert preview("t.parquet", buffer.getvalue()).startswith(
        "Parquet, 4 rows; columns: a (float), b (text)\nmissing values: a 1, b 1\nfirst rows:\na,b\n1.0,x")
    pytest.importorskip("openpyxl", reason="Excel previews need openpyxl (pip install 'hierplan[files]')")
    buffer = io.BytesIO()
    frame.to_excel(buffer, index=False)
    assert preview("t.xlsx", buffer.getvalue()).startswith(
        "Excel workbook, 4 rows; columns: a (float), b (text)\nmissing values: a 1, b 1\nfirst rows:\na,b\n1.0,x")


def test_the_limits_are_a_choice_with_defaults(monkeypatch):
    monkeypatch.delenv("HIERPLAN_MAX_FILE_MB", raising=False)
    monkeypatch.delenv("HIERPLAN_MAX_FILES_MB", raising=False)
    assert file_limits() == (FILE_MAX_BYTES, FILES_MAX_BYTES) == (1 << 30, 4 << 30)
    monkeypatch.setenv("HIERPLAN_MAX_FILE_MB", "3")
    assert file_limits() == (3 << 20, 4 << 30) and file_limits(5, 7) == (5 << 20, 7 << 20)
    monkeypatch.setenv("HIERPLAN_MAX_FILE_MB", "lots")
    with pytest.raises(UsageError, match=r"\$HIERPLAN_MAX_FILE_MB must be a whole number of MiB"):
        file_limits()


@pytest.mark.parametrize("make, needle", [
    (lambda d: str(d / "missing.csv"), "no such file"),
    (lambda d: str(d), "is a directory"),
    (lambda d: _write(d / "big.csv", b"x" * (1024 * 1024 + 1)), r"the limit is 1\.0 MiB per file \(--max-file-mb"),
    (lambda d: _write(d / "empty.csv", b""), r"empty \(0 bytes\)"),  # as the web page refuses an empty upload
])
def test_a_bad_file_is_one_usage_error(tmp_path, make, needle):
    with pytest.raises(UsageError, match=needle) as exc:
        load_files([make(tmp_path)], limits=(1024 * 1024, 4 * 1024 * 1024))
    assert "\n" not in str(exc.value)


def test_a_binary_file_is_taken_with_a_preview_saying_so(tmp_path):
    [f] = load_files([_write(tmp_path / "photo.jpg", b"\xff\xd8\xff\xe0\0\x10JFIF\0" + bytes(range(256)))])
    assert f["preview"] == "binary, 267 bytes" and f["media_type"] == "image/jpeg"


def test_files_over_the_runs_limit_together_are_refused_before_any_is_copied(tmp_path):
    store = LocalFileStore(str(tmp_path / "store"))
    paths = [_write(tmp_path / f"{n}.csv", b"x" * 600) for n in "ab"]
    with pytest.raises(UsageError, match="the files come to .*; the limit is .* together"):
        load_files(paths, store, limits=(1000, 1000))
    assert not os.path.exists(store.root)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_one_usage_error(tmp_path):
    path = _write(tmp_path / "secret.csv", b"a\n")
    os.chmod(path, 0)
    with pytest.raises(UsageError, match="cannot be read"):
        load_files([path])


def test_two_files_of_one_name_are_refused(tmp_path, sales):
    other = tmp_path / "sub"
    other.mkdir()
    with pytest.raises(UsageError, match="another file is named 'sales.csv'"):
        load_files([sales, _write(other / "sales.csv", b"a\n")])


def test_cli_refuses_a_missing_file_before_any_model_call(models, tmp_path):
    code, out, err = cli("run", "Sum the amounts", "--file", str(tmp_path / "nope.csv"), "--db",
                         str(tmp_path / "r.sqlite"))
    assert code == 2 and out == ""
    one_line_error(err, "nope.csv", "no such file")
    assert models[1] == []  # no model was even loaded
    code, out, _ = cli("runs", "--json", "--db", str(tmp_path / "r.sqlite"))
    assert json.loads(out) == []  # and no run recorded


# --- the sandbox's data/ and out/ -------------------------------------------------------------------------------

@pytest.mark.parametrize("layers", [None, ["uid", "seccomp", "landlock"], ["seccomp"], []],
                         ids=["all", "no-bwrap", "seccomp-only", "none"])
def test_the_sandbox_reads_data_and_gives_back_out_in_every_layer_set(layers):
    code = """
import os
print(open("data/sales.csv").read().count("\\n"))
os.makedirs("out/tables")
open("out/tables/t.csv", "w").write("a\\n1\\n")
open("out/big.bin", "wb").write(b"x" * 5000)
os.symlink("/etc/passwd", "out/link")
"""
    res = run_python(code, data={"sales.csv": SALES}, collect_outputs=4096, layers=layers)
    assert res.ok, res.stderr
    assert res.stdout == "4\n"
    assert res.outputs == {"tables/t.csv": b"a\n1\n"}  # the link is not followed, the big file not read
    assert res.outputs_skipped == {"big.bin": 5000}


@pytest.mark.parametrize("layers", [None, ["uid", "seccomp", "landlock"], ["seccomp", "landlock"], []],
                         ids=["all", "no-bwrap", "own-user-landlock", "none"])
def test_a_stored_file_is_read_in_place_and_what_is_saved_goes_to_the_store(tmp_path, layers):
    store = LocalFileStore(str(tmp_path / "store"))
    stored = store.put_bytes(SALES)
    code = """
import os
print(open("data/sales.csv").read().count("\\n"), open("data/note.txt").read())
os.makedirs("out", exist_ok=True)
open("out/sum.csv", "w").write("total\\n60\\n")
"""
    res = run_python(code, data={"sales.csv": store.local_path(stored.sha256, "sales.csv"), "note.txt": b"hi"},
                     collect_outputs=4096, save_output=store.save_output, layers=layers)
    assert res.ok, res.stderr
    assert res.stdout == "4 hi\n"
    [(name, saved)] = res.outputs.items()
    assert name == "sum.csv" and store.read_bytes(saved.sha256, name) == b"total\n60\n"
    assert store.read_bytes(stored.sha256, "sales.csv") == SALES  # intact, whatever the program did


@pytest.mark.parametrize("layers", [None, ["uid", "seccomp", "landlock"]], ids=["all", "no-bwrap"])
def test_the_data_is_read_only_under_its_own_uid(layers):
    code = """
try:
    open("data/sales.csv", "a").write("x")
    print("written")
except OSError:
    print("refused")
"""
    res = run_python(code, data={"sales.csv": SALES}, layers=layers)
    assert res.stdout == "refused\n", res.stderr


def test_artifacts_past_the_run_limit_are_left_out_and_repeats_are_not_kept():
    store = process_store()
    big = b"y" * 1000
    kept, dropped = collect_artifacts({"a.csv": b"1\n", "b.png": big}, store, used=ARTIFACTS_MAX_BYTES - 500,
                                      seen={("c.csv", hashlib.sha256(b"c").hexdigest())})
    assert [a["name"] for a in kept] == ["a.csv"] and "b.png was not kept" in dropped[0]
    assert set(kept[0]) == {"name", "size", "sha256", "media_type"} and store.has(kept[0]["sha256"])
    kept, _ = collect_artifacts({"c.csv": b"c"}, store, seen={("c.csv", hashlib.sha256(b"c").hexdigest())})
    assert kept == []


# --- a run with a file: the graph and the CLI ------------------------------------------------------------------

def test_a_python_step_reads_the_file_and_its_chart_and_table_are_kept(sales, tmp_path):
    model = ScriptedChatModel(script={"planner": [plan_json(["python", "llm", "llm"])], "python_step": [PROGRAM],
                                      "llm_step": ["The total is 60.", "Done."], "aggregator": ["The total is 60."]})
    store = LocalFileStore(str(tmp_path / "store"))
    graph = build_graph(model, constrain=False, file_store=store)  # the real sandbox
    state = graph.invoke({"task": "Write a short report on sales.csv: sum the amounts and draw a chart, in three steps",
                          "files": load_files([sales], store)},
                         {"configurable": {"thread_id": "f1"}})
    step = state["results"][0]
    assert step["ok"] and step["output"] == "60"
    by_name = {a["name"]: a for a in step["artifacts"]}
    assert set(by_name) == {"chart.png", "sums.csv"}
    assert store.read_bytes(by_name["chart.png"]["sha256"], "chart.png").startswith(b"\x89PNG")
    assert by_name["chart.png"]["media_type"] == "image/png" and "data" not in by_name["chart.png"]
    assert store.read_bytes(by_name["sums.csv"]["sha256"], "sums.csv") == b"total\n60\n"
    assert by_name["sums.csv"]["sha256"] == hashlib.sha256(b"total\n60\n").hexdigest()
    assert state["results"][1]["artifacts"] == []
    prompts_of = {c["node"]: c["messages"][-1].content for c in model.calls}
    for node in ("planner", "python_step", "llm_step"):
        assert f"sales.csv ({len(SALES)} bytes): CSV, 3 rows; columns: region (text)" in prompts_of[node], node
    assert "./out/" in prompts_of["python_step"] and "./out/" not in prompts_of["llm_step"]
    assert "out/chart.png, out/sums.csv" in prompts_of["aggregator"]
    # a plan the model wrote for the file has parts, which the aggregator writes up: no whole-task check
    assert model.count("python_check") == 0


def test_without_files_the_prompts_are_unchanged():
    model = ScriptedChatModel(script={"planner": [plan_json(["python", "llm", "llm"])], "python_step": ["print(2)"]})
    # a task with parts ("steps"), split_writing: the planner and the steps are asked too (one piece of writing is
    # planned by rule)
    build_graph(model, constrain=False, split_writing=True).invoke({"task": "Write about two in steps"},
                                                                   {"configurable": {"thread_id": "f2"}})
    assert model.count("planner") == 1 and model.count("python_step") == 1
    for call in model.calls:
        text = "\n".join(str(m.content) for m in call["messages"])
        assert prompts.FILES_GIVEN.strip() not in text and "./out/" not in text and "saved, kept" not in text


def test_cli_run_with_a_file_lists_artifacts_writes_them_out_and_keeps_them_across_a_resume(models, tmp_path,
                                                                                           sales):
    db = str(tmp_path / "runs.sqlite")
    models[0].append({"planner": [plan_json(["python", "none", "none"])], "python_step": [PROGRAM],
                      "aggregator": [RuntimeError("the model went away")]})
    code, _, err = cli("run", "Write a note on the summed amounts with a chart, in two steps", "--file", sales, "--db", db,
                       "--run-id", "a1")
    assert code == 1 and "hierplan resume a1" in err
    models[0].append({"aggregator": ["The total is 60; see out/chart.png."]})
    code, out, err = cli("resume", "a1", "--db", db)
    assert code == 0, err
    assert models[1][1].count("python_step") == 0  # the step, its program and its files were kept
    assert "out/chart.png" in models[1][1].calls[0]["messages"][-1].content
    values = saved_values(db, "a1")
    assert values["files"][0]["sha256"] == hashlib.sha256(SALES).hexdigest()
    # no bytes in the state: the preview quotes a file this small whole, so look for the base64 the old state held,
    # in the database and its write-ahead log (which of the two holds the last pages depends on SQLite's timing)
    saved = b"".join(open(p, "rb").read() for p in (db, db + "-wal") if os.path.exists(p))
    assert "data" not in values["files"][0] and base64.b64encode(SALES) not in saved
    stored = tmp_path / "runs.sqlite.files" / values["files"][0]["sha256"][:2] / values["files"][0]["sha256"]
    assert stored.read_bytes() == SALES

    code, out, _ = cli("show", "a1", "--db", db)
    assert f"file: sales.csv ({len(SALES)} bytes" in out and "saved out/chart.png (image/png" in out
    code, out, _ = cli("show", "a1", "--json", "--db", db)
    listed = json.loads(out)["artifacts"]
    assert [(a["step_id"], a["name"]) for a in listed] == [(1, "chart.png"), (1, "sums.csv")]
    assert "data" not in listed[0]
    code, out, _ = cli("show", "a1", "--artifacts", str(tmp_path / "got"), "--db", db)
    assert (tmp_path / "got" / "step-1" / "sums.csv").read_bytes() == b"total\n60\n"
    assert (tmp_path / "got" / "step-1" / "chart.png").read_bytes().startswith(b"\x89PNG")


def _write(path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_a_question_about_a_file_is_numeric_and_one_program_reads_it_whatever_steps_the_task_lists(sales):
    # "What is the total ...?" holds no number: the file holds them (rules.kind); the steps the task lists are the
    # one program's (rules.plan rule 1c), which reads the real bytes in the sandbox, checked by a second program
    model = ScriptedChatModel(script={"python_step": [PROGRAM], "python_check": [PROGRAM]})
    state = build_graph(model, constrain=False).invoke(
        {"task": "What is the total amount in sales.csv? Show the steps.", "files": load_files([sales])},
        {"configurable": {"thread_id": "f-kind"}})
    assert state["kind"] == "numeric" and model.count("planner") == 0
    assert [s["tool"] for s in state["plan"]["steps"]] == ["python"]
    assert "a question about the user's files" in state["plan"]["steps"][0]["tool_reason"]
    assert state["results"][0]["output"] == "60" and state["final"] == "60"
    without = build_graph(ScriptedChatModel(script={"planner": [plan_json(["llm"])]},
                                            default={"llm_step": "x", "aggregator": "y"}),
                          constrain=False).invoke({"task": "What is the total amount in sales.csv? Show the steps."},
                                                  {"configurable": {"thread_id": "f-kind-2"}})
    assert without["kind"] == "writing"


def test_a_piece_of_writing_about_a_file_is_planned_and_a_step_that_reads_the_file_runs_python(sales):
    # the model planned an LLM step that names the file; the tool rule sends it to Python
    plan = json.dumps({"goal": "A note", "assumptions": [], "steps": [
        {"id": 1, "title": "Read", "instruction": "Look up the amount column of sales.csv.", "tool": "llm",
         "expected_output": "The figures"}]})
    model = ScriptedChatModel(script={"planner": [plan], "python_step": [PROGRAM]},
                              default={"aggregator": "The total is 60.", "llm_step": "x"})
    state = build_graph(model, constrain=False).invoke(
        {"task": "Write a note for my manager on the total amount in sales.csv.", "files": load_files([sales])},
        {"configurable": {"thread_id": "f-write"}})
    assert state["kind"] == "writing"
    assert state["plan"]["steps"][0]["tool"] == "python" and "sales.csv" in state["plan"]["steps"][0]["tool_reason"]
    assert state["results"][0]["output"] == "60" and model.count("llm_step") == 0
