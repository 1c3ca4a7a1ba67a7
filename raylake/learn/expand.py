"""GRAFT Algorithm 1, Stage 2a: growing a trajectory's table set from its seed over G_D (Sec. 4.1).

- :func:`expand_centrality` — each new table u is drawn from the frontier with probability
  ∝ C(u) = α·ω_⋈(u, V_T⁺) + (1−α)·ω_∪(u, V_T⁺), the summed join and union scores from u to the
  current set; the action records the best (operator, anchor) pair that connects u. The walk
  runs in a numba kernel; :func:`expand_centrality_reference` is the same walk over Python
  dicts, and a test pins the two to the same tables and the same generator state.
- :func:`expand_anchor_only` and :func:`expand_uniform_walk` — the two ablation samplers of
  Table 8 (a uniform anchor and a uniform neighbour of it; a uniform random walk).

Every sampler returns ``[(op, anchor, new, link)]`` starting with ``("start", None, seed, None)``.
"""
from __future__ import annotations

import numba
import numpy as np

from raylake.learn.lake_arrays import LakeArrays


def _best_link(arrays: LakeArrays, anchor: int, new: int, alpha: float):
    """(weighted score, op, join link or None) of the best structural edge anchor–new."""
    best = (0.0, None, None)
    links = arrays.join[anchor].get(new)
    if links:
        best = (alpha * links[0][0], "join", links[0])
    un = arrays.union[anchor].get(new)
    if un is not None and (1 - alpha) * un[0] > best[0]:
        best = ((1 - alpha) * un[0], "union", None)
    if best[1] is None and un is not None:
        best = (0.0, "union", None)
    return best


def expand_centrality(arrays, seed: int, size: int, alpha: float, rng) -> list[tuple]:
    """Tables by centrality: [(op, anchor, new, link)], starting with ('start', None, seed, None).

    The walk runs in :func:`_expand_centrality_kernel` on uniforms drawn beforehand, one per
    step (``rng.random(n)`` draws what n calls of ``rng.random()`` do); when it stops early
    or meets an all-zero mass (the walk then draws an integer), the generator is rewound and
    left exactly where :func:`expand_centrality_reference`, the same walk over Python dicts,
    leaves it (a test pins the two). A kernel cannot take the Generator itself: numba's
    cached code for it crashes in the next process.
    """
    f = arrays.flat
    bg = rng.bit_generator
    state = bg.state
    draws = rng.random(max(size - 1, 0))
    new, anchor, op, used, stuck = _expand_centrality_kernel(draws, seed, size, alpha, f.jt_ptr, f.jt_u, f.jt_s,
                                                             f.us_ptr, f.us_u, f.us_s, f.scratch_inset, f.scratch_pos)
    if stuck:  # a zero-mass draw: rare, the reference takes it from the start
        bg.state = state
        return expand_centrality_reference(arrays, seed, size, alpha, rng)
    if used < draws.size:
        bg.state = state
        rng.random(used)
    actions = [("start", None, seed, None)]
    join = arrays.join
    for u, v, o in zip(new.tolist(), anchor.tolist(), op.tolist()):
        actions.append(("join", v, u, join[v][u][0]) if o == 1 else ("union", v, u, None))
    return actions


@numba.njit(cache=True)
def _pairwise_block(a, lo, n):
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3], a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@numba.njit(cache=True)
def _pairwise_sum(a, lo, n):
    """numpy's pairwise summation (what ndarray.sum does), so the draw's total is numpy's bit for bit.

    Blocks of ≤ 128 with eight accumulators; longer runs split in two at a multiple of 8 and
    the halves added, evaluated with an explicit stack (numba's cache mishandles recursion).
    """
    if n <= 128:
        return _pairwise_block(a, lo, n)
    st_lo = np.empty(192, np.int64)
    st_n = np.empty(192, np.int64)
    st_ph = np.empty(192, np.int64)
    vals = np.empty(64)
    top, nv = 1, 0
    st_lo[0], st_n[0], st_ph[0] = lo, n, 0
    while top > 0:
        top -= 1
        l, k, ph = st_lo[top], st_n[top], st_ph[top]
        if ph == 1:  # both halves done: left + right
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
        elif k <= 128:
            vals[nv] = _pairwise_block(a, l, k)
            nv += 1
        else:
            n2 = k // 2
            n2 -= n2 % 8
            st_lo[top], st_n[top], st_ph[top] = l, k, 1
            st_lo[top + 1], st_n[top + 1], st_ph[top + 1] = l + n2, k - n2, 0
            st_lo[top + 2], st_n[top + 2], st_ph[top + 2] = l, n2, 0
            top += 3
    return vals[0]


@numba.njit(cache=True)
def _find(ptr, nb, t, u):
    for q in range(ptr[t], ptr[t + 1]):
        if nb[q] == u:
            return q
    return -1


@numba.njit(cache=True)
def _absorb(t, weight, ptr, nb, score, inset, pos, cu, cw, alive, n):
    """Add weight × score of each edge of ``t`` (CSR ptr/nb/score) to the candidate slots of its
    neighbours outside the set, opening a slot on first sight; returns the new slot count."""
    for q in range(ptr[t], ptr[t + 1]):
        u = nb[q]
        if not inset[u]:
            if pos[u] < 0:
                pos[u] = n
                cu[n], cw[n], alive[n] = u, 0.0 + weight * score[q], True
                n += 1
            else:
                cw[pos[u]] = cw[pos[u]] + weight * score[q]
    return n


