"""The IGMS reward (GRAFT Sec. 3.2, Eq. 6), from scratch and incrementally.

    U(M, C) = (1/a) · logdet(I_a + Mᵀ C⁻¹ M)

``M`` (q×a): support of q evidence units for a intent atoms, entries in [0, 1].
``C`` (q×q): redundancy covariance, ``C[i, j] = ColJac(z_i, z_j) + σ₀²·1[i = j]``, so
``C[i, i] = 1 + σ₀²``.

:func:`igms_value` factors ``C`` and ``J = I + MᵀC⁻¹M`` afresh. :class:`IGMSState` keeps the
factors of a prefix (``C = L Lᵀ``, ``W = L⁻¹M``, ``J = RᵀR``) and appends a unit with one
triangular solve and one rank-one Cholesky update, O(q² + qa + a²); the marginal gain is
the matrix-determinant-lemma form of Prop. 1,

    ΔU(z | Φ) = (1/a) · log(1 + ‖R⁻ᵀ w‖²),  w = (m − Wᵀl)/d,  l = L⁻¹c,  d² = s − lᵀl,

which is ≥ 0 for every unit (Prop. 1). The kernels live in :mod:`raylake.kernels.cholesky`.

Caveat (pinned by ``tests/reward/test_igms.py``): Props. 2–3 need uncorrelated noise. With
Jaccard off-diagonals Eq. 6 is not submodular in general, and a duplicate unit is not
suppressed when the prefix already holds a unit over the same columns with a different
support row: the difference of two such units observes θ through the jitter σ₀² alone.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from raylake.kernels import cholesky as _k

_append = _k.igms_append  # bound once: add() is on the hot path of search and greedy

# d² is clamped at σ₀² times this (see raylake.kernels.cholesky): valid inputs have d² ≥ σ₀².
CLAMP_RATIO = 1e-6


def igms_value(M, C) -> float:
    """U = (1/a)·logdet(I_a + MᵀC⁻¹M), computed from scratch by two Cholesky factorizations.

    Args:
        M (array[q, a]): support matrix.
        C (array[q, q]): symmetric positive definite covariance.

    Returns:
        float: the reward; ``0.0`` when ``q = 0``.

    Raises:
        ValueError: on inconsistent shapes or ``a = 0``.
        numpy.linalg.LinAlgError: when ``C`` is not positive definite.
    """
    M = np.asarray(M, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if M.ndim != 2 or M.shape[1] == 0:
        raise ValueError(f"M must be (q, a) with a >= 1, got shape {M.shape}")
    q, a = M.shape
    if C.shape != (q, q):
        raise ValueError(f"C must be ({q}, {q}), got shape {C.shape}")
    if q == 0:
        return 0.0
    W = scipy.linalg.solve_triangular(np.linalg.cholesky(C), M, lower=True)
    J = np.eye(a) + W.T @ W
    return 2.0 * float(np.log(np.diag(np.linalg.cholesky(J))).sum()) / a


class UnitState:
    """Incremental reward of a growing prefix of evidence units (the interface greedy uses).

    Subclasses keep ``a`` and ``sigma0_sq`` attributes and provide ``q``, ``value``,
    ``add(m, c, self_cov) -> gain``, ``gains(Mb, Cb, self_cov) -> (n,)`` and ``copy()`` with
    the meaning documented on :class:`IGMSState`; ``add_many`` is shared.
    """

    a: int
    sigma0_sq: float

    def add_many(self, M, C) -> float:
        """Append ``k`` units in order and return their total gain.

        Args:
            M (array[k, a]): their support rows.
            C (array[k, q+k] | array[q+k, q+k]): row ``i`` holds unit ``i``'s covariances with
                the ``q`` units already in (insertion order), then with the ``k`` new ones;
                ``C[i, q+i]`` is its self-covariance and ``C[i, q+j]`` for ``j > i`` is not
                read. A full ``(q+k)×(q+k)`` covariance of the extended prefix is accepted
                too; its last ``k`` rows are used.
        """
        M = np.asarray(M, dtype=np.float64)
        C = np.asarray(C, dtype=np.float64)
        q = self.q
        k = M.shape[0] if M.ndim == 2 else -1
        if k < 0 or M.shape[1] != self.a or C.ndim != 2 or C.shape[1] != q + k or C.shape[0] not in (k, q + k):
            raise ValueError(
                f"expected M (k, {self.a}) and C (k, {q}+k) or ({q}+k, {q}+k), got {M.shape} and {C.shape}"
            )
        C = C[C.shape[0] - k :]
        before = self.value
        for i in range(k):
            self.add(M[i], C[i, : q + i], C[i, q + i])
        return self.value - before

    def _candidates(self, Mb, Cb, self_cov) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validated float64 ``(Mb (n, a), Cb (n, q), s (n,))`` for ``gains``."""
        Mb = np.ascontiguousarray(Mb, dtype=np.float64)
        n = Mb.shape[0] if Mb.ndim == 2 else -1
        Cb = np.zeros((max(n, 0), self.q)) if Cb is None else np.ascontiguousarray(Cb, dtype=np.float64)
        if n < 0 or Mb.shape[1] != self.a or Cb.shape != (n, self.q):
            raise ValueError(f"expected Mb (n, {self.a}) and Cb (n, {self.q}), got {Mb.shape} and {Cb.shape}")
        s = 1.0 + self.sigma0_sq if self_cov is None else self_cov
        s = np.ascontiguousarray(np.broadcast_to(np.asarray(s, dtype=np.float64), (n,)))
        return Mb, Cb, s


