"""The numba MinHash kernel against datasketch, the reference implementation it copies.

Given the same 32-bit input hashes (datasketch's ``sha1_hash32``), the signatures must be
``datasketch.MinHash(num_perm, seed).hashvalues`` bit for bit. With raylake's own FNV-1a
input hash the signatures differ, but both are MinHash: their Jaccard estimates must agree
with the exact Jaccard, and with each other, within sampling error.
"""
from __future__ import annotations

import numpy as np
import pytest
from datasketch import MinHash
from datasketch.hashfunc import sha1_hash32

from raylake.kernels import minhash


def _sets(rng: np.random.Generator, n_sets: int, universe: int = 5000) -> list[list[str]]:
    sizes = rng.integers(0, 300, n_sets)
    sizes[0] = 0  # the empty set's signature is all 0xFFFFFFFF in both
    sizes[1] = 1
    return [[f"v{x}" for x in rng.choice(universe, size=s, replace=False)] for s in sizes]


def _offsets(sets) -> np.ndarray:
    return np.concatenate([[0], np.cumsum([len(s) for s in sets])]).astype(np.int64)


def _datasketch(values, num_perm, seed, hashfunc=sha1_hash32) -> MinHash:
    m = MinHash(num_perm=num_perm, seed=seed, hashfunc=hashfunc)
    for v in values:
        m.update(v.encode("utf-8"))
    return m


@pytest.mark.parametrize("num_perm,seed", [(128, 1), (64, 7), (256, 42)])
def test_signatures_equal_datasketch_hashvalues(num_perm, seed):
    rng = np.random.default_rng(seed)
    sets = _sets(rng, 40)
    hashes = np.array([sha1_hash32(v.encode("utf-8")) for s in sets for v in s], np.uint32)
    ours = minhash.signatures(hashes, _offsets(sets), num_perm, seed)
    assert ours.shape == (len(sets), num_perm) and ours.dtype == np.uint32
    for row, values in zip(ours, sets):
        np.testing.assert_array_equal(row, _datasketch(values, num_perm, seed).hashvalues)


def test_permutations_are_datasketchs():
    a, b = minhash.permutations(128, 1)
    ref = MinHash(num_perm=128, seed=1)
    pa, pb = ref.permutations
    np.testing.assert_array_equal(a, np.asarray(pa, np.uint32))
    np.testing.assert_array_equal(b, np.asarray(pb, np.uint32))


def test_fnv_hash_is_fnv1a_and_matches_for_lists_and_arrow():
    import pyarrow as pa

    values = ["", "a", "Alabama", "ünïcode", "x" * 1000]

    def fnv1a(s: str) -> int:
        h = 2166136261
        for byte in s.encode("utf-8"):
            h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
        return h

    expected = np.array([fnv1a(v) for v in values], np.uint32)
    np.testing.assert_array_equal(minhash.hash_strings(values), expected)
    np.testing.assert_array_equal(minhash.hash_strings(pa.array(values)), expected)
    sliced = pa.array(["skip", *values]).slice(1)  # a non-zero Arrow offset
    np.testing.assert_array_equal(minhash.hash_strings(sliced), expected)
    with pytest.raises(ValueError):
        minhash.hash_strings(pa.array(["a", None]))


def test_jaccard_estimates_match_datasketch_within_sampling_error():
    num_perm, seed = 128, 1
    rng = np.random.default_rng(0)
    ours_err, ds_err, diff = [], [], []
    for _ in range(300):
        n_a, n_b = rng.integers(20, 400, 2)
        shared = rng.integers(0, min(n_a, n_b) + 1)
        pool = rng.choice(100_000, size=n_a + n_b - shared, replace=False)
        a = [f"k{x}" for x in pool[:n_a]]
        b = [f"k{x}" for x in pool[n_a - shared :]]
        exact = shared / (n_a + n_b - shared)
        sig = minhash.signatures(minhash.hash_strings(a + b), np.array([0, len(a), len(a) + len(b)]), num_perm, seed)
        ours = float(minhash.jaccard(sig[0], sig[1]))
        ds = _datasketch(a, num_perm, seed, None).jaccard(_datasketch(b, num_perm, seed, None))
        sigma = np.sqrt(max(exact * (1 - exact), 1e-3) / num_perm)
        assert abs(ours - exact) <= 5 * sigma + 1e-9, (n_a, n_b, shared, ours, exact)
        ours_err.append(ours - exact)
        ds_err.append(ds - exact)
        diff.append(ours - ds)
    # unbiased, and as accurate as datasketch with its SHA-1 input hash
    assert abs(np.mean(ours_err)) < 0.01
    assert np.mean(np.abs(ours_err)) < 1.25 * np.mean(np.abs(ds_err)) + 0.005
    assert abs(np.mean(diff)) < 0.01


def test_containment_estimator():
    num_perm = 256
    universe = [f"id{i}" for i in range(2000)]
    small, big, other = universe[:100], universe[:1000], universe[1000:1100]
    sets = [small, big, other, small, []]
    sig = minhash.signatures(minhash.hash_strings([v for s in sets for v in s]), _offsets(sets), num_perm, 1)
    size = np.array([len(s) for s in sets], float)

    def c(i, j):
        return float(minhash.containment(minhash.jaccard(sig[i], sig[j]), size[i], size[j]))

    assert c(0, 1) > 0.75  # a foreign key inside its key column: C(A ⊆ B) ≈ 1
    assert c(1, 0) < 0.25  # the other way: C(B ⊆ A) ≈ 0.1
    assert c(0, 2) < 0.1  # disjoint
    assert c(0, 3) == pytest.approx(1.0)  # equal sets
    assert c(4, 1) == 0.0  # an empty set is contained in nothing
    # vectorised and clipped to [0, 1]
    out = minhash.containment(np.array([0.0, 0.5, 1.0]), np.array([10, 10, 10]), np.array([10, 1000, 10]))
    assert out.shape == (3,) and np.all((out >= 0) & (out <= 1))
