"""The Postgres checkpointer LangGraph Server plugs in through langgraph.json's ``checkpointer`` key.

langgraph.json: ``"checkpointer": {"path": "hierplan.server.checkpointer.postgres_checkpointer"}`` (a dotted
path: langgraph-api 0.16.7 splits a module path on its last "."). The server calls this function once per
event loop and enters the async context manager it returns; the database URL comes from $HIERPLAN_SERVER_DB
so that no password is written into langgraph.json.
"""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from typing import AsyncIterator

DB_ENV = "HIERPLAN_SERVER_DB"
# Connections the server's runs share; each running graph step holds one only while it writes.
POOL_MAX_SIZE = 16


def postgres_checkpointer():
    """The server's entry point: an async context manager giving a set-up AsyncPostgresSaver."""
    url = os.environ.get(DB_ENV)
    if not url:
        raise RuntimeError(f"${DB_ENV} is not set: hierplan serve --db postgresql://... sets it")
    return _saver(url)


@asynccontextmanager
async def _saver(url: str) -> AsyncIterator[object]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    # The settings langgraph-checkpoint-postgres documents for a pool: autocommit, no prepared statements
    # (safe behind pgbouncer), rows as dicts.
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(url, min_size=1, max_size=POOL_MAX_SIZE, kwargs=kwargs, open=False) as pool:
        saver = AsyncPostgresSaver(pool)
        await saver.setup()  # creates or migrates its tables; a no-op once done
        yield saver
