"""Cholesky append, rank-one update and batched marginal gains for the IGMS reward.

GRAFT (Sec. 3.2, Eq. 6) scores ``q`` evidence units against ``a`` intent atoms as

    U = (1/a) · logdet(J),   J = I_a + Mᵀ C⁻¹ M,

with ``M`` (q×a) the support matrix and ``C`` (q×q) the redundancy covariance. Appending a
unit (support row ``m``, covariances ``c`` with the ``q`` units already in, self-covariance
``s``) extends three factors in place (the construction in the proof of Prop. 1):

    C = L Lᵀ            L ← [[L, 0], [lᵀ, d]],   l = L⁻¹c,  d² = s − lᵀl   (Schur complement ρ*)
    W = L⁻¹ M           W ← [[W], [wᵀ]],         w = (m − Wᵀl) / d
    J = I + WᵀW = RᵀR   R ← chol-update(R, w)    (J ← J + w wᵀ)

so an append costs O(q² + qa + a²) instead of the O(q³ + q²a + a³) of a fresh factorization,
and by the matrix-determinant lemma a candidate's gain needs no update at all:

    logdet J' − logdet J = log(1 + ‖R⁻ᵀ w‖²) = log(1 + ‖R⁻ᵀ (m − Wᵀl)‖² / d²).

Storage. ``L`` is *packed* row by row: ``L[i, k]`` (k ≤ i) is ``Lp[i(i+1)/2 + k]``, so the
forward solve for ``l`` reads contiguous memory, a prefix of q units occupies the first
q(q+1)/2 entries whatever the capacity (copies and growth move only those), and the buffer
is over-allocated. ``J``'s factor is kept *upper* (``R = L_Jᵀ``), so the rank-one update and
the solve ``R⁻ᵀw`` (axpy form) walk rows too. ``R`` and ``W`` share one row-major buffer
``F`` ((a + cap) × a: ``R = F[:a]``, ``W = F[a:a+q]``), so a prefix is two arrays: one fewer
to pass per call (numba dispatch is a fifth of an add at q = 64) and to copy per state copy.

Numerical guard. For a valid ``C`` (column-set Jaccard is positive semidefinite, plus σ₀²·I)
the Schur complement satisfies d² ≥ σ₀². Round-off or a ``c`` inconsistent with a positive
definite ``C`` can still drive ``s − lᵀl`` to zero or below; every kernel clamps d² at
``floor`` (callers pass σ₀²·1e-6), which keeps the factors finite and the gains ≥ 0 and
never changes a valid input.

:func:`marginal_gains` runs the batched gain on CUDA through torch when a GPU is present
and the batch is large enough to pay for the transfer; the numba path is complete alone.
"""
from __future__ import annotations

import functools
import math

import numba
import numpy as np

# Reassociation lets LLVM vectorize the dot-product reductions; NaN/Inf semantics are kept.
_FASTMATH = {"reassoc", "contract"}

# Batched gains move to CUDA when n·(q² + qa + a²) reaches this (≈3 ms of one CPU core):
# below it, host↔device copies and kernel launches cost more than they save. An estimate,
# not tuned on a GPU.
GPU_MIN_WORK = 1 << 24


def packed_size(q: int) -> int:
    """Entries of a packed lower-triangular q×q factor: q(q+1)/2."""
    return q * (q + 1) // 2


