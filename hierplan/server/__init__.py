"""hierplan on LangGraph Server: langgraph.json points at ``hierplan.server:make_graph``.

Light at import time (the server imports this module to find the factory); the model loads on the first run.
"""

from __future__ import annotations

from hierplan.server.factory import make_graph

__all__ = ["make_graph"]
