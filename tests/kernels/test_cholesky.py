"""Kernels of raylake.kernels.cholesky against dense numpy factorizations."""
from __future__ import annotations

import numpy as np
import pytest

from raylake.kernels import cholesky as k


def spd(rng, n: int) -> np.ndarray:
    A = rng.standard_normal((n, n))
    return A @ A.T / n + 0.1 * np.eye(n)


def dense_factors(C, M, cap: int):
    """Packed ``L`` and ``F = [R; W]`` of the prefix ``(M, C)`` from dense numpy factorizations."""
    q, a = M.shape
    L = np.linalg.cholesky(C) if q else np.zeros((0, 0))
    Lp = np.zeros(k.packed_size(cap))
    Lp[: k.packed_size(q)] = L[np.tril_indices(q)]
    W = np.linalg.solve(L, M) if q else np.zeros((0, a))
    F = np.zeros((a + cap, a))
    F[:a] = np.linalg.cholesky(np.eye(a) + W.T @ W).T
    F[a : a + q] = W
    return Lp, F


def logdet_j(M, C) -> float:
    return np.linalg.slogdet(np.eye(M.shape[1]) + M.T @ np.linalg.solve(C, M))[1] if len(M) else 0.0


@pytest.mark.parametrize("seed", range(10))
def test_chol_append_builds_the_cholesky_factor(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    C = spd(rng, n)
    Lp = np.zeros(k.packed_size(n))
    for q in range(n):
        d = k.chol_append(Lp, q, C[q, :q].copy(), C[q, q], 1e-12)
        assert d == Lp[k.packed_size(q + 1) - 1]
    np.testing.assert_allclose(k.unpack(Lp, n), np.linalg.cholesky(C), rtol=1e-10, atol=1e-12)


def test_chol_append_clamps_the_schur_complement():
    Lp = np.zeros(k.packed_size(2))
    k.chol_append(Lp, 0, np.zeros(0), 1.0, 1e-8)
    # A duplicate row with no jitter: s − lᵀl = 0, so d is the clamp.
    assert k.chol_append(Lp, 1, np.array([1.0]), 1.0, 1e-8) == pytest.approx(1e-4)


@pytest.mark.parametrize("seed", range(10))
def test_chol_update_matches_refactorization(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    A = spd(rng, n)
    x = rng.standard_normal(n)
    R = np.linalg.cholesky(A).T.copy()
    inc = k.chol_update(R, x.copy())
    np.testing.assert_allclose(np.triu(R), np.linalg.cholesky(A + np.outer(x, x)).T, rtol=1e-10, atol=1e-12)
    expected = np.linalg.slogdet(A + np.outer(x, x))[1] - np.linalg.slogdet(A)[1]
    assert inc == pytest.approx(expected, rel=1e-10)


def test_chol_update_keeps_relative_precision_of_tiny_increments():
    R = np.eye(3)
    x = np.full(3, 1e-9)
    assert k.chol_update(R, x) == pytest.approx(3e-18, rel=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_igms_append_extends_all_three_factors(seed):
    rng = np.random.default_rng(seed)
    q, a = int(rng.integers(0, 20)), int(rng.integers(1, 10))
    C, M = spd(rng, q + 1), rng.random((q + 1, a))
    Lp, F = dense_factors(C[:q, :q], M[:q], q + 1)
    inc = k.igms_append(Lp, F, q, M[q], C[q, :q].copy(), C[q, q], 1e-12)
    Lx, Fx = dense_factors(C, M, q + 1)
    np.testing.assert_allclose(Lp, Lx, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(F[a:], Fx[a:], rtol=1e-9, atol=1e-12)  # W
    np.testing.assert_allclose(np.triu(F[:a]), Fx[:a], rtol=1e-9, atol=1e-12)  # R
    assert inc == pytest.approx(logdet_j(M, C) - logdet_j(M[:q], C[:q, :q]), rel=1e-9, abs=1e-12)


def test_igms_append_rejects_wrong_lengths():
    Lp, F = np.zeros(k.packed_size(4)), np.vstack([np.eye(3), np.zeros((4, 3))])
    with pytest.raises(ValueError):
        k.igms_append(Lp, F, 0, np.ones(2), np.zeros(0), 1.0, 1e-8)
    with pytest.raises(ValueError):
        k.igms_append(Lp, F, 0, np.ones(3), np.zeros(1), 1.0, 1e-8)


def batch(seed: int):
    """A prefix of q units and n candidates, each consistent with a positive definite C."""
    rng = np.random.default_rng(seed)
    q, a, n = int(rng.integers(0, 25)), int(rng.integers(1, 12)), int(rng.integers(0, 40))
    C = spd(rng, q + n)
    Lp, F = dense_factors(C[:q, :q], rng.random((q, a)), q + 1)
    return Lp, F, q, rng.random((n, a)), C[q:, :q].copy(), np.diag(C)[q:].copy()


@pytest.mark.parametrize("seed", range(15))
def test_batched_gains_equal_single_appends(seed):
    Lp, F, q, Mb, Cb, s = batch(seed)
    out = k.marginal_gains(Lp, F, q, Mb, Cb, s, 1e-12, backend="cpu")
    for i in range(Mb.shape[0]):
        gain = k.igms_append(Lp.copy(), F.copy(), q, Mb[i], Cb[i], s[i], 1e-12)
        assert out[i] == pytest.approx(gain, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_torch_variant_matches_numba_on_cpu(seed):
    pytest.importorskip("torch")
    Lp, F, q, Mb, Cb, s = batch(seed)
    expected = k.marginal_gains(Lp, F, q, Mb, Cb, s, 1e-12, backend="cpu")
    got = k.igms_gains_torch(Lp, F, q, Mb, Cb, s, 1e-12, device="cpu")
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)


def test_cuda_variant_matches_numba():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    Lp, F, q, Mb, Cb, s = batch(3)
    expected = k.marginal_gains(Lp, F, q, Mb, Cb, s, 1e-12, backend="cpu")
    np.testing.assert_allclose(k.marginal_gains(Lp, F, q, Mb, Cb, s, 1e-12, backend="cuda"), expected, rtol=1e-10)


def test_unknown_backend_is_an_error():
    Lp, F, q, Mb, Cb, s = batch(1)
    with pytest.raises(ValueError):
        k.marginal_gains(Lp, F, q, Mb, Cb, s, 1e-12, backend="tpu")
