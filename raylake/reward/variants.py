"""The reward ablations of GRAFT Table 7 (Sec. 5.5), beside the full IGMS reward.

Each variant removes one property of U = (1/a)·logdet(I_a + MᵀC⁻¹M) (Eq. 6):

- ``"igms"`` — the full reward.
- ``"r1_linear"`` — a linear combination instead of the log-determinant (no coupling of
  relevance, coverage and diversity):

      R1 = (1/a)·[ w_rel·Σ_i max_j M[i, j] + w_cov·Σ_j max_i M[i, j] − w_red·Σ_{i<k} C[i, k] ],

  relevance (each unit's best atom support), coverage (each atom's best support) and
  redundancy (pairwise column-set Jaccard); weights default to 1.
- ``"r2_no_redundancy"`` — IGMS with the off-diagonal of ``C`` zeroed (no redundancy
  suppression); equals IGMS when ``C`` is diagonal.
- ``"r3_no_coupling"`` — no coupling between relation (edge) atoms and node atoms: ``J``
  made block-diagonal by ``edge_mask`` (a,), so the log-determinant splits in two,

      R3 = (1/a)·[ logdet(I + M_Eᵀ C⁻¹ M_E) + logdet(I + M_Nᵀ C⁻¹ M_N) ];

  equals IGMS when every atom is on one side, or when ``MᵀC⁻¹M`` has no edge–node block.
- ``"r4_additive"`` — a modular sum of each unit's stand-alone IGMS value (no diminishing
  returns), ``R4 = (1/a)·Σ_i log(1 + ‖m_i‖² / C[i, i])``; equals IGMS for one unit.

:func:`reward` evaluates a variant from scratch; :func:`make_state` returns its incremental
:class:`~raylake.reward.igms.UnitState` for the greedy and the search.
"""
from __future__ import annotations

import math

import numpy as np

from raylake.reward.igms import IGMSState, UnitState, igms_value

VARIANTS = ("igms", "r1_linear", "r2_no_redundancy", "r3_no_coupling", "r4_additive")


def _row(m, a: int) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    if m.shape != (a,):
        raise ValueError(f"m must have shape ({a},), got {m.shape}")
    return m


def _split(a: int, edge_mask) -> list[np.ndarray]:
    """Atom index sets ``[edge atoms, node atoms]``, empty sides dropped."""
    if edge_mask is None:
        raise ValueError("variant 'r3_no_coupling' needs edge_mask (a,) marking the relation atoms")
    mask = np.asarray(edge_mask, dtype=bool)
    if mask.shape != (a,):
        raise ValueError(f"edge_mask must have shape ({a},), got {mask.shape}")
    return [idx for idx in (np.flatnonzero(mask), np.flatnonzero(~mask)) if idx.size]


