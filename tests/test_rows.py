"""A row's token choice (rows.py): top-p keeps exactly the nucleus, whether it lies among the first candidates
looked at or needs the full sort; ruled-out tokens are never drawn; draws follow the distribution."""

from __future__ import annotations

import math
from collections import Counter

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from hierplan.models.rows import NUCLEUS_FLOOR, Row, choose_token, nucleus  # noqa: E402


def draws(logits, top_p: float, n: int = 400, **row) -> list[int]:
    row = Row(ids=[0], max_new_tokens=n, temperature=1.0, top_p=top_p, seed=7, **row)
    return [choose_token(row, logits.clone(), stop_ids=[]) for _ in range(n)]


def test_top_p_draws_only_from_the_nucleus():
    probs = torch.full((1000,), 0.05 / 997)
    probs[:3] = torch.tensor([0.5, 0.3, 0.15])  # 0.5 + 0.3 < 0.9 <= 0.95: the nucleus is tokens 0, 1, 2
    got = draws(probs.log(), top_p=0.9)
    assert set(got) == {0, 1, 2}


def test_top_p_over_a_flat_distribution_keeps_nine_tenths_of_it():
    got = draws(torch.zeros(1000), top_p=0.9)  # the nucleus is 900 tokens: ties keep vocabulary order
    assert max(got) < 900 and len(set(got)) > 250


def test_the_nucleus_reaches_past_the_first_candidates_when_they_fall_short():
    # One token at 0 and 100k at -21 (below NUCLEUS_FLOOR): the first candidates are that one token, holding
    # 1 / (1 + 1e5 e^-21) of the mass; a top_p above that needs ~34k of the tail too.
    scaled = np.full(100_001, -21.0, dtype=np.float32)
    scaled[0] = 0.0
    assert -21.0 < NUCLEUS_FLOOR
    weights = np.exp(scaled)
    ids, kept = nucleus(scaled, weights, top_p=0.99995)
    total = 1 + 100_000 * math.exp(-21)
    expected = math.ceil((0.99995 * total - 1) / math.exp(-21))  # tail tokens until the mass reaches top_p
    assert ids[0] == 0 and abs(len(ids) - 1 - expected) < 0.01 * expected  # float32 sums: ~1e-7 of the mass
    assert list(ids[1:6]) == [1, 2, 3, 4, 5]
    assert nucleus(scaled, weights, top_p=0.9)[0].tolist() == [0]


def test_draws_follow_the_distribution_and_never_take_a_ruled_out_token():
    logits = torch.tensor([0.5, 0.3, 0.2, 0.0]).log()  # token 3 is ruled out (-inf), as a grammar does
    got = Counter(draws(logits, top_p=1.0, n=4000))
    assert 3 not in got
    for token, p in enumerate([0.5, 0.3, 0.2]):
        assert abs(got[token] / 4000 - p) < 0.03


def test_a_stop_token_is_not_drawn_before_min_new_tokens():
    logits = torch.tensor([5.0, 0.0, 0.0])  # token 0 would almost always come first
    row = Row(ids=[1], max_new_tokens=10, temperature=1.0, seed=3, min_new_tokens=5)
    assert all(choose_token(row, logits.clone(), stop_ids=[0]) != 0 for _ in range(20))  # unmasked: ~99% each


def test_a_row_with_every_token_ruled_out_is_a_bug_that_raises():
    row = Row(ids=[0], max_new_tokens=4, temperature=1.0, top_p=0.9, seed=1)
    with pytest.raises(ValueError, match="ruled out"):
        choose_token(row, torch.full((10,), float("-inf")), stop_ids=[])


def test_repetition_penalty_lowers_seen_tokens_and_greedy_takes_the_best_left():
    logits = torch.tensor([2.0, 1.95, -1.0])
    row = Row(ids=[0, 2], max_new_tokens=4, repetition_penalty=1.1)
    assert choose_token(row, logits.clone(), stop_ids=[]) == 1  # 2.0 / 1.1 < 1.95
    row = Row(ids=[0, 2], max_new_tokens=4)
    assert choose_token(row, logits.clone(), stop_ids=[]) == 0
