"""Python steps share their names, like a notebook's cells: a step's program runs after the programs of the
earlier successful Python steps it builds on (directly or through other steps), their printed output hidden,
so a name an earlier step defined (``cost = 6``) exists in the next step's program.

Why: the embedded model's failed Python steps were mostly NameErrors for a value an earlier Python step had
computed under that very name (docs/eval.md), and telling it "write every value into the program" did not
stop it. Each sandbox run is a fresh process (nothing survives between steps), so the earlier programs run
again, in the order they ran; they succeeded once, and one that fails now is skipped (its names up to the
failure stay), never failing the step.
"""

from __future__ import annotations

from typing import Any

from hierplan.nodes.context import dependencies

# Runs in the sandbox child, in the program's own namespace; its names start with _hierplan_ so that no
# step program's names collide with them. The step runs as "<step>", registered in linecache so that a
# traceback shows its lines, numbered as in the program the model wrote.
_WRAPPER = """\
import contextlib as _hierplan_contextlib, io as _hierplan_io, linecache as _hierplan_linecache
for _hierplan_program in {programs!r}:
    with _hierplan_contextlib.redirect_stdout(_hierplan_io.StringIO()):
        try:
            exec(compile(_hierplan_program, "<earlier step>", "exec"), globals())
        except (Exception, SystemExit):
            pass
_hierplan_code = {code!r}
_hierplan_linecache.cache["<step>"] = (len(_hierplan_code), None, _hierplan_code.splitlines(True), "<step>")
del _hierplan_contextlib, _hierplan_io, _hierplan_linecache, _hierplan_program
exec(compile(_hierplan_code, "<step>", "exec"), globals())
"""


def earlier_programs(results: list[dict[str, Any]], plan: dict[str, Any], step: dict[str, Any]) -> list[str]:
    """The code of the successful Python steps ``step`` builds on, directly or through other steps, in the
    order they finished (a step finishes after everything it depends on)."""
    by_id = {s["id"]: s for s in plan["steps"]}
    wanted: set[int] = set()
    todo = list(dependencies(step, plan))
    while todo:
        step_id = todo.pop()
        if step_id not in wanted:
            wanted.add(step_id)
            if step_id in by_id:
                todo += dependencies(by_id[step_id], plan)
    return [r["code"] for r in results
            if r["step_id"] in wanted and r.get("tool") == "python" and r.get("ok") and r.get("code")]


def with_earlier_programs(code: str, programs: list[str]) -> str:
    """The program the sandbox runs: ``programs`` first, silently, then ``code`` (unchanged when none)."""
    if not programs:
        return code
    return _WRAPPER.format(programs=list(programs), code=code)
