"""The Python step node: the model writes code, the sandbox runs it, errors go back to the model to repair."""

from __future__ import annotations

import ast
import time
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from hierplan.config import ARTIFACT_MAX_BYTES, MAX_MENDS, TASK_CONTEXT_CHARS, WARM_TEMPERATURE, SamplingConfig
from hierplan.graph.state import AgentState, PlanDict, ResultDict, StepDict, StepPayload
from hierplan.nodes import prompts
from hierplan.nodes.checker import check_messages
from hierplan.nodes.context import asked, earlier_programs, files_note, prior_results, step_request, truncate
from hierplan.nodes.events import emit
from hierplan.nodes.model_call import invoke_model
from hierplan.options import RunOptions, run_options
from hierplan.rules.kind import NUMERIC
from hierplan.rules.plan import plan_outline, whole_task_step
from hierplan.rules.repair import NOTHING_PRINTED, mend, repair_hint
from hierplan.rules.text import strip_code_fences
from hierplan.schema import CodeAttempt, StepResult
from hierplan.store.files import FileStore, process_store

NO_CODE = "the reply contained no code"
ERROR_CHARS_FOR_REPAIR = 1200

# run_code(code, before=programs) -> an object with ok, stdout, error and exit_reason
# (hierplan.tools.ExecutionResult); ``before``: earlier steps' programs to run first, silently, in the same
# namespace (hierplan.tools.run_python's ``before``). A run with files also passes ``data`` ({name: path of the
# file store's copy}); a result's ``outputs`` ({path under out/: bytes, or a StoredFile already in the run's file
# store}), where it has them, are kept as the step's artifacts.
CodeRunner = Callable[..., Any]


def sandbox_runner(file_store: FileStore) -> CodeRunner:
    """The sandbox, with the run's files (``data``) at ./data/ and what the code saves under ./out/ copied into
    ``file_store`` as it is read back."""

    def run_code(code: str, before: Sequence[str] = (), data: Mapping[str, str] | None = None):
        from hierplan.tools import run_python

        return run_python(code, before=before, data=data, collect_outputs=ARTIFACT_MAX_BYTES,
                          save_output=file_store.save_output)

    return run_code


def table_columns(data: Mapping[str, str]) -> dict[str, list[str]]:
    """{name: the column names on a CSV's or TSV's first line ([] for any other file)} of the run's files
    (``data``: {name: path}, as the sandbox gets them)."""
    import csv

    out: dict[str, list[str]] = {}
    for name, path in data.items():
        out[name] = []
        if name.lower().endswith((".csv", ".tsv")):
            try:
                with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
                    out[name] = next(csv.reader(fh, delimiter="\t" if name.lower().endswith(".tsv") else ","), [])
            except (OSError, StopIteration):
                pass
    return out


def check_code(code: str) -> CodeAttempt | None:
    """A failed attempt when the code cannot even be compiled (so it never reaches the sandbox), else None."""
    if not code.strip():
        return CodeAttempt(code=code, ok=False, error=NO_CODE, exit_reason="error")
    try:
        compile(code, "<step>", "exec")  # compiles only; nothing runs in this process
    except SyntaxError as exc:
        return CodeAttempt(code=code, ok=False, error=f"SyntaxError: {exc.msg} (line {exc.lineno})",
                           exit_reason="syntax")
    return None