def unpack(Lp, q: int) -> np.ndarray:
    """The dense q×q lower factor stored in the packed buffer ``Lp``."""
    L = np.zeros((q, q))
    L[np.tril_indices(q)] = Lp[: packed_size(q)]
    return L


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def chol_append(Lp, q, c, s, floor):
    r"""Append one row and column to a packed lower Cholesky factor, in place.

    Given :math:`C_q = L_q L_q^\top` and the bordered matrix
    :math:`\begin{bmatrix} C_q & c \\ c^\top & s \end{bmatrix}`, writes row ``q`` of ``L``:

    .. math::
        l = L_q^{-1} c, \qquad d = \sqrt{\max(s - l^\top l,\ \text{floor})}.

    Args:
        Lp (float64[≥ (q+1)(q+2)/2]): packed factor; rows ``< q`` are read, row ``q`` written.
        q (int): current order.
        c (float64[q]): covariances of the new row with the first ``q``.
        s (float): its variance (the new diagonal entry of ``C``).
        floor (float): lower clamp on the Schur complement ``d²``.

    Returns:
        float: ``d``, the new diagonal entry of ``L``.
    """
    base = q * (q + 1) // 2
    d2 = s
    for j in range(q):
        row = j * (j + 1) // 2
        acc = c[j]
        for k in range(j):
            acc -= Lp[row + k] * Lp[base + k]
        lj = acc / Lp[row + j]
        Lp[base + j] = lj
        d2 -= lj * lj
    d = math.sqrt(max(d2, floor))
    Lp[base + q] = d
    return d


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def chol_update(R, x):
    r"""Rank-one update of an upper Cholesky factor, in place: :math:`R^\top R \leftarrow R^\top R + x x^\top`.

    The standard update (Golub & Van Loan, Sec. 6.5.4) walking the rows of ``R``. With
    ``t_k = x_k / R_kk`` (``x`` as modified by earlier rows) the new diagonal is
    ``R_kk·√(1 + t_k²)``, so

    .. math::
        \log\det(R^\top R + x x^\top) - \log\det(R^\top R) = \log \prod_k (1 + t_k^2)
                                                            = \log(1 + \|R^{-\top} x\|^2).

    Args:
        R (float64[n, n]): upper factor (the strict lower triangle is never read).
        x (float64[n]): update vector; overwritten (used as workspace).

    Returns:
        float: the log-determinant increment.
    """
    n = R.shape[0]
    # p = Π(1 + t_k²) − 1, accumulated as p ← p + t²(1 + p): every term is ≥ 0, so a tiny
    # increment keeps its relative precision and one log1p replaces n of them.
    p = 0.0
    for k in range(n):
        t = x[k] / R[k, k]
        t2 = t * t
        p += t2 * (1.0 + p)
        cs = math.sqrt(1.0 + t2)
        inv = 1.0 / cs
        R[k, k] *= cs
        for i in range(k + 1, n):
            rki = (R[k, i] + t * x[i]) * inv
            R[k, i] = rki
            x[i] = cs * x[i] - t * rki
    return math.log1p(p)


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def igms_append(Lp, F, q, m, c, s, floor):
    r"""Append one evidence unit to the IGMS factors ``(L, W, R)``, in place.

    .. math::
        l = L^{-1}c,\quad d = \sqrt{\max(s - l^\top l, \text{floor})},\quad
        w = (m - W^\top l)/d,\quad R^\top R \leftarrow R^\top R + w w^\top.

    Args:
        Lp (float64[≥ (q+1)(q+2)/2]): packed lower factor of ``C``; row ``q`` is written.
        F (float64[≥ a+q+1, a]): ``R`` (upper factor of ``J = I + WᵀW``) in rows ``:a``,
            updated; ``W = L⁻¹M`` in rows ``a:a+q``; row ``a+q`` is written.
        q (int): units already in.
        m (real[a]): support row of the new unit.
        c (real[q]): its covariances with the ``q`` units, in insertion order.
        s (float): its self-covariance.
        floor (float): clamp on ``d²``.

    Returns:
        float: ``logdet J' − logdet J`` (≥ 0); the IGMS gain is this divided by ``a``.

    Raises:
        ValueError: when ``m`` or ``c`` has the wrong length.
    """
    a = F.shape[1]
    if m.shape[0] != a or c.shape[0] != q:
        raise ValueError("igms_append: m must hold a entries and c must hold q")
    d = chol_append(Lp, q, c, s, floor)
    base = q * (q + 1) // 2
    # Accumulate in a private vector: writing W[q] inside the loop would alias the rows read.
    x = m.astype(np.float64)
    for j in range(q):
        lj = Lp[base + j]
        for t in range(a):
            x[t] -= F[a + j, t] * lj
    for t in range(a):
        x[t] /= d
        F[a + q, t] = x[t]
    return chol_update(F[:a], x)


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def igms_gains(Lp, F, q, Mb, Cb, s, floor, out):
    r"""Log-determinant gains of ``n`` candidate units against one prefix; factors unchanged.

    For candidate ``i`` (row ``Mb[i]``, covariances ``Cb[i]``, self-covariance ``s[i]``):

    .. math::
        l_i = L^{-1} c_i,\quad d_i^2 = \max(s_i - l_i^\top l_i, \text{floor}),\quad
        \text{out}_i = \log\!\big(1 + \|R^{-\top}(m_i - W^\top l_i)\|^2 / d_i^2\big).

    Cost O(n·(q² + qa + a²)), no allocation per candidate.

    Args:
        Lp (float64[≥ q(q+1)/2]), F (float64[≥ a+q, a]): prefix factors, as in
            :func:`igms_append`.
        q (int): prefix size.
        Mb (float64[n, a]): candidate support rows.
        Cb (float64[n, q]): candidate covariances with the prefix units (insertion order).
        s (float64[n]): candidate self-covariances.
        floor (float): clamp on ``d²``.
        out (float64[n]): receives the gains (divide by ``a`` for IGMS).
    """
    a = F.shape[1]
    R = F[:a]
    W = F[a:]
    l = np.empty(q)
    w = np.empty(a)
    for i in range(Mb.shape[0]):
        d2 = s[i]
        for j in range(q):
            row = j * (j + 1) // 2
            acc = Cb[i, j]
            for k in range(j):
                acc -= Lp[row + k] * l[k]
            l[j] = acc / Lp[row + j]
            d2 -= l[j] * l[j]
        d2 = max(d2, floor)
        for t in range(a):
            w[t] = Mb[i, t]
        for j in range(q):
            lj = l[j]
            for t in range(a):
                w[t] -= W[j, t] * lj
        # ‖R⁻ᵀw‖² by forward substitution on Rᵀ, row-wise (axpy) so R is read along rows.
        nrm = 0.0
        for k in range(a):
            vk = w[k] / R[k, k]
            nrm += vk * vk
            for t in range(k + 1, a):
                w[t] -= vk * R[k, t]
        out[i] = math.log1p(nrm / d2)


