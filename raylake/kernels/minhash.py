"""MinHash signatures for many value sets in one call (Broder, 1997), compiled with numba.

The permutation scheme is datasketch 2.0's default ``"affine32"``, bit for bit: each 32-bit
input hash ``h`` is pre-mixed with the MurmurHash3 finalizer and permuted as
``a_k·h + b_k mod 2^32`` (``a_k`` odd), with ``(a, b)`` drawn from
``numpy.random.RandomState(seed)`` exactly as ``datasketch.MinHash`` draws them. Given the
same 32-bit hashes, :func:`signatures` therefore returns ``MinHash.hashvalues`` of every set
(``tests/kernels/test_minhash.py`` checks this), while running the whole lake in one
compiled loop instead of one Python object per column.

The input hash differs from datasketch's default: datasketch calls SHA-1 per value from
Python; here :func:`hash_strings` runs 32-bit FNV-1a over the UTF-8 bytes of an Arrow
string array in numba. Both are fixed, seed-free functions, so signatures are stable across
runs and machines (the incremental index depends on that).

Estimators (``sig`` rows are uint32 signatures of sets A and B):

    J(A, B) ≈ mean_k[sig_A[k] == sig_B[k]]
    |A ∩ B| ≈ J / (1 + J) · (|A| + |B|),   containment C(A ⊆ B) = |A ∩ B| / |A|
"""
from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa

_EMPTY = np.uint32(0xFFFFFFFF)


def permutations(num_perm: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The ``(a, b)`` uint32 parameters datasketch draws for ``MinHash(num_perm, seed)``."""
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint64).astype(np.uint32)
    return a, b


@numba.njit(cache=True, nogil=True)
def _fnv1a32(data, offsets, out):
    for i in range(out.shape[0]):
        h = np.uint32(2166136261)
        for j in range(offsets[i], offsets[i + 1]):
            h = np.uint32((h ^ np.uint32(data[j])) * np.uint32(16777619) & 0xFFFFFFFF)
        out[i] = h


def hash_strings(values) -> np.ndarray:
    """32-bit FNV-1a hashes of the UTF-8 bytes of ``values`` (a list or Arrow string array)."""
    arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    arr = arr.cast(pa.large_string())
    n = len(arr)
    out = np.empty(n, dtype=np.uint32)
    if n == 0:
        return out
    if arr.null_count:
        raise ValueError("hash_strings: values must not be null")
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64, count=n + 1, offset=arr.offset * 8)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(1, np.uint8)
    _fnv1a32(data, offsets, out)
    return out


@numba.njit(cache=True, nogil=True)
def _fmix32(h):
    h = h ^ (h >> np.uint32(16))
    h = np.uint32((h * np.uint32(0x85EBCA6B)) & 0xFFFFFFFF)
    h = h ^ (h >> np.uint32(13))
    h = np.uint32((h * np.uint32(0xC2B2AE35)) & 0xFFFFFFFF)
    return h ^ (h >> np.uint32(16))


@numba.njit(cache=True, nogil=True)
def _signatures(hashes, set_offsets, a, b, out):
    num_perm = a.shape[0]
    for s in range(out.shape[0]):
        row = out[s]
        for k in range(num_perm):
            row[k] = np.uint32(0xFFFFFFFF)
        for i in range(set_offsets[s], set_offsets[s + 1]):
            hv = _fmix32(hashes[i])
            for k in range(num_perm):
                phv = np.uint32((a[k] * hv + b[k]) & 0xFFFFFFFF)
                if phv < row[k]:
                    row[k] = phv


def signatures(hashes: np.ndarray, set_offsets: np.ndarray, num_perm: int = 128, seed: int = 1) -> np.ndarray:
    """Signatures of the sets ``hashes[set_offsets[s]:set_offsets[s+1]]``.

    Args:
        hashes: ``(n,)`` uint32 hashes of all sets' values, concatenated.
        set_offsets: ``(S+1,)`` int64 boundaries of the S sets.
    Returns:
        ``(S, num_perm)`` uint32; an empty set's row is all ``0xFFFFFFFF`` (as datasketch).
    """
    a, b = permutations(num_perm, seed)
    out = np.empty((len(set_offsets) - 1, num_perm), dtype=np.uint32)
    if out.shape[0]:
        _signatures(np.ascontiguousarray(hashes, np.uint32), np.asarray(set_offsets, np.int64), a, b, out)
    return out


def jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> np.ndarray:
    """Estimated Jaccard similarity of signature rows (broadcasts over leading axes)."""
    return np.mean(sig_a == sig_b, axis=-1)


def containment(jac: np.ndarray, size_a: np.ndarray, size_b: np.ndarray) -> np.ndarray:
    """Estimated C(A ⊆ B) = |A ∩ B| / |A| from a Jaccard estimate and the set sizes."""
    jac = np.asarray(jac, dtype=np.float64)
    size_a = np.asarray(size_a, dtype=np.float64)
    inter = jac / (1.0 + jac) * (size_a + np.asarray(size_b, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(size_a > 0, np.minimum(inter / np.maximum(size_a, 1.0), 1.0), 0.0)
