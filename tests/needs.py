"""Tests that need a real outside component (a Postgres server, a model server, LangGraph Server, Ray).

Where this machine lacks the component the test skips with the reason; CI (``.ci/run``) installs everything and
sets HIERPLAN_REQUIRE_SERVERS=1, which turns those skips into failures, so CI always runs them.
"""

from __future__ import annotations

import os

import pytest

REQUIRE_ENV = "HIERPLAN_REQUIRE_SERVERS"


def required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail with it where the environment promises every component is there."""
    if required():
        pytest.fail(f"{reason} (and {REQUIRE_ENV}=1 says it must be there)", pytrace=False)
    pytest.skip(reason)
