"""`hierplan eval --ray` on a Postgres run database (the several-machines set-up, on one machine): a real local
Ray cluster and a throwaway PostgreSQL cluster (tests/pg.py); an actor killed mid-task resumes from the
checkpoints in Postgres."""

from __future__ import annotations

from pg import pg_cluster, pg_url  # noqa: F401 - fixtures
from ray_support import (KILLED_TASK, assert_resumed_not_restarted, kill_mid_task,  # noqa: F401 - fixture
                         ray_cluster)


def test_actor_killed_mid_task_resumes_from_its_postgres_checkpoint(ray_cluster, pg_url, tmp_path):
    from hierplan.store import open_checkpointer, read_checkpoint

    records, killed, log = kill_mid_task(tmp_path, 6, db=pg_url)
    assert_resumed_not_restarted(records, killed, log, 6)
    assert not (tmp_path / "runs.sqlite").exists()  # the checkpoints went to Postgres, nowhere else
    saved = read_checkpoint(open_checkpointer(pg_url), f"t-{KILLED_TASK}", pg_url)
    assert [r["step_id"] for r in saved["results"]] == [1, 2, 3]
