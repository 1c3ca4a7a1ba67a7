"""IGMS (GRAFT Eq. 6): incremental state against the from-scratch value, Props. 1–3, variants."""
from __future__ import annotations

import numpy as np
import pytest

from raylake.reward import VARIANTS, IGMSState, igms_value, make_state, reward

SEEDS = range(40)


def column_sets(rng, q: int, universe: int = 12) -> list[set[int]]:
    return [set(rng.choice(universe, size=int(rng.integers(1, 6)), replace=False).tolist()) for _ in range(q)]


def jaccard(sets) -> np.ndarray:
    return np.array([[len(x & y) / len(x | y) for y in sets] for x in sets]).reshape(len(sets), len(sets))


def instance(seed: int, q: int | None = None, a: int | None = None, sigma0_sq: float = 1e-2, diagonal=False):
    """Random (M, C): sparse supports in [0, 1], C = column-set Jaccard + σ₀²·I (or diagonal)."""
    rng = np.random.default_rng(seed)
    q = int(rng.integers(1, 30)) if q is None else q
    a = int(rng.integers(1, 10)) if a is None else a
    M = rng.random((q, a)) * (rng.random((q, a)) < 0.5)
    C = np.eye(q) if diagonal else jaccard(column_sets(rng, q))
    return M, C + sigma0_sq * np.eye(q)


def naive(M, C) -> float:
    return np.linalg.slogdet(np.eye(M.shape[1]) + M.T @ np.linalg.inv(C) @ M)[1] / M.shape[1]


def build(M, C, sigma0_sq=1e-2, **kw) -> IGMSState:
    st = IGMSState(M.shape[1], sigma0_sq, **kw)
    for i in range(len(M)):
        st.add(M[i], C[i, :i], C[i, i])
    return st


# --- from scratch -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_value_matches_the_definition(seed):
    M, C = instance(seed)
    assert igms_value(M, C) == pytest.approx(naive(M, C), rel=1e-10, abs=1e-14)


def test_empty_set_is_zero():
    assert igms_value(np.zeros((0, 4)), np.zeros((0, 0))) == 0.0
    assert IGMSState(4).value == 0.0


@pytest.mark.parametrize("M, C", [(np.zeros((2, 0)), np.eye(2)), (np.zeros((2, 3)), np.eye(3)), (np.zeros(3), np.eye(3))])
def test_value_rejects_bad_shapes(M, C):
    with pytest.raises(ValueError):
        igms_value(M, C)


def test_value_rejects_a_covariance_that_is_not_positive_definite():
    with pytest.raises(np.linalg.LinAlgError):
        igms_value(np.ones((2, 1)), np.ones((2, 2)))


