"""One line of advice for a failed program, from its error and its code: what small models most often get wrong
(input(), a name from an earlier step or misspelt, a function defined and never called, the user's file looked
for elsewhere, a column the table does not have, text read as a number), said in the words the repair needs.
Told only the error, a small model mostly sends the same program back. Pure functions of their arguments.

Three of those failures have one right fix that needs no model (``mend``): a library used by its usual short
name and never imported ("np"), the user's file read under another spelling of its name ("data/sales_2024.csv"
for "sales 2024.csv") or, with one file, under a name it does not have, and a column named in another spelling
("air_pressure" for "air pressure"). Asked to repair them, a small model often sends the same mistake back."""

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
_NOT_IN_INDEX_RE = re.compile(r"\[['\"](.+?)['\"](?:, [^\]]*)?\] not (?:in index|found in axis)")


def _missing_column(error: str) -> str | None:
    """The first column name a pandas KeyError says the table lacks."""
    match = _NOT_IN_INDEX_RE.search(error) or _NO_COLUMN_RE.search(error)
    return next(g for g in match.groups() if g) if match else None


def _data_hint(error: str, columns: Mapping[str, list[str]]) -> str | None:
    """The user's files' paths when the program looked elsewhere; a table's real columns when it named one the
    table does not have (told only the error, a small model guesses another wrong name)."""
    if _NO_FILE_RE.search(error):
        return "The user's files are at: " + ", ".join(f"data/{name}" for name in columns) + "."
    name = _missing_column(error)
    if name is None:
        return None
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


# A library's usual short name (how programs and their examples spell it) and the import that defines it.
CONVENTIONAL_IMPORTS = {
    "np": "import numpy as np", "pd": "import pandas as pd", "plt": "import matplotlib.pyplot as plt",
    "sns": "import seaborn as sns", "sm": "import statsmodels.api as sm", "stats": "from scipy import stats",
    "scipy": "import scipy.stats", "numpy": "import numpy", "pandas": "import pandas", "math": "import math",
    "statistics": "import statistics", "re": "import re", "json": "import json", "datetime": "import datetime",
    "collections": "import collections", "itertools": "import itertools", "os": "import os",
}
_MISSING_NAME_RE = re.compile(r"NameError: name '(\w+)' is not defined")
_MISSING_PATH_RE = re.compile(r"No such file or directory: '([^'\n]+)'")


def mend(error: str, code: str, columns: Mapping[str, list[str]] | None = None) -> tuple[str, str] | None:
    """(the program fixed, what changed in one line) when its failure has one right fix (the module's
    docstring), else None. ``columns``: the run's files, each with its table's column names."""
    name = _MISSING_NAME_RE.search(error)
    if name and name.group(1) in CONVENTIONAL_IMPORTS and name.group(1) not in assigned_names(code):
        line = CONVENTIONAL_IMPORTS[name.group(1)]
        return f"{line}\n{code}", f"added `{line}`"
    if not columns:
        return None
    path = _MISSING_PATH_RE.search(error)
    if path:
        file = _file_meant(path.group(1), list(columns))
        return _replace_literal(code, path.group(1), f"data/{file}") if file else None
    wrong = _missing_column(error) if "KeyError" in error else None
    if wrong:
        every = {c for cols in columns.values() for c in cols}
        meant = {c for c in every if _spelling(c) == _spelling(wrong)}
        if wrong not in every and len(meant) == 1:
            return _replace_literal(code, wrong, meant.pop())
    return None


def _spelling(name: str) -> str:
    """A name without its case, spaces, underscores, hyphens and dots: the parts that vary when it is retyped."""
    return re.sub(r"[\W_]+", "", name.casefold())


def _file_meant(path: str, names: list[str]) -> str | None:
    """The run's file a missing ``path`` means: the one whose name is spelt the same but for case and separators
    (its extension may be left off), else the run's only file."""
    asked = path.replace("\\", "/").rsplit("/", 1)[-1]
    same = [n for n in names if _spelling(asked) in (_spelling(n), _spelling(n.rsplit(".", 1)[0]))]
    if len(same) == 1:
        return same[0]
    return names[0] if len(names) == 1 else None


def _replace_literal(code: str, old: str, new: str) -> tuple[str, str] | None:
    """``code`` with every string literal ``old`` (in single or double quotes) written as ``new``; None when it
    has none (the name was built, not written)."""
    pattern = re.compile(r"""(?<![\w'"])(['"])""" + re.escape(old) + r"\1")
    if not pattern.search(code):
        return None
    return pattern.sub(lambda m: repr(new), code), f"{old!r} read as {new!r}"