@numba.njit(cache=True)
def _expand_centrality_kernel(draws, seed, size, alpha, jt_ptr, jt_u, jt_s, us_ptr, us_u, us_s, inset, pos):
    # the candidate "dict": slots in first-insertion order, a dead flag for the chosen ones
    T = inset.shape[0]
    cu = np.empty(T, np.int64)
    cw = np.empty(T)
    alive = np.empty(T, np.bool_)
    wc = np.empty(T)
    uc = np.empty(T, np.int64)
    n = 0
    beta = 1 - alpha
    chosen = np.empty(size, np.int64)
    chosen[0] = seed
    n_chosen = 1
    inset[seed] = True
    out_new = np.empty(size, np.int64)
    out_anchor = np.empty(size, np.int64)
    out_op = np.empty(size, np.int64)
    n_out = 0
    used = 0
    stuck = False
    t = seed
    while True:
        # absorb t: its join then its union mass to every neighbour outside the set
        n = _absorb(t, alpha, jt_ptr, jt_u, jt_s, inset, pos, cu, cw, alive, n)
        n = _absorb(t, beta, us_ptr, us_u, us_s, inset, pos, cu, cw, alive, n)
        if n_chosen >= size:
            break
        m = 0
        for i in range(n):
            if alive[i]:
                wc[m], uc[m] = cw[i], cu[i]
                m += 1
        if m == 0:
            break
        total = _pairwise_sum(wc, 0, m)
        if not total > 0:
            stuck = True
            break
        x = draws[used] * total
        used += 1
        acc = 0.0
        k = m - 1
        for i in range(m):  # np.searchsorted(np.cumsum(w), x), side left
            acc += wc[i]
            if acc >= x:
                k = i
                break
        u = uc[k]
        # the best (operator, anchor) pair connecting u; first of equals in set order
        best_s, best_v, best_op = -1.0, -1, 0
        for ci in range(n_chosen):
            v = chosen[ci]
            qj = _find(jt_ptr, jt_u, v, u)
            qu = _find(us_ptr, us_u, v, u)
            if qj < 0 and qu < 0:
                continue
            s, o = 0.0, 0
            if qj >= 0:
                s, o = alpha * jt_s[qj], 1
            if qu >= 0 and beta * us_s[qu] > s:
                s, o = beta * us_s[qu], 2
            if o == 0:
                o = 2
            if s > best_s:
                best_s, best_v, best_op = s, v, o
        out_new[n_out], out_anchor[n_out], out_op[n_out] = u, best_v, best_op
        n_out += 1
        chosen[n_chosen] = u
        n_chosen += 1
        inset[u] = True
        alive[pos[u]] = False
        t = u
    for i in range(n):  # leave the scratch as found
        pos[cu[i]] = -1
    for i in range(n_chosen):
        inset[chosen[i]] = False
    return out_new[:n_out], out_anchor[:n_out], out_op[:n_out], used, stuck


def expand_centrality_reference(arrays, seed: int, size: int, alpha: float, rng) -> list[tuple]:
    """Tables by centrality over Python dicts: what the kernel of :func:`expand_centrality` does."""
    chosen = [seed]
    inset = {seed}
    mass: dict[int, float] = {}

    join_top, union_score = arrays.py.join_top, arrays.py.union_score
    get = mass.get
    beta = 1 - alpha

    def absorb(t: int) -> None:
        for u, s in join_top[t]:
            if u not in inset:
                mass[u] = get(u, 0.0) + alpha * s
        for u, s in union_score[t]:
            if u not in inset:
                mass[u] = get(u, 0.0) + beta * s

    absorb(seed)
    actions = [("start", None, seed, None)]
    while len(chosen) < size and mass:
        cand = list(mass)
        w = np.fromiter(mass.values(), float, len(cand))
        total = w.sum()
        # inverse-CDF draw: rng.choice(p=...) costs ~10x more for these short vectors
        u = cand[min(int(np.searchsorted(np.cumsum(w), rng.random() * total)), len(cand) - 1)] if total > 0 else cand[int(rng.integers(len(cand)))]
        best = max(((_best_link(arrays, v, u, alpha), v) for v in chosen if u in arrays.join[v] or u in arrays.union[v]),
                   key=lambda x: x[0][0])
        (_, op, link), anchor = best
        actions.append((op, anchor, u, link))
        chosen.append(u)
        inset.add(u)
        del mass[u]
        absorb(u)
    return actions


def expand_anchor_only(arrays, seed: int, size: int, alpha: float, rng) -> list[tuple]:
    """Uniform anchor in the current set, then a uniform new neighbour of it (no centrality bias)."""
    chosen = [seed]
    inset = {seed}
    actions = [("start", None, seed, None)]
    while len(chosen) < size:
        options = [v for v in chosen if any(u not in inset for u in arrays.neighbours(v))]
        if not options:
            break
        v = options[int(rng.integers(len(options)))]
        nb = [u for u in arrays.neighbours(v) if u not in inset]
        u = nb[int(rng.integers(len(nb)))]
        _, op, link = _best_link(arrays, v, u, alpha)
        actions.append((op, v, u, link))
        chosen.append(u)
        inset.add(u)
    return actions


def expand_uniform_walk(arrays, seed: int, size: int, alpha: float, rng) -> list[tuple]:
    """A uniform random walk over G_D from ``seed``; each first visit adds the table."""
    chosen = [seed]
    inset = {seed}
    actions = [("start", None, seed, None)]
    at = seed
    for _ in range(8 * size):  # a walk stuck in a visited pocket stops here
        if len(chosen) >= size:
            break
        nb = arrays.neighbours(at)
        if not nb:
            break
        u = nb[int(rng.integers(len(nb)))]
        if u not in inset:
            _, op, link = _best_link(arrays, at, u, alpha)
            actions.append((op, at, u, link))
            chosen.append(u)
            inset.add(u)
        at = u
    return actions


EXPAND = {"centrality": expand_centrality, "anchor_only": expand_anchor_only, "uniform": expand_uniform_walk}