def reward(M, C, variant: str = "igms", edge_mask=None, *, w_rel: float = 1.0, w_cov: float = 1.0,
           w_red: float = 1.0) -> float:
    """One reward variant of the evidence set ``(M, C)``, from scratch.

    Args:
        M (array[q, a]): support matrix.
        C (array[q, q]): redundancy covariance (ColJac + σ₀²·I).
        variant (str): one of :data:`VARIANTS`.
        edge_mask (array[a] of bool | None): relation atoms; required by ``r3_no_coupling``.
        w_rel, w_cov, w_red (float): ``r1_linear`` weights (ignored by the others).

    Returns:
        float: the reward; ``0.0`` for an empty set.
    """
    M = np.asarray(M, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if M.ndim != 2 or M.shape[1] == 0 or C.shape != (M.shape[0],) * 2:
        raise ValueError(f"expected M (q, a >= 1) and C (q, q), got {M.shape} and {C.shape}")
    q, a = M.shape
    if variant == "igms":
        return igms_value(M, C)
    if variant == "r2_no_redundancy":
        return igms_value(M, np.diag(np.diag(C)))
    if variant == "r3_no_coupling":
        return sum(idx.size * igms_value(M[:, idx], C) for idx in _split(a, edge_mask)) / a
    if variant == "r4_additive":
        return float(np.log1p((M * M).sum(1) / np.diag(C)).sum()) / a
    if variant == "r1_linear":
        if q == 0:
            return 0.0
        red = (C.sum() - np.trace(C)) / 2.0
        return float(w_rel * M.max(1).sum() + w_cov * M.max(0).sum() - w_red * red) / a
    raise ValueError(f"unknown reward variant {variant!r}; expected one of {VARIANTS}")


def make_state(variant: str, a: int, sigma0_sq: float = 1e-2, edge_mask=None, *, w_rel: float = 1.0,
               w_cov: float = 1.0, w_red: float = 1.0, capacity: int = 64) -> UnitState:
    """An empty incremental state of ``variant`` (arguments as in :func:`reward`).

    ``sigma0_sq`` sets the default self-covariance ``1 + σ₀²`` (and the IGMS clamp);
    ``capacity`` sizes the IGMS buffers of ``igms``, ``r2`` and ``r3``.
    """
    if variant == "igms":
        return IGMSState(a, sigma0_sq, capacity)
    if variant == "r2_no_redundancy":
        return NoRedundancyState(a, sigma0_sq, capacity)
    if variant == "r3_no_coupling":
        return NoCouplingState(a, _split(a, edge_mask), sigma0_sq, capacity)
    if variant == "r4_additive":
        return AdditiveState(a, sigma0_sq)
    if variant == "r1_linear":
        return LinearState(a, sigma0_sq, w_rel, w_cov, w_red)
    raise ValueError(f"unknown reward variant {variant!r}; expected one of {VARIANTS}")


class NoRedundancyState(UnitState):
    """R2: an :class:`IGMSState` that never sees the covariances between units."""

    def __init__(self, a: int, sigma0_sq: float = 1e-2, capacity: int = 64):
        self._inner = IGMSState(a, sigma0_sq, capacity)
        self.a, self.sigma0_sq = self._inner.a, self._inner.sigma0_sq

    q = property(lambda self: self._inner.q)
    value = property(lambda self: self._inner.value)

    def add(self, m, c=None, self_cov=None) -> float:
        return self._inner.add(m, None, self_cov)

    def gains(self, Mb, Cb=None, self_cov=None) -> np.ndarray:
        Mb, _, s = self._candidates(Mb, Cb, self_cov)
        return self._inner.gains(Mb, None, s)

    def copy(self) -> "NoRedundancyState":
        new = object.__new__(NoRedundancyState)
        new.__dict__.update(self.__dict__)
        new._inner = self._inner.copy()
        return new


class NoCouplingState(UnitState):
    """R3: one :class:`IGMSState` per atom side; value ``Σ_side a_side·U_side / a``."""

    def __init__(self, a: int, sides: list[np.ndarray], sigma0_sq: float = 1e-2, capacity: int = 64):
        self.a, self.sigma0_sq = int(a), float(sigma0_sq)
        self._sides = sides
        self._parts = [IGMSState(idx.size, sigma0_sq, capacity) for idx in sides]

    q = property(lambda self: self._parts[0].q)
    value = property(lambda self: sum(p.a * p.value for p in self._parts) / self.a)

    def add(self, m, c=None, self_cov=None) -> float:
        m = _row(m, self.a)
        return sum(p.a * p.add(m[idx], c, self_cov) for p, idx in zip(self._parts, self._sides)) / self.a

    def gains(self, Mb, Cb=None, self_cov=None) -> np.ndarray:
        Mb, Cb, s = self._candidates(Mb, Cb, self_cov)
        return sum(p.a * p.gains(Mb[:, idx], Cb, s) for p, idx in zip(self._parts, self._sides)) / self.a

    def copy(self) -> "NoCouplingState":
        new = object.__new__(NoCouplingState)
        new.__dict__.update(self.__dict__)
        new._parts = [p.copy() for p in self._parts]
        return new


class AdditiveState(UnitState):
    """R4: running sum of each unit's stand-alone value ``log(1 + ‖m‖²/s) / a``."""

    def __init__(self, a: int, sigma0_sq: float = 1e-2):
        self.a, self.sigma0_sq = int(a), float(sigma0_sq)
        self.q, self.value = 0, 0.0

    def add(self, m, c=None, self_cov=None) -> float:
        m = _row(m, self.a)
        gain = math.log1p(float(m @ m) / (1.0 + self.sigma0_sq if self_cov is None else float(self_cov))) / self.a
        self.q += 1
        self.value += gain
        return gain

    def gains(self, Mb, Cb=None, self_cov=None) -> np.ndarray:
        Mb, _, s = self._candidates(Mb, None, self_cov)
        return np.log1p((Mb * Mb).sum(1) / s) / self.a

    def copy(self) -> "AdditiveState":
        new = object.__new__(AdditiveState)
        new.__dict__.update(self.__dict__)
        return new


class LinearState(UnitState):
    """R1: relevance and redundancy sums plus the per-atom best support (for coverage)."""

    def __init__(self, a: int, sigma0_sq: float = 1e-2, w_rel: float = 1.0, w_cov: float = 1.0,
                 w_red: float = 1.0):
        self.a, self.sigma0_sq = int(a), float(sigma0_sq)
        self._w = (float(w_rel), float(w_cov), float(w_red))
        self._colmax = np.zeros(self.a)
        self.q, self.value = 0, 0.0

    def add(self, m, c=None, self_cov=None) -> float:
        m = _row(m, self.a)
        c = np.zeros(self.q) if c is None else np.asarray(c, dtype=np.float64)
        if c.shape != (self.q,):
            raise ValueError(f"c must have shape ({self.q},), got {c.shape}")
        w_rel, w_cov, w_red = self._w
        gain = (w_rel * m.max() + w_cov * np.maximum(m - self._colmax, 0.0).sum() - w_red * c.sum()) / self.a
        self._colmax = np.maximum(self._colmax, m)
        self.q += 1
        self.value += float(gain)
        return float(gain)

    def gains(self, Mb, Cb=None, self_cov=None) -> np.ndarray:
        """Gains ``(w_rel·max_j m_j + w_cov·Σ_j (m_j − colmax_j)⁺ − w_red·Σ c) / a``; may be < 0."""
        Mb, Cb, _ = self._candidates(Mb, Cb, self_cov)
        w_rel, w_cov, w_red = self._w
        rel = Mb.max(1)
        cov = np.clip(Mb - self._colmax, 0.0, None).sum(1)
        return (w_rel * rel + w_cov * cov - w_red * Cb.sum(1)) / self.a

    def copy(self) -> "LinearState":
        new = object.__new__(LinearState)
        new.__dict__.update(self.__dict__)
        new._colmax = self._colmax.copy()
        return new
