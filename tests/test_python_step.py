"""The Python step: fences stripped, syntax checked before running, errors shown to the model for repair."""

from __future__ import annotations

import pytest
from fakes import FakeExecution, ScriptedChatModel, scripted_runner
from langgraph.runtime import Runtime

from hierplan.config import MAX_CODE_REPAIRS, WARM_TEMPERATURE, SamplingConfig
from hierplan.nodes.python_step import make_python_step, show_last_value
from hierplan.options import RunOptions


def runtime(**options):
    return Runtime(context=RunOptions(**options))

STEP = {"id": 1, "title": "Add", "instruction": "Add 2 and 3", "tool": "python", "expected_output": "5"}
STATE = {"task": "t", "kind": "writing", "plan": {"goal": "Compute things", "assumptions": [], "steps": [STEP]}, "results": [],
         "step": STEP}


def run_step(replies, executions, max_repairs=MAX_CODE_REPAIRS):
    model = ScriptedChatModel(script={"python_step": list(replies)})
    runner = scripted_runner(list(executions))
    update = make_python_step(model, SamplingConfig(), runner)(STATE, runtime(max_repairs=max_repairs))
    return model, runner, update["results"][0]


def test_fenced_code_is_stripped_and_run_once_when_it_works():
    model, runner, result = run_step(["Sure:\n```python\nprint(2 + 3)\n```"], [FakeExecution(True, "5\n")])
    assert runner.seen == ["print(2 + 3)"]
    assert result["ok"] is True and result["output"] == "5" and result["code"] == "print(2 + 3)"
    assert len(result["attempts"]) == 1 and model.count("python_step") == 1


def test_syntax_error_never_reaches_the_sandbox_and_is_repaired():
    model, runner, result = run_step(["print(2 +", "print(2 + 3)"], [FakeExecution(True, "5\n")])
    assert runner.seen == ["print(2 + 3)"]
    assert [a["ok"] for a in result["attempts"]] == [False, True]
    assert result["attempts"][0]["error"].startswith("SyntaxError")
    repair_prompt = model.calls[1]["messages"][-1].content
    assert "print(2 +" in repair_prompt and "SyntaxError" in repair_prompt


def test_runtime_error_is_shown_to_the_model_with_the_code():
    model, runner, result = run_step(
        ["print(1/0)", "print(5)"],
        [FakeExecution(False, "", "ZeroDivisionError: division by zero", "error"), FakeExecution(True, "5\n")])
    assert result["ok"] is True and len(result["attempts"]) == 2
    assert "ZeroDivisionError" in model.calls[1]["messages"][-1].content
    assert "print(1/0)" in model.calls[1]["messages"][-1].content


def test_a_step_that_keeps_failing_is_recorded_as_failed_with_every_attempt():
    timeouts = [FakeExecution(False, "", "timed out after 30 s", "timeout")] * (MAX_CODE_REPAIRS + 1)
    model, runner, result = run_step([f"while True: x = {i}" for i in range(MAX_CODE_REPAIRS + 1)], timeouts)
    assert result["ok"] is False
    assert result["error"] == "timed out after 30 s"
    assert result["output"].startswith("Python step failed")
    assert len(result["attempts"]) == MAX_CODE_REPAIRS + 1 == model.count("python_step")


def test_a_program_that_prints_nothing_is_not_a_success():
    _, runner, result = run_step(["def f():\n    print(5)"], [FakeExecution(True, "")], max_repairs=0)
    assert runner.seen == ["def f():\n    print(5)"]  # it calls print (never reached): left as written
    assert result["ok"] is False and "printed nothing" in result["error"]


@pytest.mark.parametrize("code, shown", [
    ("x = 3 * 4", "x = 3 * 4\nprint(x)"),
    ("a = 2\nb = a + 1\nb * 2", "a = 2\nb = a + 1\nprint(b * 2)"),
    ("total = 1\ntotal += 4\n", "total = 1\ntotal += 4\nprint(total)"),
    ("import math\nmath.sqrt(16)", "import math\nprint(math.sqrt(16))"),
    ("x = 1\nprint(x)\ny = 2", "x = 1\nprint(x)\ny = 2"),        # prints already: untouched
    ("x = 1\nprint(x)", "x = 1\nprint(x)"),                      # ends printing: untouched
    # prints somewhere (here after return, never reached): the last call's value, unless None
    ("def f():\n    return 4\n    print(9)\nf()",
     "def f():\n    return 4\n    print(9)\n_value = f()\nif _value is not None:\n    print(_value)"),
    ("a, b = 1, 2", "a, b = 1, 2"),                                # no single name to show
    ("a = 1; a + 1", "a = 1; a + 1"),                              # two statements on the last line
    ("x: int", "x: int"),                                          # nothing assigned
    ("for i in range(3):\n    i", "for i in range(3):\n    i"),  # last statement is not an expression
    ("def total():\n    return 19 * 10", "def total():\n    return 19 * 10\nprint(total())"),
    ("def f(x=2, *, y=3):\n    return x + y", "def f(x=2, *, y=3):\n    return x + y\nprint(f())"),
    ("def f(x):\n    return x", "def f(x):\n    return x"),                  # needs an argument
    ("def f():\n    return 1\ny = f", "def f():\n    return 1\ny = f\nprint(y)"),  # not defined last
    ("def f():\n    return f", "def f():\n    return f"),                    # named inside: leave it
    ("x = 5\nprint", "x = 5\nprint"),           # print left uncalled: nothing shown, so the repair is asked
    ("print(1)\nprint", "print(1)\nprint"),
])
def test_a_program_that_never_prints_shows_its_last_value(code, shown):
    assert show_last_value(code) == shown