# --- incremental == from scratch ------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_incremental_equals_scratch_in_random_order(seed):
    M, C = instance(seed, q=25)
    order = np.random.default_rng(1000 + seed).permutation(len(M))
    M, C = M[order], C[np.ix_(order, order)]
    st = IGMSState(M.shape[1], capacity=4)  # small capacity: growth is exercised too
    for i in range(len(M)):
        before = st.value
        gain = st.add(M[i], C[i, :i], C[i, i])
        expected = igms_value(M[: i + 1], C[: i + 1, : i + 1])
        assert st.q == i + 1
        assert st.value == pytest.approx(expected, rel=1e-9, abs=1e-14)
        assert gain == pytest.approx(st.value - before, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("seed", range(10))
def test_add_many_layouts_agree(seed):
    M, C = instance(seed, q=12)
    q0 = 5
    one = build(M[:q0], C[:q0, :q0])
    two = one.copy()
    g1 = one.add_many(M[q0:], C[q0:])  # full (q+k) × (q+k) covariance: last k rows
    g2 = two.add_many(M[q0:], C[q0:, :])  # (k, q+k) rows
    upper = C[q0:].copy()
    for i in range(len(M) - q0):
        upper[i, q0 + i + 1 :] = np.nan
    three = build(M[:q0], C[:q0, :q0])
    g3 = three.add_many(M[q0:], upper)  # entries right of the diagonal are never read
    assert g1 == pytest.approx(g2, rel=1e-12) and g1 == pytest.approx(g3, rel=1e-12)
    assert one.value == pytest.approx(igms_value(M, C), rel=1e-9)
    assert IGMSState(M.shape[1]).add_many(M, C) == pytest.approx(igms_value(M, C), rel=1e-9)


def test_add_many_rejects_bad_layouts():
    st = build(*instance(0, q=3, a=2))
    with pytest.raises(ValueError):
        st.add_many(np.ones((2, 2)), np.ones((2, 4)))
    with pytest.raises(ValueError):
        st.add_many(np.ones((2, 3)), np.ones((2, 5)))


def test_add_accepts_sequences_and_defaults():
    st = IGMSState(2, sigma0_sq=0.5)
    assert st.add([1.0, 0.0]) == pytest.approx(np.log1p(1 / 1.5) / 2)
    st.add([0, 1], [0.25])  # integers are read as reals
    C = np.array([[1.5, 0.25], [0.25, 1.5]])
    assert st.value == pytest.approx(igms_value(np.eye(2), C))
    with pytest.raises(ValueError):
        st.add([1.0, 0.0, 0.0], [0.0, 0.0])
    with pytest.raises(ValueError):
        st.add([1.0, 0.0], [0.0])
    assert st.q == 2


def test_copy_is_independent():
    M, C = instance(3, q=10)
    st = build(M[:6], C[:6, :6])
    cp = st.copy()
    cp.add_many(M[6:], C[6:])
    assert st.q == 6 and st.value == pytest.approx(igms_value(M[:6], C[:6, :6]), rel=1e-12)
    assert cp.value == pytest.approx(igms_value(M, C), rel=1e-9)
    st.add(M[6], C[6, :6], C[6, 6])
    assert cp.value == pytest.approx(igms_value(M, C), rel=1e-9)


def test_grows_far_past_capacity():
    M, C = instance(5, q=150, a=6)
    assert build(M, C, capacity=1).value == pytest.approx(igms_value(M, C), rel=1e-9)


# --- Prop. 1: every marginal gain is >= 0 ----------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_gains_are_nonnegative(seed):
    M, C = instance(seed, q=30, sigma0_sq=[1e-1, 1e-2, 1e-4][seed % 3])
    st = IGMSState(M.shape[1], sigma0_sq=[1e-1, 1e-2, 1e-4][seed % 3])
    for i in range(len(M)):
        assert (st.gains(M[i:], C[i:, :i], np.diag(C)[i:]) >= 0).all()
        assert st.add(M[i], C[i, :i], C[i, i]) >= 0


# --- batched gains == individual adds -----------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_batched_gains_equal_individual_adds(seed):
    M, C = instance(seed, q=30)
    q = int(np.random.default_rng(seed).integers(0, 20))
    st = build(M[:q], C[:q, :q])
    s = np.diag(C)[q:]
    for self_cov, per_unit in ((s, s), (None, np.full(len(s), 1.01)), (1.01, np.full(len(s), 1.01))):
        got = st.gains(M[q:], C[q:, :q], self_cov, backend="cpu")
        want = [st.copy().add(M[i], C[i, :q], per_unit[i - q]) for i in range(q, len(M))]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert st.q == q  # gains leave the state alone


def test_gains_on_the_empty_prefix_and_bad_shapes():
    st = IGMSState(3, sigma0_sq=0.25)
    Mb = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(st.gains(Mb), [np.log1p(2 / 1.25) / 3, 0.0])
    assert st.gains(np.zeros((0, 3))).shape == (0,)
    with pytest.raises(ValueError):
        st.gains(np.ones((2, 2)))
    st.add([1.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        st.gains(Mb, np.zeros((2, 2)))


# --- Prop. 2: submodular when the noise is uncorrelated (diagonal C) ------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_submodular_with_diagonal_covariance(seed):
    M, C = instance(seed, q=24, diagonal=True)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(M))
    t = int(rng.integers(1, 16))
    s = int(rng.integers(0, t + 1))
    T, Z = order[:t], order[16:]
    small, big = build(M[T[:s]], C[np.ix_(T[:s], T[:s])]), build(M[T], C[np.ix_(T, T)])
    g_small = small.gains(M[Z], None, np.diag(C)[Z])
    g_big = big.gains(M[Z], None, np.diag(C)[Z])
    assert (g_small >= g_big - 1e-12).all()


def test_correlated_noise_can_break_submodularity():
    """Not a bug, a property of Eq. 6 that Prop. 2 misses (why lazy greedy is exact only for diagonal C).

    Two units over the same columns (Jaccard 1) with different supports: their noise is
    almost the same, so their difference observes θ almost noise-free and the second unit
    gains more after the first than alone.
    """
    s2 = 1e-2
    m1, m2 = np.array([1.0, 0.0]), np.array([0.5, 0.0])
    alone = IGMSState(2, s2).add(m2)
    st = IGMSState(2, s2)
    st.add(m1)
    assert st.add(m2, [1.0]) > 5 * alone


# --- Prop. 3: redundancy suppression ------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_duplicate_unit_gains_almost_nothing(seed):
    """A unit with the first unit's column set and support row gains <= 1e-3 of its gain (σ₀² = 1e-4).

    The prefix has distinct column sets; see the next test for why that matters.
    """
    s2 = 1e-4
    rng = np.random.default_rng(seed)
    q, a = int(rng.integers(1, 20)), int(rng.integers(1, 10))
    sets: list[set[int]] = []
    while len(sets) < q:
        sets += [x for x in column_sets(rng, 1) if x not in sets]
    M = rng.random((q, a)) * (rng.random((q, a)) < 0.5)
    M[0, rng.integers(a)] = 1.0  # the duplicated unit supports something
    C = jaccard(sets) + s2 * np.eye(q)
    st = IGMSState(a, s2)
    first = st.add(M[0], None, C[0, 0])
    for i in range(1, q):
        st.add(M[i], C[i, :i], C[i, i])
    dup = st.gains(M[:1], jaccard(sets + [sets[0]])[-1:, :q], 1 + s2)[0]
    assert 0 <= dup <= 1e-3 * first


def test_duplicate_is_not_suppressed_beside_a_same_columns_unit_with_other_support():
    """Where Prop. 3 does not hold: the prefix holds two units over the same columns with
    different supports. Their difference observes θ through jitter only (variance 2σ₀²), and
    one more copy of either halves that jitter, which is worth a finite gain however small σ₀²."""
    s2 = 1e-4
    st = IGMSState(2, s2)
    first = st.add([1.0, 0.0])
    st.add([0.0, 1.0], [1.0])
    assert st.gains(np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]]))[0] > 0.1 * first


