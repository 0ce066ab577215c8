"""The tools-and-data evaluation sets under hierplan/eval/data (tools15, heldout10): their tasks, files and MCP
server, and the checks both test files make of a set (its answers against its files and server, its files'
records, its servers file)."""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

from needs import unavailable
from hierplan.eval import load_tasks, numbers_equal
from hierplan.eval.scoring import find_text

try:
    # Imported now, under pytest's stderr (a real file): mcp's stdio client takes the stderr of the moment it is
    # first imported as its servers' stderr (tests/test_mcp.py), and capsys's is not a file.
    import langchain_mcp_adapters  # noqa: F401
    import mcp.client.stdio  # noqa: F401
    MCP_MISSING = None
except ImportError as exc:
    MCP_MISSING = f"the evaluation servers need the mcp extra (pip install 'hierplan[mcp]'): no module {exc.name}"

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "hierplan" / "eval" / "data"


class EvalSet:
    """hierplan/eval/data/NAME.jsonl, its files in NAME/, its server NAME_server.py started by NAME_mcp.json."""

    def __init__(self, name: str):
        self.name = name
        self.tasks = DATA / f"{name}.jsonl"
        self.files = DATA / name
        self.servers = DATA / f"{name}_mcp.json"
        self.server_script = DATA / f"{name}_server.py"

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.tasks.read_text(encoding="utf-8").splitlines() if line.strip()]

    def server(self):
        """The server script as a module (hierplan/eval/data is not a package: the file is a script hierplan
        starts); skips (fails under .ci/run) without the mcp extra."""
        if MCP_MISSING:
            unavailable(MCP_MISSING)
        spec = importlib.util.spec_from_file_location(f"{self.name}_server", self.server_script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def rows(self, name: str) -> list[dict]:
        with (self.files / name).open(newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))

    def document(self, name: str) -> Any:
        return json.loads((self.files / name).read_text(encoding="utf-8"))

    def check_answers(self, computed: dict[str, Any]) -> None:
        """Every task's expected answer is the one ``computed`` (by task id, in file order) from the files and the
        server, a name as answer_text and a number as answer; no question gives its answer away."""
        lines, tasks = self.lines(), load_tasks(self.tasks)  # load_tasks reads and checks every task's files
        assert [line["id"] for line in lines] == list(computed)  # a task added without its check fails here
        for line, task in zip(lines, tasks):
            value = computed[line["id"]]
            if isinstance(value, str):
                assert task.expected_text == value and task.expected is None, line["id"]
            else:
                assert task.expected_text is None and numbers_equal(repr(value), task.expected), (line["id"], value)
            assert find_text(task.question, str(task.expected_answer)) is None, line["id"]

    def check_files_and_servers(self, tasks: list) -> None:
        """Each task's files reached it as records of their bytes (small ones: tens of rows), and the servers file
        names one server, this set's script."""
        for task, line in zip(tasks, self.lines()):
            assert [f["name"] for f in task.files] == [Path(p).name for p in line.get("files", [])]
            for record, path in zip(task.files, line.get("files", [])):
                data = (DATA / path).read_bytes()
                assert record["sha256"] == hashlib.sha256(data).hexdigest() and len(data) < 4096
        [(_, spec)] = json.loads(self.servers.read_text())["mcpServers"].items()
        assert spec["command"] == "python"
        assert (ROOT / spec["args"][0]).resolve() == self.server_script.resolve()