def test_a_last_call_shows_its_value_in_the_real_sandbox_once_and_not_none():
    from hierplan.nodes.python_step import run_attempt
    from hierplan.tools import run_python

    after_return = run_attempt("def solve():\n    total = 15 * 2\n    return total\n    print(total)\n\nsolve()",
                               run_python)
    assert after_return.ok and after_return.stdout == "30\n"
    printed = run_attempt("def main():\n    print(7)\n\nmain()", run_python)
    assert printed.ok and printed.stdout == "7\n"  # main() returned None: nothing more shown


def test_the_code_that_ran_is_the_code_recorded():
    _, runner, result = run_step(["```python\nanswer = 2 + 3\n```"], [FakeExecution(True, "5\n")])
    assert runner.seen == ["answer = 2 + 3\nprint(answer)"]
    assert result["ok"] is True and result["code"] == "answer = 2 + 3\nprint(answer)"


def test_a_repair_that_sends_a_failed_program_back_ends_the_repairs_without_running_it():
    model, runner, result = run_step(["print(1/0)", "x = 1\nprint(1/0)", "print(1/0)", "print(5)"],
                                     [FakeExecution(False, "", "ZeroDivisionError", "error")] * 2
                                     + [FakeExecution(True, "5\n")], max_repairs=3)
    assert runner.seen == ["print(1/0)", "x = 1\nprint(1/0)"]  # the third program is the first one again
    assert result["ok"] is False and len(result["attempts"]) == 2 and model.count("python_step") == 3


def test_repairs_can_be_turned_off():
    _, runner, result = run_step(["print(1/0)"], [FakeExecution(False, "", "ZeroDivisionError", "error")],
                                 max_repairs=0)
    assert len(runner.seen) == 1 and result["ok"] is False


def test_known_failures_come_back_with_advice():
    model, _, result = run_step(
        ["x = input()\nprint(x)", "print(total)", "print(5)"],
        [FakeExecution(False, "", "Traceback (most recent call last):\nEOFError: EOF when reading a line", "error"),
         FakeExecution(False, "", "NameError: name 'total' is not defined", "error"),
         FakeExecution(True, "5\n")])
    assert result["ok"] is True
    first_repair, second_repair = (c["messages"][-1].content for c in model.calls[1:])
    assert "input() cannot be used" in first_repair and "EOFError" in first_repair
    assert "`total` is not defined in the program nor by an earlier step's program" in second_repair


def test_a_misspelt_name_gets_the_defined_one_suggested():
    from hierplan.rules.repair import repair_hint

    code = "def total_footage():\n    return 3\nprint(total_feet())"
    hint = repair_hint("NameError: name 'total_feet' is not defined", code)
    assert hint == "`total_feet` is not defined; did you mean `total_footage`?\n"
    # Unparsable code still gets the general advice, naming the name.
    assert "`x` is not defined in the program" in repair_hint("NameError: name 'x' is not defined", "print(x")


def test_an_unknown_failure_gets_no_advice():
    model, _, _ = run_step(["print(1/0)", "print(5)"],
                           [FakeExecution(False, "", "ZeroDivisionError: division by zero", "error"),
                            FakeExecution(True, "5\n")])
    repair = model.calls[1]["messages"][-1].content
    assert repair.endswith("ZeroDivisionError: division by zero\nWrite the corrected complete program.")


