"""The layers stay apart: the rules import no LangChain or LangGraph, and the product never imports its
evaluation (hierplan.eval imports the product, not the reverse)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hierplan"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_product_never_imports_its_evaluation():
    offenders = [str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*.py")
                 if "eval" not in p.relative_to(PACKAGE).parts[:1]
                 and any(m == "hierplan.eval" or m.startswith("hierplan.eval.") for m in imported_modules(p))]
    assert offenders == []


def test_the_rules_import_no_langchain_or_langgraph():
    code = ("import sys, pkgutil, importlib, hierplan.rules as r\n"
            "for m in pkgutil.iter_modules(r.__path__): importlib.import_module('hierplan.rules.' + m.name)\n"
            "print(sorted(k for k in sys.modules if k.split('.')[0] in ('langchain_core', 'langgraph', 'pydantic')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
