"""Failures with one right fix, fixed without a model (hierplan.rules.repair.mend), and a program run with them
fixed (hierplan.nodes.python_step.run_with_outputs)."""

from __future__ import annotations

from fakes import ScriptedChatModel
from langgraph.checkpoint.memory import InMemorySaver

from hierplan import build_graph
from hierplan.nodes.python_step import run_with_outputs
from hierplan.rules.repair import mend
from hierplan.tools import run_python

NO_NUMPY = "Traceback (most recent call last):\n  File \"<code>\", line 2, in <module>\nNameError: name 'np' is not defined"
COLUMNS = {"rainfall 2023.csv": ["station", "rain mm", "Month"], "notes.txt": []}


def no_file(path: str) -> str:
    return f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'"


def test_a_library_used_by_its_usual_name_is_imported():
    assert mend(NO_NUMPY, "x = np.sqrt(4)\nprint(x)") == ("import numpy as np\nx = np.sqrt(4)\nprint(x)",
                                                         "added `import numpy as np`")
    assert mend("NameError: name 'scipy' is not defined", "print(scipy.stats.norm.cdf(0))")[1] == \
        "added `import scipy.stats`"
    # a name the program defines itself, or one no library goes by, is the model's to fix
    assert mend(NO_NUMPY, "np = None\nprint(np.sqrt(4))") is None
    assert mend("NameError: name 'total_cost' is not defined", "print(total_cost)") is None


def test_the_users_file_read_under_another_spelling_of_its_name_is_read_by_its_own():
    code = "import pandas as pd\ndf = pd.read_csv('data/rainfall_2023.csv')\nprint(len(df))"
    fixed, change = mend(no_file("data/rainfall_2023.csv"), code, COLUMNS)
    assert "pd.read_csv('data/rainfall 2023.csv')" in fixed and change.endswith("read as 'data/rainfall 2023.csv'")
    # without its extension, or without the data/ folder
    assert mend(no_file("Rainfall-2023"), 'open("Rainfall-2023")', COLUMNS)[0] == "open('data/rainfall 2023.csv')"
    # another name altogether, with two files to choose from: no guess
    assert mend(no_file("data/sales.csv"), "open('data/sales.csv')", COLUMNS) is None
    # with one file, a program that reads a file the run does not have means that file
    one = {"rainfall 2023.csv": COLUMNS["rainfall 2023.csv"]}
    assert mend(no_file("data/weather.csv"), "open('data/weather.csv')", one)[0] == "open('data/rainfall 2023.csv')"
    # a path the program built (no literal to change) is left to the model
    assert mend(no_file("data/rainfall_2023.csv"), "open('data/' + name)", COLUMNS) is None


def test_a_column_named_in_another_spelling_is_named_as_the_table_spells_it():
    code = "df = df.dropna(subset=['rain_mm'])\nprint(df[\"rain_mm\"].mean(), df['month'].max())"
    fixed, change = mend("KeyError: 'rain_mm'", code, COLUMNS)
    assert fixed == "df = df.dropna(subset=['rain mm'])\nprint(df['rain mm'].mean(), df['month'].max())"
    assert change == "'rain_mm' read as 'rain mm'"
    assert mend("KeyError: \"['month'] not in index\"", code, COLUMNS)[0].endswith("df['Month'].max())")
    # no column spelt that way, or a name the table has (the KeyError came from elsewhere): the model's to fix
    assert mend("KeyError: 'rainfall'", "df['rainfall']", COLUMNS) is None
    assert mend("KeyError: 'station'", "d = {}; d['station']", COLUMNS) is None
    assert mend("KeyError: 'rain_mm'", "df['rain_mm']", None) is None  # a run without files


def test_a_program_is_run_again_with_its_fixes_and_records_them(tmp_path):
    table = tmp_path / "rainfall 2023.csv"
    table.write_text("station,rain mm\nnorth,10\nsouth,30\n")
    code = "import pandas as pd\ndf = pd.read_csv('data/rainfall_2023.csv')\nprint(np.round(df['rain_mm'].mean(), 1))"
    attempt, _ = run_with_outputs(code, run_python, (), {table.name: str(table)})
    assert attempt.ok and attempt.stdout.strip() == "20.0"
    assert attempt.mended == ["'data/rainfall_2023.csv' read as 'data/rainfall 2023.csv'",
                              "added `import numpy as np`", "'rain_mm' read as 'rain mm'"]
    # at most max_mends fixes: with none, it fails as written
    attempt, _ = run_with_outputs(code, run_python, (), {table.name: str(table)}, max_mends=0)
    assert not attempt.ok and "FileNotFoundError" in attempt.error and attempt.mended == []


def test_a_data_questions_program_is_fixed_without_a_repair_call(tmp_path):
    from hierplan.tools.files import load_files

    csv = tmp_path / "chore times.csv"
    csv.write_text("chore,Minutes Spent\nsweep,30\ndishes,12\n")
    task = "What is the mean of the minutes spent in chore times.csv?"
    program = ("```python\nimport pandas as pd\n"
               "print(pd.read_csv('data/chore_times.csv')['minutes_spent'].mean())\n```")
    model = ScriptedChatModel(default={"python_step": program, "python_check": program})
    out = build_graph(model, InMemorySaver(), run_code=run_python, constrain=False).invoke(
        {"task": task, "files": load_files([csv])}, {"configurable": {"thread_id": "mend"}})
    assert out["final"] == "21.0" and model.count("python_step") == 1
    [attempt] = out["results"][-1]["attempts"]
    assert attempt["mended"] == ["'data/chore_times.csv' read as 'data/chore times.csv'",
                                 "'minutes_spent' read as 'Minutes Spent'"]
    assert all(check["mended"] for check in out["checks"])


def test_the_terminal_says_what_was_fixed_by_rule():
    import io

    from hierplan.cli.output import HumanReporter

    out = io.StringIO()
    attempt = {"code": "print(1)", "ok": True, "stdout": "1\n", "error": None, "exit_reason": "ok",
               "mended": ["added `import numpy as np`"]}
    HumanReporter(out=out).update("python_step", {"results": [
        {"step_id": 1, "title": "Mean", "tool": "python", "output": "1", "ok": True, "code": "print(1)",
         "seconds": 1.0, "attempts": [attempt], "calls": []}]})
    assert "fixed by rule before it ran: added `import numpy as np`" in out.getvalue()
