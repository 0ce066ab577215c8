"""IFEval's official checkers (lm-eval 0.4.13, ``lm_eval/tasks/ifeval/``), loaded without lm-eval's task
registry (which imports datasets, torch and the rest). Bench-only: the product never imports this.

    make bench-deps     # lm-eval --no-deps, its checkers' four dependencies, NLTK's punkt_tab

Scores as the paper does: prompt-level and instruction-level accuracy, strict and loose.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path
from typing import Any

NLTK_DATA = Path(sys.prefix) / "share" / "nltk_data"


def _load():
    if "lm_eval.tasks.ifeval.utils" in sys.modules:
        return sys.modules["lm_eval.tasks.ifeval.utils"]
    spec = importlib.util.find_spec("lm_eval")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("lm-eval is not installed: run `make bench-deps`")
    root = Path(list(spec.submodule_search_locations)[0])
    os.environ.setdefault("NLTK_DATA", str(NLTK_DATA))
    for name, path in (("lm_eval", root), ("lm_eval.tasks", root / "tasks"),
                       ("lm_eval.tasks.ifeval", root / "tasks" / "ifeval")):
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__path__ = [str(path)]
            sys.modules[name] = module
    import lm_eval.tasks.ifeval.utils as utils

    return utils


def score(row: dict[str, Any], response: str) -> dict[str, Any]:
    """{"strict": bool, "loose": bool, "strict_each": [bool...], "loose_each": [bool...]} for one prompt."""
    utils = _load()
    inp = utils.InputExample(key=row["key"], instruction_id_list=row["instruction_id_list"], prompt=row["prompt"],
                             kwargs=row["kwargs"])
    strict = utils.test_instruction_following_strict(inp, response)
    loose = utils.test_instruction_following_loose(inp, response)
    return {"strict": strict.follow_all_instructions, "loose": loose.follow_all_instructions,
            "strict_each": list(strict.follow_instruction_list), "loose_each": list(loose.follow_instruction_list)}
