"""pytest fixtures over tests/pg_cluster.py: ``pg_cluster`` (one per session) and ``pg_url`` (a fresh database
per test). Import both into a test module: ``from pg import pg_cluster, pg_url  # noqa: F401``.

Where no cluster can start here the tests call needs.unavailable (a skip, or a failure under CI).
"""

from __future__ import annotations

import sys
from contextlib import ExitStack

import pytest

from needs import unavailable
from pg_cluster import PASSWORD, ClusterError, free_port, missing, running_cluster  # noqa: F401 (re-exported)


@pytest.fixture(scope="session")
def pg_cluster():
    if reason := missing():
        unavailable(reason)
    with ExitStack() as stack:
        try:
            cluster = stack.enter_context(running_cluster())
        except ClusterError as exc:
            unavailable(str(exc))
        yield cluster


@pytest.fixture
def pg_url(pg_cluster) -> str:
    """A URL (with the password) to a new, empty database on the session's cluster."""
    url = pg_cluster.url(pg_cluster.create_database())
    yield url
    store = sys.modules.get("hierplan.store.postgres")
    if store is not None:  # this process's pools for it (hierplan closes them at exit otherwise)
        store.close_pools(url)
