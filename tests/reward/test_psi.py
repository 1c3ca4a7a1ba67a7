"""raylake.reward.psi: the one ψ of search, the trajectories' reward and the specificity prior."""
import numba
import numpy as np
import pytest

from raylake.config import IGMSConfig
from raylake.reward import psi as P


@numba.njit
def _scalar_forms(cos, s, k):
    r = np.empty_like(cos)
    p = np.empty_like(s)
    for i in range(cos.shape[0]):
        r[i] = P.rescale_scalar(cos[i], k)
        p[i] = P.psi_scalar(s[i], k)
    return r, p


@pytest.mark.parametrize("cfg", [IGMSConfig(), IGMSConfig(cos_floor=0.2, cos_span=0.6, beta=5.0, cos0=0.3)])
def test_numba_forms_equal_numpy_forms(cfg):
    rng = np.random.default_rng(0)
    cos = rng.uniform(-1, 1, 2000)
    s = np.concatenate([[0.0], rng.uniform(0, 1, 1999)])
    r, p = _scalar_forms(cos, s, P.kernel_constants(cfg))
    np.testing.assert_allclose(r, P.rescale(cos, cfg), rtol=0, atol=1e-15)
    np.testing.assert_allclose(p, P.psi(s, cfg), rtol=1e-15, atol=0)


def test_rescale_ends_and_midpoint():
    cfg = IGMSConfig()
    cos = np.array([-0.5, cfg.cos_floor, cfg.cos_floor + cfg.cos_span / 2, cfg.cos_floor + cfg.cos_span, 0.99])
    np.testing.assert_allclose(P.rescale(cos, cfg), [0.0, 0.0, 0.5, 1.0, 1.0])


def test_psi_is_half_at_cos0_and_gated_at_zero():
    cfg = IGMSConfig()
    out = P.psi(np.array([0.0, cfg.cos0, 1.0]), cfg)
    assert out[0] == 0.0  # no similarity, no support, though σ(β·(0 − s₀)) > 0
    assert out[1] == pytest.approx(0.5)
    assert 0.5 < out[2] < 1.0


def test_similarities_take_the_stronger_witness():
    cfg = IGMSConfig()
    hcos = np.array([0.9, 0.3, 0.55])
    scos = np.array([0.3, 0.9, 0.55])
    # header alone: 1; sample alone: sample_weight · 1; both halfway: the header's 0.5
    np.testing.assert_allclose(P.column_similarity(hcos, scos, cfg), [1.0, cfg.sample_weight, 0.5])
    np.testing.assert_allclose(P.table_similarity(np.array([0.3, 0.8]), np.array([1.0, 0.2]), cfg),
                               [cfg.table_column_weight, 1.0])
    np.testing.assert_allclose(P.value_similarity(np.array([0.8, 0.1]), cfg), [cfg.value_cos_weight, 0.0])
