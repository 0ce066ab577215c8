"""hierplan: a local hierarchical planner agent on LangGraph.

Exports are lazy so that ``import hierplan`` (and ``hierplan --help``) never imports torch.
"""

from __future__ import annotations

import os
from typing import Any

# The transformers engine: how long torch's OpenMP threads spin before sleeping between kernels. libgomp's long
# default spin collapsed decode when another process shared the cores; sleeping at once halved it on free cores;
# a short spin kept most of both (measured on the earlier torch engine). llama.cpp uses its own thread pool.
# Read when torch starts: set before importing it. A user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")

__version__ = "0.1.0"
__all__ = ["build_graph", "load_chat_model", "open_checkpointer", "RunOptions", "SamplingConfig", "Sampling",
           "draw_run", "draw_run_image", "__version__"]

_EXPORTS = {
    "build_graph": "hierplan.graph.builder",
    "load_chat_model": "hierplan.models",
    "open_checkpointer": "hierplan.store",
    "RunOptions": "hierplan.options",
    "SamplingConfig": "hierplan.config",
    "Sampling": "hierplan.config",
    "draw_run": "hierplan.render.run_picture",
    "draw_run_image": "hierplan.render.run_picture",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'hierplan' has no attribute {name!r}")
