"""Straight-line Python for repairs: after a reply that did not parse, held no code, printed nothing or read
a name it never set (NameError), the step's remaining repairs are asked under a grammar (the model's
``grammar=`` option, where it has one) that only derives a fenced program of ``name = expression`` lines and
``print(expression)`` lines, ending with a print; and (``python_scope=``, ``python_calls=``) whose
expressions read only names assigned on an earlier line or by the earlier steps' programs, and call only the
grammar's builtins.

Why: in the idle evaluation of the embedded model (docs/eval.md), 35 of 48 failed Python attempts were prose
instead of code, programs cut off mid-way by endless function definitions, or functions defined and never
called; repairs without a grammar mostly repeated the mistake. Later, with those mostly gone, 110 of 175
failed attempts were NameErrors, which a grammar alone cannot prevent (hierplan.models.name_scope can). In a
numeric task the grammar is arithmetic only. Under all this the embedded model's repairs nearly always run,
but mostly compute nothing the step asked for (docs/eval.md): the constraints make a program valid, not
right. The first attempt is never constrained: a capable model writes whatever program the step needs. A model takes a grammar when it says so
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
# invents were NameErrors.
_LINES = r'''
start: "```python\n" line{0,12} out{1,3} "```"
line: NAME " = " expr "\n"
expr: term (OP term){0,7}
OP: " + " | " - " | " * " | " / " | " // " | " % " | " ** "
BUILTIN: ''' + " | ".join(f'"{name}"' for name in GRAMMAR_BUILTINS) + r'''
KEYWORD: ''' + " | ".join(f'"{word}"' for word in [*keyword.kwlist, "print"]) + r'''
STATEMENT_START: /(def|for|while|import|from|return|lambda|class|if|with|try)[A-Za-z0-9_]*/
NAME: /[A-Za-z_][A-Za-z0-9_]{0,30}/ & ~KEYWORD & ~BUILTIN & ~STATEMENT_START
NUMBER: /[0-9]{1,12}(\.[0-9]{1,6})?/
'''

# Any step: calls, subscripts, methods, lists and short strings, so a text step (split, count, sort) fits too.
# No f-strings: the model left their braces unbalanced.
STRAIGHT_LINE_GRAMMAR = _LINES + r'''
out: "print(" args ")\n"
args: expr (", " expr){0,5}
term: "-"? atom trailer{0,3}
atom: NUMBER | NAME | STRING | CONSTANT | "(" expr ")" | "[" args? "]" | BUILTIN "(" args? ")"
trailer: "[" expr "]" | "." NAME "(" args? ")"
CONSTANT: "True" | "False" | "None"
STRING: /"[^"\\\n{}]{0,60}"/ | /'[^'\\\n{}]{0,60}'/
'''

# A step of a numeric task (tool_choice.is_numeric_task): numbers, names and arithmetic only, each builtin
# with the arguments it takes. Under the general grammar the embedded model's repairs of arithmetic failed on
# strings (float('John'), a str added to a float, '%' on a str) and on sum(5), len(5). round's places are a
# NUMBER: a digit terminal beside NUMBER made llguidance's parser give up (ParserTooComplex). Nesting is
# bounded by name_scope (MAX_DEPTH), not here: a grammar bounded by depth left dead ends for the names in scope.
ARITHMETIC_BUILTINS = ("round", "abs", "min", "max", "int", "float", "sum")
ARITHMETIC_GRAMMAR = _LINES + r'''
out: "print(" expr ")\n"
term: "-"? atom
atom: NUMBER | NAME | "(" expr ")" | ONE_ARGUMENT "(" expr ")" | "round(" expr (", " NUMBER)? ")"
    | SEVERAL_ARGUMENTS "(" expr (", " expr){1,5} ")" | "sum([" expr (", " expr){0,7} "])"
ONE_ARGUMENT: "abs" | "int" | "float"
SEVERAL_ARGUMENTS: "min" | "max"
'''

# What the repair request adds when it is generated under the grammar.
STRAIGHT_LINE_HINT = "Write it as plain lines: `name = expression` for each value, then `print(result)`."


def accepts_grammar(model: Any) -> bool:
    """Whether ``model`` takes ``grammar=`` (a Lark text), ``python_scope=`` and ``python_calls=`` as call
    options."""
    return bool(getattr(model, "accepts_grammar", False))


def repair_options(model: Any, earlier: Sequence[str], numeric: bool = False) -> dict[str, Any]:
    """The call options for a straight-line repair on ``model`` (none for a model without a grammar option):
    the grammar (arithmetic only in a ``numeric`` task); the names its expressions may read besides those the
    program assigns: what the ``earlier`` steps' programs (run first) leave (in a numeric task, values only: no
    functions, classes or modules) and constants; and the names it calls: the grammar's builtins (print starts
    a line, where the grammar alone decides)."""
    if not accepts_grammar(model):
        return {}
    if numeric:  # arithmetic calls no function of an earlier program: read as a value, one was a TypeError
        values = set().union(*(assigned_names(code, module_level=True, values_only=True) for code in earlier))
        return {"grammar": ARITHMETIC_GRAMMAR, "python_scope": sorted(values),
                "python_calls": sorted(ARITHMETIC_BUILTINS)}
    values = set().union(*(assigned_names(code, module_level=True) for code in earlier))
    return {"grammar": STRAIGHT_LINE_GRAMMAR, "python_scope": sorted(values | {"True", "False", "None"}),
            "python_calls": sorted(GRAMMAR_BUILTINS)}


def assigned_names(code: str, module_level: bool = False, values_only: bool = False) -> set[str]:
    """The names a program assigns, and (unless ``values_only``) the functions and classes it defines and the
    modules it imports: anywhere in it, or only those that exist once it has run (``module_level``: not the
    locals of functions, lambdas and comprehensions). None when it does not parse."""
    try:
        todo: list[ast.AST] = [ast.parse(code)]
    except SyntaxError:
        return set()
    names: set[str] = set()
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and not values_only:
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not values_only:
            names.add(node.name)
        if not (module_level and isinstance(node, _LOCAL_SCOPES)):
            todo.extend(ast.iter_child_nodes(node))
    return names


_LOCAL_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
                 ast.DictComp, ast.GeneratorExp)