class IGMSState(UnitState):
    """Incremental IGMS reward of a growing prefix of evidence units.

    Holds ``L`` (lower Cholesky factor of ``C``, q×q, packed by rows), ``R`` (upper Cholesky
    factor of ``J = I + WᵀW``, a×a) and ``W = L⁻¹M`` (q×a) in buffers for ``capacity`` units
    that double when full (layout: :mod:`raylake.kernels.cholesky`). ``value`` is the running
    sum of the (``log1p``) gains.

    Args:
        a (int): number of intent atoms (columns of ``M``), ``a >= 1``.
        sigma0_sq (float): jitter σ₀²; the default self-covariance is ``1 + σ₀²`` and the
            Schur complement ``d²`` is clamped at ``σ₀²·1e-6`` (reached only by a ``c``
            inconsistent with a positive definite ``C``, or by round-off).
        capacity (int): initial buffer rows; grows past it automatically.
    """

    def __init__(self, a: int, sigma0_sq: float = 1e-2, capacity: int = 64):
        if a < 1:
            raise ValueError(f"a must be >= 1, got {a}")
        if not sigma0_sq > 0:
            raise ValueError(f"sigma0_sq must be > 0, got {sigma0_sq}")
        self.a = int(a)
        self.sigma0_sq = float(sigma0_sq)
        self._floor = self.sigma0_sq * CLAMP_RATIO
        self._self_cov = 1.0 + self.sigma0_sq
        self._cap = max(int(capacity), 1)
        self._L = np.empty(_k.packed_size(self._cap))
        self._F = np.empty((self.a + self._cap, self.a))  # R in rows :a, then W (kernels docstring)
        self._F[: self.a] = np.eye(self.a)
        self._q = 0
        self._logdet = 0.0

    @property
    def q(self) -> int:
        """Number of units added."""
        return self._q

    @property
    def value(self) -> float:
        """U of the prefix; ``0.0`` when empty."""
        return self._logdet / self.a

    def add(self, m, c=None, self_cov: float | None = None) -> float:
        """Append one unit and return its marginal gain ΔU ≥ 0.

        Args:
            m (array[a]): its support row.
            c (array[q] | None): its covariances (ColJac) with the units already in, in
                insertion order; ``None`` means all zero.
            self_cov (float | None): its variance ``C[q, q]``; default ``1 + sigma0_sq``.
        """
        q = self._q
        # Arrays go straight to the kernel, which checks lengths and reads any real dtype;
        # the Python side only converts sequences (it is ~0.7 µs of a ~3 µs add at q = 64).
        if type(m) is not np.ndarray:
            m = np.asarray(m, dtype=np.float64)
        if c is None:
            c = np.zeros(q)
        elif type(c) is not np.ndarray:
            c = np.asarray(c, dtype=np.float64)
        if m.ndim != 1 or c.ndim != 1:
            raise ValueError(f"m and c must be vectors, got shapes {m.shape} and {c.shape}")
        if q == self._cap:
            self._grow()
        s = self._self_cov if self_cov is None else float(self_cov)
        inc = _append(self._L, self._F, q, m, c, s, self._floor)
        self._q = q + 1
        self._logdet += inc
        return inc / self.a

    def gains(self, Mb, Cb=None, self_cov=None, backend: str = "auto") -> np.ndarray:
        """Marginal gains ΔU of ``n`` candidates against the prefix, in one batched call.

        The state is unchanged. ``gains(Mb, Cb)[i]`` equals what ``add(Mb[i], Cb[i])`` would
        return on a copy.

        Args:
            Mb (array[n, a]): candidate support rows.
            Cb (array[n, q] | None): their covariances with the prefix units (insertion
                order); ``None`` means all zero.
            self_cov (array[n] | float | None): their variances; default ``1 + sigma0_sq``.
            backend (str): ``"auto"`` | ``"cpu"`` | ``"cuda"``, see
                :func:`raylake.kernels.cholesky.marginal_gains`.

        Returns:
            float64[n]: the gains, each ≥ 0.
        """
        Mb, Cb, s = self._candidates(Mb, Cb, self_cov)
        out = _k.marginal_gains(self._L, self._F, self._q, Mb, Cb, s, self._floor, backend)
        return out / self.a

    def copy(self) -> "IGMSState":
        """An independent copy; costs O(q² + qa + a²) whatever the capacity."""
        new = object.__new__(IGMSState)
        new.__dict__.update(self.__dict__)
        new._L, new._F = self._used_buffers(self._cap)
        return new

    def _grow(self) -> None:
        self._cap *= 2
        self._L, self._F = self._used_buffers(self._cap)

    def _used_buffers(self, cap: int) -> tuple[np.ndarray, np.ndarray]:
        # Only the first q rows are ever read (row q is written before it is read), so the
        # rest of a new buffer may stay uninitialized.
        n = _k.packed_size(self._q)
        L = np.empty(_k.packed_size(cap))
        L[:n] = self._L[:n]
        rows = self.a + self._q
        F = np.empty((self.a + cap, self.a))
        F[:rows] = self._F[:rows]
        return L, F

    def __repr__(self) -> str:
        return f"IGMSState(a={self.a}, q={self._q}, value={self.value:.6g})"