def igms_gains_torch(Lp, F, q, Mb, Cb, s, floor, device="cuda"):
    """:func:`igms_gains` with torch on ``device`` (float64), same arguments; returns ``out``.

    Two triangular solves over the whole batch and one matmul:
    ``Λ = L⁻¹Cbᵀ`` (q×n), ``d² = max(s − colsum(Λ²), floor)``,
    ``V = R⁻ᵀ(Mbᵀ − WᵀΛ)`` (a×n), ``out = log1p(colsum(V²)/d²)``.
    """
    import torch

    a = F.shape[1]
    as_t = functools.partial(torch.as_tensor, dtype=torch.float64, device=device)
    resid = as_t(Mb).T.clone()
    d2 = as_t(s).clone()
    if q:
        lam = torch.linalg.solve_triangular(as_t(unpack(Lp, q)), as_t(Cb).T, upper=False)
        d2 -= (lam * lam).sum(0)
        resid -= as_t(F[a : a + q]).T @ lam
    v = torch.linalg.solve_triangular(as_t(F[:a]).T, resid, upper=False)
    out = torch.log1p((v * v).sum(0) / d2.clamp_min(floor))
    return out.cpu().numpy()


@functools.lru_cache(maxsize=1)
def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def marginal_gains(Lp, F, q, Mb, Cb, s, floor, backend="auto"):
    """Batched log-det gains of ``n`` candidates (see :func:`igms_gains`) on a chosen backend.

    Args:
        Lp, F, q, Mb, Cb, s, floor: as in :func:`igms_gains` (float64, C-contiguous).
        backend (str): ``"cpu"`` (numba), ``"cuda"`` (torch; raises without a GPU), or
            ``"auto"``: CUDA when available and ``n·(q² + qa + a²) ≥ GPU_MIN_WORK``.

    Returns:
        float64[n]: ``logdet J(prefix + candidate) − logdet J(prefix)`` per candidate.
    """
    n, a = Mb.shape
    if backend == "auto":
        work = n * (q * q + q * a + a * a)
        backend = "cuda" if work >= GPU_MIN_WORK and _cuda_available() else "cpu"
    if backend == "cuda":
        return igms_gains_torch(Lp, F, q, Mb, Cb, s, floor, device="cuda")
    if backend != "cpu":
        raise ValueError(f"backend must be 'auto', 'cpu' or 'cuda', not {backend!r}")
    out = np.empty(n)
    igms_gains(Lp, F, q, Mb, Cb, s, floor, out)
    return out