def test_the_request_carries_the_task_earlier_results_and_the_step_after_the_examples():
    earlier = {"step_id": 1, "title": "Price", "output": "42", "ok": True}
    step = {**STEP, "id": 2, "depends_on": [1]}
    state = {**STATE, "task": "What is 42 plus 3?", "results": [earlier], "step": step,
             "plan": {**STATE["plan"], "steps": [STEP, step]}}
    model = ScriptedChatModel(script={"python_step": ["print(45)"]})
    make_python_step(model, SamplingConfig(), scripted_runner([FakeExecution(True, "45\n")]))(state, runtime())
    messages = model.calls[0]["messages"]
    from hierplan.nodes import prompts

    assert [m.type for m in messages] == ["system"] + ["human", "ai"] * len(prompts.CODE_EXAMPLES) + ["human"]
    request = messages[-1].content
    assert request.startswith("Task: What is 42 plus 3?")
    assert "Step 1 - Price:\n42" in request and "Step 2: Add" in request


def test_worked_example_programs_run_and_print():
    """The examples teach by imitation: each must be a program the real sandbox runs and that prints, after
    the earlier steps' programs it shows (as a real step runs)."""
    from hierplan.nodes import prompts
    from hierplan.nodes.python_step import run_attempt
    from hierplan.tools import run_python

    for _task, earlier, _step, program in prompts.CODE_EXAMPLES:
        programs = [code for *_, code in earlier if code]
        for code in programs:
            assert run_attempt(code, run_python).ok, code
        attempt = run_attempt(program, run_python, programs)
        assert attempt.ok and attempt.stdout.strip(), (program, attempt.error)


def test_repairs_sample_warmer_than_the_first_try(monkeypatch):
    """At 0.2 the embedded model sent back the failed program unchanged; repairs use WARM_TEMPERATURE or more."""
    from hierplan.nodes import python_step
    from hierplan.nodes.model_call import invoke_model

    temperatures = []

    def recording(model, messages, sampling, **kwargs):
        temperatures.append(sampling.temperature)
        return invoke_model(model, messages, sampling, **kwargs)

    monkeypatch.setattr(python_step, "invoke_model", recording)
    run_step(["print(2 +", "print(2 + )", "print(5)"], [FakeExecution(True, "5\n")])
    assert temperatures == [SamplingConfig().code.temperature] + [WARM_TEMPERATURE] * 2
    temperatures.clear()
    hot = SamplingConfig().with_overrides(temperature=0.9)
    model = ScriptedChatModel(script={"python_step": ["print(2 +", "print(5)"]})
    make_python_step(model, hot, scripted_runner([FakeExecution(True, "5\n")]))(STATE, runtime())
    assert temperatures == [0.9, 0.9]  # never cooler than asked


def test_a_failed_program_on_the_users_table_is_told_the_real_paths_and_columns():
    from hierplan.rules.repair import repair_hint

    columns = {"trips.csv": ["Fare", "Age", "Pclass"], "notes.txt": []}
    missing = "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or directory: 'trip.csv'"
    assert repair_hint(missing, "", columns) == "The user's files are at: data/trips.csv, data/notes.txt.\n"
    wrong = "Traceback (most recent call last):\n  ...\nKeyError: 'fare'"
    hint = repair_hint(wrong, "", columns)
    assert "`fare` is not a column of trips.csv; did you mean `Fare`?" in hint and "'Pclass'" in hint
    several = "KeyError: \"None of [Index(['age', 'fare'], dtype='object')] are in the [columns]\""
    assert "`age` is not a column of trips.csv; did you mean `Age`?" in repair_hint(several, "", columns)
    assert repair_hint(wrong, "") == ""  # a run without files: nothing to name


def test_a_program_that_reads_text_as_a_number_is_told_which_value_and_how_to_convert_it():
    from hierplan.rules.repair import repair_hint

    for error, value in (("ValueError: could not convert string to float: '1,234'", "'1,234'"),
                         ("ValueError: invalid literal for int() with base 10: 'n/a'", "'n/a'"),
                         ('ValueError: Unable to parse string "12%" at position 3', '"12%"')):
        hint = repair_hint("Traceback (most recent call last):\n  ...\n" + error, "")
        assert hint.startswith(f"A value is text, not a number ({value})") and "pd.to_numeric" in hint
    assert repair_hint("ValueError: math domain error", "") == ""


def test_the_columns_are_read_from_a_tables_first_line(tmp_path):
    from hierplan.nodes.python_step import table_columns
    from hierplan.store import open_file_store
    from hierplan.tools.files import load_files, sandbox_data

    (tmp_path / "t.csv").write_text("Fare,Age\n7.25,22\n")
    (tmp_path / "n.txt").write_text("hello\n")
    store = open_file_store(str(tmp_path / "runs.sqlite"))
    files = load_files([tmp_path / "t.csv", tmp_path / "n.txt"], store)
    assert table_columns(sandbox_data(files, store)) == {"t.csv": ["Fare", "Age"], "n.txt": []}