def test_gain_falls_as_column_overlap_grows():
    """Prop. 3 for a one-unit prefix: the gain of a same-support unit is non-increasing in ρ → 0."""
    m = np.array([0.9, 0.3, 0.0])
    st = IGMSState(3, 1e-4)
    st.add(m)
    rhos = np.linspace(0, 1, 21)
    g = st.gains(np.tile(m, (len(rhos), 1)), rhos[:, None])
    assert (np.diff(g) <= 1e-15).all()
    assert g[-1] < 1e-4 * g[0]


# --- Table 7 variants ---------------------------------------------------------------------


def test_variants_rejects_unknown_names_and_missing_mask():
    M, C = instance(0, q=3, a=2)
    with pytest.raises(ValueError):
        reward(M, C, "r9")
    with pytest.raises(ValueError):
        make_state("r9", 2)
    with pytest.raises(ValueError):
        reward(M, C, "r3_no_coupling")
    with pytest.raises(ValueError):
        make_state("r3_no_coupling", 2, edge_mask=[True])


@pytest.mark.parametrize("seed", range(15))
def test_r2_is_igms_without_off_diagonals(seed):
    M, C = instance(seed)
    assert reward(M, C, "r2_no_redundancy") == pytest.approx(igms_value(M, np.diag(np.diag(C))), rel=1e-12)
    Md, Cd = instance(seed, diagonal=True)
    assert reward(Md, Cd, "r2_no_redundancy") == pytest.approx(reward(Md, Cd, "igms"), rel=1e-12)


