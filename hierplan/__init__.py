"""hierplan: a local hierarchical planner agent on LangGraph.

Exports are lazy so that ``import hierplan`` (and ``hierplan --help``) never imports torch.
"""

from __future__ import annotations

import os
from typing import Any

# Spinning OpenMP threads collapse torch's CPU decode when the cores are shared (parallel Python steps,
# other processes): measured 0.4 vs 5.9 tok/s on 2 busy cores. Must be set before torch is first imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
__all__ = ["build_graph", "load_chat_model", "open_checkpointer", "SamplingConfig", "Sampling", "__version__"]

_EXPORTS = {
    "build_graph": "hierplan.graph.builder",
    "load_chat_model": "hierplan.models.loader",
    "open_checkpointer": "hierplan.store",
    "SamplingConfig": "hierplan.config",
    "Sampling": "hierplan.config",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'hierplan' has no attribute {name!r}")
