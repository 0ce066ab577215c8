"""Straight-line Python for repairs: after a reply that did not parse, held no code, printed nothing or read
a name it never set (NameError), the step's remaining repairs are asked under a grammar (the model's
``grammar=`` option, where it has one) that only derives a fenced program of ``name = expression`` lines and
``print(expression)`` lines, ending with a print; and (``python_scope=``) whose expressions read only names
assigned on an earlier line or by the earlier steps' programs, the grammar's builtins and constants.

Why: in the idle evaluation of the embedded model (docs/eval.md), 35 of 48 failed Python attempts were prose
instead of code, programs cut off mid-way by endless function definitions, or functions defined and never
called; repairs without a grammar mostly repeated the mistake. Later, with those mostly gone, 110 of 175
failed attempts were NameErrors, which a grammar alone cannot prevent (hierplan.models.name_scope can). Expressions keep calls, subscripts, attributes,
lists and short strings, so a text step (split, count, sort) fits too. The first attempt is never
constrained: a capable model writes whatever program the step needs. A model takes a grammar when it says so
(``accepts_grammar``: hierplan's local model does); others, remote servers included (their grammar fields
differ: vLLM reads Lark, llama.cpp's server GBNF, most servers none), get the same repair unconstrained.
"""

from __future__ import annotations

import ast
import keyword
from typing import Any, Sequence

# The builtins a straight-line program may call (the only calls besides methods): calls to names the model
# invents were NameErrors.
GRAMMAR_BUILTINS = ("round", "abs", "min", "max", "int", "float", "sum", "len", "sorted", "str", "list", "range")

# Lark, as llguidance reads it. Bounded (lines, terms, names, literals) so that a program ends inside the code
# step's token budget. A name is never a keyword nor starts like a statement (`def`, `for` ...: under the
# grammar the embedded model turned `def f` into the name `deff`), nor is it `print` (only print lines call it)
# or a builtin the grammar lists; only those builtins and methods are called, since calls to names the model
# invents were NameErrors. No f-strings: the model left their braces unbalanced.
STRAIGHT_LINE_GRAMMAR = r'''
start: "```python\n" line{0,12} out{1,3} "```"
line: NAME " = " expr "\n"
out: "print(" args ")\n"
args: expr (", " expr){0,5}
expr: term (OP term){0,7}
term: "-"? atom trailer{0,3}
atom: NUMBER | NAME | STRING | CONSTANT | "(" expr ")" | "[" args? "]" | BUILTIN "(" args? ")"
trailer: "[" expr "]" | "." NAME "(" args? ")"
OP: " + " | " - " | " * " | " / " | " // " | " % " | " ** "
CONSTANT: "True" | "False" | "None"
BUILTIN: ''' + " | ".join(f'"{name}"' for name in GRAMMAR_BUILTINS) + r'''
KEYWORD: ''' + " | ".join(f'"{word}"' for word in [*keyword.kwlist, "print"]) + r'''
STATEMENT_START: /(def|for|while|import|from|return|lambda|class|if|with|try)[A-Za-z0-9_]*/
NAME: /[A-Za-z_][A-Za-z0-9_]{0,30}/ & ~KEYWORD & ~BUILTIN & ~STATEMENT_START
NUMBER: /[0-9]{1,12}(\.[0-9]{1,6})?/
STRING: /"[^"\\\n{}]{0,60}"/ | /'[^'\\\n{}]{0,60}'/
'''

# What the repair request adds when it is generated under the grammar.
STRAIGHT_LINE_HINT = "Write it as plain lines: `name = expression` for each value, then `print(result)`."


def accepts_grammar(model: Any) -> bool:
    """Whether ``model`` takes ``grammar=`` (a Lark text) and ``python_scope=`` as call options."""
    return bool(getattr(model, "accepts_grammar", False))


def repair_options(model: Any, earlier: Sequence[str]) -> dict[str, Any]:
    """The call options for a straight-line repair on ``model`` (none for a model without a grammar option):
    the grammar, and the names its expressions may read besides those the program assigns: what the
    ``earlier`` steps' programs (run first) assign, the builtins the grammar calls, ``print`` and constants."""
    if not accepts_grammar(model):
        return {}
    names = set().union(*map(assigned_names, earlier)) | {*GRAMMAR_BUILTINS, "print", "True", "False", "None"}
    return {"grammar": STRAIGHT_LINE_GRAMMAR, "python_scope": sorted(names)}


def assigned_names(code: str) -> set[str]:
    """The names a program assigns, defines or imports, anywhere in it; none when it does not parse."""
    try:
        nodes = list(ast.walk(ast.parse(code)))
    except SyntaxError:
        return set()
    names = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names |= {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    names |= {(alias.asname or alias.name).split(".")[0] for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))
              for alias in n.names}
    return names
