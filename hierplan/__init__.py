"""hierplan: a local hierarchical planner agent on LangGraph.

Exports are lazy so that ``import hierplan`` (and ``hierplan --help``) never imports torch.
"""

from __future__ import annotations

import os
from typing import Any

# How long torch's OpenMP threads spin before sleeping between kernels sets CPU decode speed (bench/omp_policy.py):
# libgomp's long default spin is fastest on free cores and collapses when another process shares them; sleeping
# at once (OMP_WAIT_POLICY=PASSIVE) survives sharing but halves decode on free cores (waking costs more than a
# small model's kernel). A short spin keeps most of the first. Read when torch starts: set before importing it.
# A user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")

__version__ = "0.1.0"
__all__ = ["build_graph", "load_chat_model", "open_checkpointer", "SamplingConfig", "Sampling", "draw_run",
           "draw_run_image", "__version__"]

_EXPORTS = {
    "build_graph": "hierplan.graph.builder",
    "load_chat_model": "hierplan.models",
    "open_checkpointer": "hierplan.store",
    "SamplingConfig": "hierplan.config",
    "Sampling": "hierplan.config",
    "draw_run": "hierplan.graph.run_picture",
    "draw_run_image": "hierplan.graph.run_picture",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'hierplan' has no attribute {name!r}")
