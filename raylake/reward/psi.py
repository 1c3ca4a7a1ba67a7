"""ψ(u, x): the support of a lake object x for an intent atom u (GRAFT Sec. 3.2, the entries of M).

The one definition that search (:class:`raylake.search.support.Support`), the self-generated
trajectories' reward (:mod:`raylake.learn.pseudo_reward`, numpy and numba) and the specificity
prior (:meth:`raylake.learn.lake_arrays.LakeArrays.compute_specificity`) all use:

    ψ(u, x) = 1[s(u, x) > 0] · σ(β · (s(u, x) − s₀))

The paper leaves the similarity s open; ours fuses the embedding cosine with exact signals
(the callers add the exact ones: identical headers, value-index hits, naming strength):

- every cosine is rescaled ``clip((cos − floor) / span, 0, 1)``: MiniLM puts unrelated short
  texts at cosine 0.1–0.3 (→ 0) and paraphrases near 0.8 (→ 1);
- attribute or entity vs column: ``max(r(cos header), w_sample · r(cos header+sample))``;
- entity vs table: ``max(r(cos table text), w_table · best column s)``;
- value vs column by content alone: ``w_value · r(cos header+sample)``.

The weights live in :class:`raylake.config.IGMSConfig` (each with its reason); the numba
kernels read them from :func:`kernel_constants`, so no caller repeats a literal.
"""
from __future__ import annotations

import numba
import numpy as np

from raylake.config import IGMSConfig

_DEFAULT = IGMSConfig()

# positions in kernel_constants(): the numba kernels index this array
FLOOR, SPAN, W_SAMPLE, W_TABLE, W_VALUE, BETA, COS0 = range(7)


def rescale(cos: np.ndarray, cfg: IGMSConfig = _DEFAULT) -> np.ndarray:
    """Cosines mapped to [0, 1]: ``clip((cos − cos_floor) / cos_span, 0, 1)``."""
    return np.clip((cos - cfg.cos_floor) / cfg.cos_span, 0.0, 1.0)


def column_similarity(hcos: np.ndarray, scos: np.ndarray, cfg: IGMSConfig = _DEFAULT) -> np.ndarray:
    """s of an attribute or entity against columns, from the cosines with their header and
    header+sample embeddings."""
    return np.maximum(rescale(hcos, cfg), cfg.sample_weight * rescale(scos, cfg))


def table_similarity(tcos: np.ndarray, best_col: np.ndarray, cfg: IGMSConfig = _DEFAULT) -> np.ndarray:
    """s of an entity against tables: the cosine with the table text, or a weaker witness in the
    table's best column similarity ``best_col`` (same shape)."""
    return np.maximum(rescale(tcos, cfg), cfg.table_column_weight * best_col)


def value_similarity(scos: np.ndarray, cfg: IGMSConfig = _DEFAULT) -> np.ndarray:
    """s of a value literal against columns by content alone (no exact hit, no range)."""
    return cfg.value_cos_weight * rescale(scos, cfg)


def psi(s: np.ndarray, cfg: IGMSConfig = _DEFAULT) -> np.ndarray:
    """ψ from similarities ``s`` (any shape); 0 where ``s`` is 0 — the type gate: no similarity, no support."""
    return np.where(s > 0, 1.0 / (1.0 + np.exp(-cfg.beta * (s - cfg.cos0))), 0.0)


def kernel_constants(cfg: IGMSConfig = _DEFAULT) -> np.ndarray:
    """(7,) float64: the constants the numba forms below read, indexed by ``FLOOR`` … ``COS0``."""
    return np.asarray([cfg.cos_floor, cfg.cos_span, cfg.sample_weight, cfg.table_column_weight,
                       cfg.value_cos_weight, cfg.beta, cfg.cos0], np.float64)


@numba.njit(cache=True, inline="always")
def rescale_scalar(x, k):
    """:func:`rescale` of one cosine; ``k`` from :func:`kernel_constants`."""
    v = (x - k[FLOOR]) / k[SPAN]
    return 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)


@numba.njit(cache=True, inline="always")
def psi_scalar(s, k):
    """:func:`psi` of one similarity; ``k`` from :func:`kernel_constants`."""
    return 1.0 / (1.0 + np.exp(-k[BETA] * (s - k[COS0]))) if s > 0 else 0.0
