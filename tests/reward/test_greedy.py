"""Budgeted greedy over groups of units: lazy (Minoux) == plain, the (1 − 1/e) bound, stopping."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from raylake.reward import VARIANTS, igms_value, lazy_greedy, make_state, plain_greedy, reward


def instance(seed: int, diagonal: bool = True, overlap: bool = False):
    """Units with sparse supports, grouped into tables of 1–4 units (optionally sharing units)."""
    rng = np.random.default_rng(seed)
    n_groups, a = int(rng.integers(2, 14)), int(rng.integers(1, 8))
    sizes = rng.integers(1, 5, n_groups)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    N = int(bounds[-1])
    groups = [list(range(bounds[g], bounds[g + 1])) for g in range(n_groups)]
    if overlap:
        for g in groups:
            g.append(int(rng.integers(N)))
    M = rng.random((N, a)) * (rng.random((N, a)) < 0.4)
    if diagonal:
        C = np.diag(1.0 + rng.random(N) * 0.5)
    else:
        sets = [set(rng.choice(10, size=int(rng.integers(1, 5)), replace=False).tolist()) for _ in range(N)]
        C = np.array([[len(x & y) / len(x | y) for y in sets] for x in sets]) + 1e-2 * np.eye(N)
    mask = rng.random(a) < 0.4
    return M, C, groups, mask, int(rng.integers(1, n_groups + 1))


def options(variant: str, mask) -> dict:
    if variant == "r3_no_coupling":
        return {"variant": variant, "edge_mask": mask}
    if variant == "r1_linear":
        return {"variant": variant, "w_rel": 1.0, "w_cov": 2.0, "w_red": 0.5}
    return {"variant": variant}


def value_of(M, C, units, opts) -> float:
    u = list(units)
    kw = {k: v for k, v in opts.items() if k != "variant"}
    return reward(M[u], C[np.ix_(u, u)], opts["variant"], **kw)


# Every variant is submodular with diagonal C (R1: modular + max-coverage − pairwise sum).
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", range(25))
def test_lazy_equals_plain_when_submodular(variant, seed):
    M, C, groups, mask, budget = instance(seed, overlap=seed % 2 == 1)
    opts = options(variant, mask)
    min_gain = -math.inf if variant == "r1_linear" else 0.0
    lazy = lazy_greedy(M, C, groups, budget, min_gain=min_gain, **opts)
    plain = plain_greedy(M, C, groups, budget, min_gain=min_gain, **opts)
    assert lazy.groups == plain.groups
    assert lazy.units == plain.units
    np.testing.assert_allclose(lazy.gains, plain.gains, rtol=1e-12, atol=1e-15)
    assert lazy.value == pytest.approx(plain.value, rel=1e-12, abs=1e-15)
    assert lazy.evaluations <= plain.evaluations


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", range(10))
def test_result_is_consistent(variant, seed):
    """value = reward of the chosen units = Σ gains; units are unique; gains replay exactly."""
    M, C, groups, mask, budget = instance(seed, diagonal=seed % 2 == 0, overlap=True)
    opts = options(variant, mask)
    res = lazy_greedy(M, C, groups, budget, min_gain=-math.inf, **opts)
    assert len(res.groups) == min(budget, len(groups))
    assert len(set(res.units)) == len(res.units)
    assert set(res.units) == {u for g in res.groups for u in groups[g]}
    assert res.value == pytest.approx(value_of(M, C, res.units, opts), rel=1e-9, abs=1e-12)
    assert res.value == pytest.approx(sum(res.gains), rel=1e-9, abs=1e-12)
    kw = {k: v for k, v in opts.items() if k != "variant"}
    state, units = make_state(opts["variant"], M.shape[1], **kw), []
    for g, gain in zip(res.groups, res.gains):
        new = list(dict.fromkeys(u for u in groups[g] if u not in units))
        assert state.add_many(M[new], C[new][:, units + new]) == pytest.approx(gain, rel=1e-9, abs=1e-12)
        units += new


@pytest.mark.parametrize("seed", range(25))
def test_gains_fall_and_bound_holds(seed):
    """Diagonal C: greedy gains are non-increasing and U(greedy) >= (1 − 1/e)·U(best) (Sec. 4.1)."""
    M, C, groups, _, budget = instance(seed)
    groups, budget = groups[:8], min(budget, 3)  # keeps the brute force to <= 93 subsets
    res = lazy_greedy(M, C, groups, budget)
    assert all(x >= y - 1e-12 for x, y in itertools.pairwise(res.gains))
    best = max(
        igms_value(M[u], C[np.ix_(u, u)])
        for k in range(budget + 1)
        for combo in itertools.combinations(range(len(groups)), k)
        for u in [sorted({x for g in combo for x in groups[g]})]
    )
    assert res.value >= (1 - 1 / math.e) * best - 1e-12


@pytest.mark.parametrize("seed", range(10))
def test_min_gain_stops_early(seed):
    M, C, groups, _, _ = instance(seed)
    full = plain_greedy(M, C, groups, len(groups))
    assert lazy_greedy(M, C, groups, len(groups), min_gain=math.inf).groups == ()
    cut = full.gains[len(full.gains) // 2]
    for fn in (lazy_greedy, plain_greedy):
        res = fn(M, C, groups, len(groups), min_gain=cut + 1e-12)
        assert all(g >= cut + 1e-12 for g in res.gains)
        assert res.groups == full.groups[: len(res.groups)]
        assert len(res.groups) <= len(full.groups) // 2


@pytest.mark.parametrize("seed", range(10))
def test_correlated_covariance_still_gives_a_valid_selection(seed):
    """Jaccard C can break submodularity, so lazy may pick differently; what it returns still holds."""
    M, C, groups, _, budget = instance(seed, diagonal=False)
    res = lazy_greedy(M, C, groups, budget)
    assert len(res.groups) <= budget and len(set(res.groups)) == len(res.groups)
    assert all(g >= 0 for g in res.gains)
    assert res.value == pytest.approx(value_of(M, C, res.units, {"variant": "igms"}), rel=1e-9, abs=1e-12)


def test_edge_cases_and_errors():
    M, C = np.ones((3, 2)), np.eye(3) * 1.01
    assert lazy_greedy(M, C, [], 3).groups == ()
    assert plain_greedy(M, C, [[0, 1]], 0).value == 0.0
    res = lazy_greedy(M, C, [[0], [0]], 2)  # the second group adds nothing new
    assert res.groups == (0, 1) and res.gains[1] == 0.0 and res.units == (0,)
    with pytest.raises(ValueError):
        lazy_greedy(M, C, [[0, 3]], 1)
    with pytest.raises(ValueError):
        plain_greedy(M, np.eye(2), [[0]], 1)
