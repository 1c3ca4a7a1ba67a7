"""MinHash LSH banding: candidate column pairs whose signatures agree on a whole band.

Banding (Indyk & Motwani; Leskovec et al., *Mining of Massive Datasets* §3.4): with b bands
of r rows, two sets of Jaccard J collide in some band with probability 1 − (1 − J^r)^b.
Join keys are often small sets inside large ones (low Jaccard, high containment), so the
default is many short bands (b = 64, r = 2 over 128 permutations), and candidates are then
scored by containment, not Jaccard. Buckets larger than ``max_bucket`` hold values shared
by too many columns to be evidence (small integers, yes/no) and are dropped, as Josie
drops its stop values.

The work splits by band: on Ray each task takes a group of bands (``bands_to_pairs``).
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _emit_pairs(order, starts, ends, dirty, out_a, out_b):
    n = 0
    for g in range(starts.shape[0]):
        s, e = starts[g], ends[g]
        for x in range(s, e):
            i = order[x]
            for y in range(x + 1, e):
                j = order[y]
                if dirty[i] or dirty[j]:
                    if n < out_a.shape[0]:
                        out_a[n] = min(i, j)
                        out_b[n] = max(i, j)
                    n += 1
    return n


def band_keys(sigs: np.ndarray, band: int, rows: int) -> np.ndarray:
    """One uint64 key per signature for band ``band`` (its ``rows`` values hashed together)."""
    block = sigs[:, band * rows : (band + 1) * rows].astype(np.uint64)
    key = np.full(sigs.shape[0], np.uint64(1469598103934665603))
    for k in range(block.shape[1]):
        key = (key ^ block[:, k]) * np.uint64(1099511628211)
    return key


def bands_to_pairs(
    sigs: np.ndarray, band_ids, rows: int, eligible: np.ndarray, dirty: np.ndarray, max_bucket: int = 64
) -> np.ndarray:
    """Candidate pairs ``(i, j)``, ``i < j``, colliding in any of ``band_ids``; ``(n, 2)`` int64.

    Only ``eligible`` signatures take part; a pair needs at least one ``dirty`` side, so an
    incremental build re-examines only pairs that touch changed files.
    """
    idx = np.flatnonzero(eligible)
    if idx.size < 2:
        return np.empty((0, 2), np.int64)
    out = []
    with np.errstate(over="ignore"):
        for band in band_ids:
            keys = band_keys(sigs[idx], band, rows)
            order = np.argsort(keys, kind="stable")
            sk = keys[order]
            bounds = np.flatnonzero(np.diff(sk)) + 1
            starts = np.concatenate(([0], bounds))
            ends = np.concatenate((bounds, [len(sk)]))
            size = ends - starts
            keep = (size >= 2) & (size <= max_bucket)
            starts, ends = starts[keep], ends[keep]
            if not starts.size:
                continue
            total = int(((ends - starts) * (ends - starts - 1) // 2).sum())
            a = np.empty(total, np.int64)
            b = np.empty(total, np.int64)
            n = _emit_pairs(idx[order], starts, ends, dirty, a, b)
            out.append(np.stack([a[:n], b[:n]], axis=1))
    if not out:
        return np.empty((0, 2), np.int64)
    return unique_pairs(np.concatenate(out))


def unique_pairs(pairs: np.ndarray) -> np.ndarray:
    """The distinct rows of ``pairs`` in (first, second) order: the candidates come out of
    buckets whose order follows the process's string-hash seed, and where scores tie, the
    order decides which edges the per-column cap keeps and the order of the edge file."""
    if pairs.size == 0:
        return pairs.reshape(0, 2).astype(np.int64)
    key = pairs[:, 0].astype(np.int64) << 32 | pairs[:, 1].astype(np.int64)
    _, first = np.unique(key, return_index=True)
    return pairs[first]
