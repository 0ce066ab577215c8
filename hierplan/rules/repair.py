"""One line of advice for a failed program, from its error and its code: what small models most often get wrong
(input(), a name from an earlier step or misspelt, a function defined and never called, the user's file looked
for elsewhere, a column the table does not have, text read as a number), said in the words the repair needs.
Told only the error, a small model mostly sends the same program back. Pure functions of their arguments."""

from __future__ import annotations

import ast
import difflib
import re
from typing import Mapping

NOTHING_PRINTED = "the program printed nothing; print the result"

# What small models most often get wrong, said in the words the repair needs: input(), names from earlier steps,
# functions defined but never called.
_HINTS = (
    ("EOFError", "input() cannot be used: nobody types anything. Write the values from the task into the code."),
    (NOTHING_PRINTED, "Call print() on the result. If you defined a function, call it and print what it returns."),
)


def repair_hint(error: str, code: str, columns: Mapping[str, list[str]] | None = None) -> str:
    """One line of advice for a known kind of failure (with its newline), else "". ``columns``: the user's
    files the run has, each with its table's column names (empty for a file that is not a table)."""
    missing = re.search(r"NameError: name '(\w+)' is not defined", error)
    if missing:
        return _name_hint(missing.group(1), code) + "\n"
    if columns and (hint := _data_hint(error, columns)):
        return hint + "\n"
    if text := _TEXT_NOT_NUMBER_RE.search(error):
        return (f"A value is text, not a number ({next(g for g in text.groups() if g)}): convert the column with pd.to_numeric(column, "
                "errors='coerce') (first removing characters such as ',' or '%' when the numbers carry them), or "
                "leave text columns out of the computation.\n")
    return next((hint + "\n" for key, hint in _HINTS if key in error), "")


# numpy/pandas: could not convert string to float: '1,2'; int(): invalid literal for int() with base 10: 'n/a';
# pd.to_numeric: Unable to parse string "x" at position 3
_TEXT_NOT_NUMBER_RE = re.compile(r"could not convert string to float: (.+)$|invalid literal for int\(\) with base "
                                 r"\d+: (.+)$|Unable to parse string (\".*?\")", re.M)
_NO_FILE_RE = re.compile(r"FileNotFoundError|No such file or directory")
# pandas: KeyError: 'Fare ', "None of [Index(['fare'], dtype='object')] are in the [columns]", "['x'] not in index"
_NO_COLUMN_RE = re.compile(r"KeyError: ['\"](?!None of )(.+?)['\"]\s*$|\[Index\(\[['\"](.+?)['\"]|\[['\"](.+?)['\"](?:, [^\]]*)?\] not in index",
                           re.M)


def _data_hint(error: str, columns: Mapping[str, list[str]]) -> str | None:
    """The user's files' paths when the program looked elsewhere; a table's real columns when it named one the
    table does not have (told only the error, a small model guesses another wrong name)."""
    if _NO_FILE_RE.search(error):
        return "The user's files are at: " + ", ".join(f"data/{name}" for name in columns) + "."
    match = _NO_COLUMN_RE.search(error)
    if not match:
        return None
    name = next(g for g in match.groups() if g)
    for file, cols in columns.items():
        if cols and name not in cols:
            close = difflib.get_close_matches(name, cols, n=1, cutoff=0.6)
            return (f"`{name}` is not a column of {file}" + (f"; did you mean `{close[0]}`?" if close else ".")
                    + " Its columns are: " + ", ".join(repr(c) for c in cols) + ".")
    return None


def _name_hint(name: str, code: str) -> str:
    """Name the missing name, and the defined one it is probably a misspelling of (Python 3.12's traceback
    says "Did you mean"; 3.11's does not). Told only the general rule, a small model repeats the same program."""
    close = difflib.get_close_matches(name, sorted(assigned_names(code)), n=1, cutoff=0.6)
    if close:
        return f"`{name}` is not defined; did you mean `{close[0]}`?"
    return (f"`{name}` is not defined in the program nor by an earlier step's program: give it its value from "
            f"the task first (`{name} = ...`), or do not use it.")


def assigned_names(code: str) -> set[str]:
    """The names a program assigns, the functions and classes it defines and the modules it imports (empty when
    it does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names
