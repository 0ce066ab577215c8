"""A row's token choice (rows.py): top-p keeps exactly the nucleus, whether it lies in the first candidates
looked at or needs the full sort."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from hierplan.models.rows import TOP_P_CANDIDATES, Row, choose_token  # noqa: E402


def draws(logits, top_p: float, n: int = 400) -> list[int]:
    row = Row(ids=[0], max_new_tokens=n, temperature=1.0, top_p=top_p, seed=7)
    return [choose_token(row, logits.clone(), stop_ids=[]) for _ in range(n)]


def test_top_p_draws_only_from_the_nucleus():
    probs = torch.full((1000,), 0.05 / 997)
    probs[:3] = torch.tensor([0.5, 0.3, 0.15])  # 0.5 + 0.3 < 0.9 <= 0.95: the nucleus is tokens 0, 1, 2
    got = draws(probs.log(), top_p=0.9)
    assert set(got) == {0, 1, 2}


def test_top_p_over_a_flat_distribution_reaches_past_the_first_candidates():
    got = draws(torch.zeros(1000), top_p=0.9)  # the nucleus is 900 tokens, far more than TOP_P_CANDIDATES
    assert max(got) > TOP_P_CANDIDATES and len(set(got)) > 250