def show_last_value(code: str) -> str:
    """Like a notebook cell: a program shows the value of its last expression (when it calls print()
    elsewhere, only a value that is not None: ``main()`` that printed already shows nothing more); a program
    that never calls print() also shows the name its last statement assigns, or what its last function
    returns when it is defined last, never called and needs no arguments. Small models often compute the
    answer and forget to print it, or print it only in a line after ``return``."""
    tree = ast.parse(code)
    if not tree.body:
        return code
    calls_print = any(_is_print(n) for n in ast.walk(tree))
    last = tree.body[-1]
    lines = code.splitlines()
    if (isinstance(last, ast.Expr) and last.col_offset == 0 and last.lineno == last.end_lineno == len(lines)
            and not _is_print(last.value) and not _is_print_name(last.value)):
        value = ast.get_source_segment(code, last.value)
        if calls_print:
            return "\n".join(lines[:-1] + [f"_value = {value}", "if _value is not None:", "    print(_value)"])
        return "\n".join(lines[:-1] + [f"print({value})"])
    if calls_print:
        return code
    if isinstance(last, (ast.Assign, ast.AugAssign)) or (isinstance(last, ast.AnnAssign) and last.value):
        targets = last.targets if isinstance(last, ast.Assign) else [last.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            return code.rstrip("\n") + f"\nprint({targets[0].id})"
    if isinstance(last, ast.FunctionDef) and _callable_without_arguments(last) and not any(
            isinstance(n, ast.Name) and n.id == last.name for n in ast.walk(tree)):
        return code.rstrip("\n") + f"\nprint({last.name}())"  # defined last and never called
    return code


def _is_print(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"


def _is_print_name(node: ast.AST) -> bool:
    """``print`` left uncalled: meant as a print, it shows "<built-in function print>" as the answer."""
    return isinstance(node, ast.Name) and node.id == "print"


def _callable_without_arguments(func: ast.FunctionDef) -> bool:
    args = func.args
    return (len(args.posonlyargs) + len(args.args) == len(args.defaults)
            and all(d is not None for d in args.kw_defaults))


def code_request(task: str, results: list[ResultDict], step: StepDict) -> str:
    """The user turn asking for a step's program: the task, earlier results, and the step."""
    return prompts.CODE_USER.format(task=task,
                                    step=step_request(results, step, programs=True))


def step_messages(payload: StepPayload, files: Sequence[Any], examples: list) -> list[BaseMessage]:
    """The request for a step's program. A numeric plan's one Python step does the whole task: it is asked for
    as the check's program (rules.plan.whole_task_step), with a model-written step's instruction as the plan's
    outline (rules.plan.plan_outline). Any other gets the step prompt, its worked examples, the earlier results
    and the user's files."""
    step = payload["step"]
    if whole_task_step(payload["kind"], payload["plan"], files):
        return check_messages(asked(payload), outline=plan_outline(step), files=files)
    request = code_request(asked(payload, TASK_CONTEXT_CHARS), prior_results(payload, step), step)
    if files:
        request += files_note(files, code=True)
    if payload["kind"] == NUMERIC and step["id"] == last_python_step(payload["plan"]):
        request += prompts.LAST_COMPUTATION  # its number is the task's answer (the vote node checks it)
    return [SystemMessage(prompts.CODE_SYSTEM), *examples, HumanMessage(request)]


def code_example_turns() -> list:
    """prompts.CODE_EXAMPLES as earlier chat turns, in exactly the form a real step's request takes."""
    turns: list = []
    for task, earlier, step, program in prompts.CODE_EXAMPLES:
        results = [{"step_id": i, "title": title, "output": output, "ok": True, "tool": "python" if code else "llm",
                    "code": code} for i, title, output, code in earlier]
        turns += [HumanMessage(code_request(task, results, step)), AIMessage(f"```python\n{program}\n```")]
    return turns


def run_attempt(code: str, run_code: CodeRunner, earlier: Sequence[str] = ()) -> CodeAttempt:
    """Check and run ``code`` after the ``earlier`` steps' programs (context.earlier_programs)."""
    return run_with_outputs(code, run_code, earlier)[0]


def run_alone(code: str, run_code: CodeRunner, files: Sequence[Any] = (),
              file_store: FileStore | None = None) -> CodeAttempt:
    """One program on its own (the checker's), with the user's files (FileDicts) at ./data/ when the run has any
    (read from ``file_store``, the run's: hierplan.store.files)."""
    data = None
    if files:
        from hierplan.tools.files import sandbox_data

        data = sandbox_data(files, file_store or process_store())
    return run_with_outputs(code, run_code, (), data)[0]


def run_with_outputs(code: str, run_code: CodeRunner, earlier: Sequence[str] = (),
                     data: Mapping[str, str] | None = None, max_mends: int = MAX_MENDS) -> tuple[CodeAttempt, Any]:
    """``run_attempt`` with the run's files, and the runner's result (None: the code never ran). A failure with
    one right fix (rules.repair.mend: an import, a file's or a column's spelling) is fixed and run again, at most
    ``max_mends`` times; the attempt records the program that ran and what was changed (``mended``)."""
    if (failed := check_code(code)) is not None:
        return failed, None
    code = show_last_value(code)
    mended: list[str] = []
    columns: dict[str, list[str]] | None = None
    while True:
        # only a run with files passes ``data``: a runner written for runs without files takes ``before`` alone
        res = run_code(code, before=earlier, data=data) if data else run_code(code, before=earlier)
        ok = bool(res.ok) and bool(res.stdout.strip())
        error = res.error if not res.ok else (None if ok else NOTHING_PRINTED)
        if ok or len(mended) >= max_mends:
            break
        if data and columns is None:
            columns = table_columns(data)
        fixed = mend(error or "", code, columns)
        if fixed is None:
            break
        code, change = fixed
        mended.append(change)
    return CodeAttempt(code=code, ok=ok, stdout=res.stdout, error=error, exit_reason=res.exit_reason,
                       mended=mended), res


def step_artifacts(res: Any, results: Sequence[ResultDict], file_store: FileStore) -> tuple[list, list[str]]:
    """The kept program's files under out/ (hierplan.tools.files.collect_artifacts), in the run's file store
    within the run's limit, and a line for each one left out."""
    outputs = getattr(res, "outputs", None) or {}
    skipped = [f"{name} was not kept: {size:,} bytes, over the limit per file"
               for name, size in (getattr(res, "outputs_skipped", None) or {}).items()]
    if not outputs:
        return [], skipped
    from hierplan.tools.files import collect_artifacts

    earlier = [a for r in results for a in r.get("artifacts") or []]
    kept, dropped = collect_artifacts(outputs, file_store, used=sum(a["size"] for a in earlier),
                                      seen={(a["name"], a["sha256"]) for a in earlier})
    return kept, skipped + dropped


def make_python_step(model: BaseChatModel, base: SamplingConfig, run_code: CodeRunner | None = None,
                     file_store: FileStore | None = None):
    """``file_store``: where the run's files are read from and its artifacts kept (hierplan.store.files; default
    this process's temporary store); ``run_code``: the sandbox over it, unless a caller gives another runner.
    A failing program (a syntax error, an exception, a timeout, no output) is shown to the model with its
    code, up to the run's ``max_repairs`` times; repairs sample warmer (config.WARM_TEMPERATURE), since at
    the code temperature the small model mostly sent the failed program back unchanged. A repair that still sends
    back a program that already failed ends the repairs: it is not run again (the small model was seen sending
    one failed program back on every repair, and again after a replan)."""
    examples = code_example_turns()
    file_store = file_store or process_store()
    run_code = run_code or sandbox_runner(file_store)

    def python_step(payload: StepPayload, runtime: Runtime[RunOptions]) -> AgentState:
        options = run_options(runtime.context)
        sampling = options.sampling(base)
        step = payload["step"]
        emit("steps_started", step_ids=[step["id"]], tool="python", batch=1)
        start = time.perf_counter()
        earlier = earlier_programs(payload["results"], payload["plan"], step)
        files = payload.get("files") or []
        data = None
        if files:  # the store's copies, checked against their sha256 (a FileStoreError line if one is not)
            from hierplan.tools.files import sandbox_data

            data = sandbox_data(files, file_store)
        messages = step_messages(payload, files, examples)
        attempts: list[CodeAttempt] = []
        columns: dict[str, list[str]] | None = None
        calls = []
        code_sampling = sampling.code_for(bool(files))
        repair_sampling = replace(code_sampling, temperature=max(code_sampling.temperature, WARM_TEMPERATURE))
        for attempt_no in range(options.max_repairs + 1):
            text, call = invoke_model(model, messages, repair_sampling if attempt_no else code_sampling,
                                      node="python_step", seed=sampling.seed, seed_key=(step["id"], attempt_no),
                                      stream=True, step_id=step["id"], attempt=attempt_no + 1)
            calls.append(call)
            code = strip_code_fences(text)
            if attempt_no and any(code == a.code for a in attempts):
                # sent back unchanged: it fails as it did, and asking again mostly gets the same program again
                emit("code_attempt", step_id=step["id"], attempt=attempt_no + 1, ok=False, repeated=True,
                     error="the repair repeated a program that failed", exit_reason="repeated")
                break
            attempt, res = run_with_outputs(code, run_code, earlier, data)
            attempts.append(attempt)
            emit("code_attempt", step_id=step["id"], attempt=attempt_no + 1, ok=attempt.ok, error=attempt.error,
                 exit_reason=attempt.exit_reason)
            if attempt.ok:
                break
            if data and columns is None:
                columns = table_columns(data)  # once a step, at its first failure
            hint = repair_hint(attempt.error or "", attempt.code, columns)
            messages = messages + [AIMessage(text), HumanMessage(prompts.CODE_REPAIR_USER.format(
                code=attempt.code, error=truncate(attempt.error or "", ERROR_CHARS_FOR_REPAIR), hint=hint))]
        last = attempts[-1]
        artifacts, left_out = step_artifacts(res, payload["results"], file_store) if last.ok else ([], [])
        output = last.stdout.strip() if last.ok else f"Python step failed: {last.error}"
        if left_out:  # not in the output: the number checks read the output's numbers
            emit("artifacts_left_out", step_id=step["id"], files=left_out)
        result = StepResult(
            step_id=step["id"], title=step["title"], tool=step["tool"], output=output,
            ok=last.ok, error=None if last.ok else last.error, code=last.code, stdout=last.stdout,
            attempts=attempts, calls=calls, seconds=round(time.perf_counter() - start, 3), artifacts=artifacts,
        )
        return {"results": [result.model_dump(mode="json")]}

    return python_step


def last_python_step(plan: PlanDict) -> int:
    """The id of the plan's last Python step: in a numeric task, the one whose number is the answer."""
    return max(s["id"] for s in plan["steps"] if s["tool"] == "python")