@pytest.mark.parametrize("seed", range(15))
def test_r3_degenerate_cases_are_igms(seed):
    M, C = instance(seed)
    a = M.shape[1]
    for mask in (np.ones(a, bool), np.zeros(a, bool)):
        assert reward(M, C, "r3_no_coupling", mask) == pytest.approx(igms_value(M, C), rel=1e-12)
    # Diagonal C and units that each support one side only: MᵀC⁻¹M has no edge–node block.
    Md, Cd = instance(seed, a=max(a, 2), diagonal=True)
    mask = np.arange(Md.shape[1]) < Md.shape[1] // 2
    Md[::2, mask] = 0.0
    Md[1::2, ~mask] = 0.0
    assert reward(Md, Cd, "r3_no_coupling", mask) == pytest.approx(igms_value(Md, Cd), rel=1e-12)
    # Fischer's inequality: dropping the coupling never lowers the log-determinant.
    assert reward(M, C, "r3_no_coupling", mask[:a] if a >= 2 else [True]) >= igms_value(M, C) - 1e-12


@pytest.mark.parametrize("seed", range(15))
def test_r4_degenerate_cases_are_igms(seed):
    M, C = instance(seed)
    assert reward(M[:1], C[:1, :1], "r4_additive") == pytest.approx(igms_value(M[:1], C[:1, :1]), rel=1e-12)
    a = M.shape[1]
    Mo = np.eye(a) * np.random.default_rng(seed).random(a)  # orthogonal rows, diagonal C
    Co = np.diag(1 + np.random.default_rng(seed).random(a))
    assert reward(Mo, Co, "r4_additive") == pytest.approx(igms_value(Mo, Co), rel=1e-12)


def test_r1_formula():
    M = np.array([[0.2, 0.8], [0.6, 0.1]])
    C = np.array([[1.01, 0.5], [0.5, 1.01]])
    rel, cov, red = 0.8 + 0.6, 0.6 + 0.8, 0.5
    assert reward(M, C, "r1_linear") == pytest.approx((rel + cov - red) / 2)
    assert reward(M, C, "r1_linear", w_rel=2.0, w_cov=0.5, w_red=3.0) == pytest.approx((2 * rel + 0.5 * cov - 3 * red) / 2)
    assert reward(M[:0], C[:0, :0], "r1_linear") == 0.0


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", range(8))
def test_variant_states_match_scratch(variant, seed):
    M, C = instance(seed, q=15)
    a = M.shape[1]
    mask = np.random.default_rng(seed).random(a) < 0.4
    kw = {"edge_mask": mask} if variant == "r3_no_coupling" else {}
    weights = {"w_rel": 0.7, "w_cov": 1.3, "w_red": 0.4} if variant == "r1_linear" else {}
    st = make_state(variant, a, 1e-2, capacity=2, **kw, **weights)
    for i in range(len(M)):
        cand = st.gains(M[i:], C[i:, :i], np.diag(C)[i:])
        gain = st.copy().add(M[i], C[i, :i], C[i, i])
        assert cand[0] == pytest.approx(gain, rel=1e-10, abs=1e-14)
        before = st.value
        assert st.add(M[i], C[i, :i], C[i, i]) == pytest.approx(gain, rel=1e-12, abs=1e-15)
        assert st.q == i + 1
        expected = reward(M[: i + 1], C[: i + 1, : i + 1], variant, **kw, **weights)
        assert st.value == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert st.value - before == pytest.approx(gain, rel=1e-9, abs=1e-12)
    fresh = make_state(variant, a, 1e-2, **kw, **weights)
    assert fresh.add_many(M, C) == pytest.approx(reward(M, C, variant, **kw, **weights), rel=1e-9, abs=1e-12)
