"""Join and union candidate stages on the example index: chunked scoring equals one-shot
scoring, the numba selection equals the plain greedy rule, band-by-band LSH deduplication
loses no pair, and columns aligned by a union edge are not join edges."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from raylake.config import IndexConfig
from raylake.index import joins
from raylake.index.arrays import ColumnArrays
from raylake.index.build import _lsh_task
from raylake.index.lsh import bands_to_pairs, unique_pairs
from raylake.index.reader import LakeIndex


@pytest.fixture(scope="module")
def lake_arrays(example_index):
    idx = LakeIndex(example_index)
    n = idx.n_columns
    records = [{k: idx.columns[k][c] for k in idx.columns} for c in range(n)]
    cols = ColumnArrays.from_records(idx.col_table, records)
    return idx, cols


def _all_pairs(cols: ColumnArrays) -> np.ndarray:
    a, b = np.triu_indices(len(cols), 1)
    keep = cols.table[a] != cols.table[b]
    return np.stack([a[keep], b[keep]], 1).astype(np.int64)


def test_chunked_scoring_equals_one_shot_and_filters_by_threshold(lake_arrays):
    idx, cols = lake_arrays
    pairs = _all_pairs(cols)
    full = joins.score_pairs(cols, idx.signatures, idx.emb_header, pairs, idx.emb_table)
    small = joins.score_pairs(cols, idx.signatures, idx.emb_header, pairs, idx.emb_table, chunk=37)
    assert len(full["score"]) == len(pairs) > 37
    for k in full:
        np.testing.assert_array_equal(full[k], small[k])
    kept = joins.score_pairs(cols, idx.signatures, idx.emb_header, pairs, idx.emb_table, min_score=0.3, chunk=37)
    ok = full["score"] >= 0.3
    assert 0 < ok.sum() < len(pairs)
    for k in full:
        np.testing.assert_array_equal(kept[k], full[k][ok])


def _greedy_reference(scored, n_columns, threshold, per_column, held=None):
    ok = np.flatnonzero(scored["score"] >= threshold)
    order = ok[np.argsort(-scored["score"][ok], kind="stable")]
    count = np.zeros(n_columns, np.int64) if held is None else held.copy()
    keep = []
    for e in order:
        s, d = scored["src"][e], scored["dst"][e]
        if count[s] < per_column or count[d] < per_column:
            keep.append(e)
            count[s] += 1
            count[d] += 1
    return np.asarray(keep, np.int64)


@pytest.mark.parametrize("per_column", [1, 3, 10])
def test_keep_best_matches_the_greedy_rule(per_column):
    rng = np.random.default_rng(per_column)
    n, m = 60, 2000
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    scored = {"src": a, "dst": b, "score": rng.random(m).round(2).astype(np.float32)}  # ties on purpose
    got = joins.keep_best(scored, n, 0.3, per_column)
    want = _greedy_reference(scored, n, 0.3, per_column)
    np.testing.assert_array_equal(got, want)
    counts = np.bincount(np.concatenate([a[got], b[got]]), minlength=n)
    assert len(got) < (scored["score"] >= 0.3).sum() and counts.max() > 0


def test_band_by_band_lsh_keeps_every_pair(lake_arrays):
    idx, cols = lake_arrays
    eligible = (cols.n_distinct >= 2) & np.isin(cols.dtype, ["int", "text", "date"])
    dirty = np.ones(len(cols), bool)
    want = bands_to_pairs(idx.signatures, range(64), 2, eligible, dirty, 200)
    got = _lsh_task(idx.signatures, range(64), 2, eligible, dirty, 200)
    assert len(want) > 0
    assert {tuple(p) for p in want.tolist()} == {tuple(p) for p in got.tolist()}


def test_candidate_pairs_come_out_in_one_order_whatever_order_they_came_in():
    # LSH buckets come out in string-hash order, which Python salts per process: where join
    # scores tie, that order decided which edges the per-column cap kept and the edge file's order
    pairs = np.array([[3, 4], [1, 2], [3, 4], [0, 5], [1, 2], [0, 2]], np.int64)
    want = [[0, 2], [0, 5], [1, 2], [3, 4]]
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert unique_pairs(pairs[rng.permutation(len(pairs))]).tolist() == want


def test_drop_pairs_ignores_orientation():
    pairs = unique_pairs(np.array([[0, 1], [0, 2], [1, 2], [2, 3]], np.int64))
    left = joins.drop_pairs(pairs, np.array([[2, 0], [3, 2]]))
    assert left.tolist() == [[0, 1], [1, 2]]
    assert joins.drop_pairs(pairs, None).tolist() == pairs.tolist()


def test_union_aligned_columns_are_not_join_candidates(lake_arrays):
    idx, cols = lake_arrays
    aligned = []
    for e in idx.edges:
        if e["kind"] == "union":
            for x, y in json.loads(e["mapping"]).items():
                aligned.append((idx.col_index[(e["src_table"], x)], idx.col_index[(e["dst_table"], y)]))
    assert aligned  # the example lake has shards (points_2019 / points_2020)
    # without the exclusion these pairs score as joins (same attribute, same values) ...
    scored = joins.score_pairs(cols, idx.signatures, idx.emb_header, np.sort(np.asarray(aligned), 1), idx.emb_table)
    assert (scored["score"] >= IndexConfig().join_threshold).any()
    # ... and the index keeps none of them as a join edge
    join_pairs = {
        frozenset(((e["src_table"], e["src_column"]), (e["dst_table"], e["dst_column"]))) for e in idx.edges if e["kind"] == "join"
    }
    for i, j in aligned:
        key = frozenset(((idx.columns["path"][i], idx.columns["name"][i]), (idx.columns["path"][j], idx.columns["name"][j])))
        assert key not in join_pairs


def test_keep_best_counts_edges_a_column_already_holds():
    rng = np.random.default_rng(7)
    n, m = 40, 1500
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    scored = {"src": a, "dst": b, "score": rng.random(m).astype(np.float32)}
    held = rng.integers(0, 6, n)
    got = joins.keep_best(scored, n, 0.3, 5, held)
    np.testing.assert_array_equal(got, _greedy_reference(scored, n, 0.3, 5, held))
    assert len(got) < len(joins.keep_best(scored, n, 0.3, 5))
    # a column already holding its quota gains edges only through partners with room
    full = np.flatnonzero(held >= 5)
    for e in got:
        if a[e] in full and b[e] in full:
            raise AssertionError("an edge between two full columns was kept")


def _key_columns(value_sets: list[list[int]]) -> tuple[ColumnArrays, np.ndarray, np.ndarray]:
    """One key-like integer ``customer_id`` column per value set, each in a table of its own."""
    from raylake.kernels import minhash

    records = [{"name": "customer_id", "norm_name": "customerid", "words": "customer id", "dtype": "int",
                "n_rows": len(v), "n_distinct": len(set(v)), "uniqueness": 1.0, "key_like": True,
                "name_key_hint": True, "summary": {"min": min(v), "max": max(v)}, "sample": [str(x) for x in v[:3]]}
               for v in value_sets]
    cols = ColumnArrays.from_records(list(range(len(value_sets))), records)
    hashes = [minhash.hash_strings([str(x) for x in v]) for v in value_sets]
    offsets = np.cumsum([0] + [len(h) for h in hashes])
    sigs = minhash.signatures(np.concatenate(hashes), offsets, 128, 1)
    emb = np.tile(np.eye(1, 8, dtype=np.float32), (len(value_sets), 1))  # one header, one embedding
    return cols, sigs, emb


def test_same_named_keys_whose_values_never_meet_score_below_the_name_alone():
    # customers 1..40; a table referencing 1..40; another database's customers 1001..1040;
    # three ids of 5,000 (too few to tell from 128 minima whether they are among them)
    cols, sigs, emb = _key_columns([list(range(1, 41)), list(range(1, 41)), list(range(1001, 1041)),
                                    [9001, 9002, 9003], list(range(1, 5001))])
    s = joins.score_pairs(cols, sigs, emb, np.array([[0, 1], [0, 2], [3, 4]]))["score"]
    meet, apart, undecided = s
    name_alone = 0.97 * 0.85  # same header, no value evidence (the tie-break's context is 0 here)
    assert meet > 0.9
    assert apart == pytest.approx(0.7 * name_alone, abs=1e-6) and apart < 0.6
    assert undecided == pytest.approx(name_alone, abs=1e-6)


def test_a_key_without_values_against_one_with_values_scores_as_disjoint():
    # an empty table's customer_id (header only) meets no value of a customers table: the
    # equi-join returns nothing, as for disjoint values; two empty tables stay undecided
    cols, sigs, emb = _key_columns([list(range(1, 41))] * 3)
    cols.n_distinct[1:] = 0
    one_empty, both_empty = joins.score_pairs(cols, sigs, emb, np.array([[0, 1], [1, 2]]))["score"]
    name_alone = 0.97 * 0.85
    assert one_empty == pytest.approx(0.7 * name_alone, abs=1e-6)
    assert both_empty == pytest.approx(name_alone, abs=1e-6)


def test_value_sets_known_in_full_decide_what_minhash_cannot():
    # six people's names against five hundred wine names: 128 minima cannot show whether the
    # six are among them, the value index (which holds both in full) can
    from raylake.kernels import minhash

    people = ["ann", "bo", "cy", "di", "ed", "flo"]
    wines = [f"wine {i}" for i in range(500)]
    both = people[:2] + wines[:498]
    sets_of = [people, wines, both]
    records = [{"name": "Name", "norm_name": "name", "words": "name", "dtype": "text", "n_rows": len(v),
                "n_distinct": len(v), "uniqueness": 1.0, "key_like": True, "name_key_hint": False,
                "summary": {}, "sample": v[:3]} for v in sets_of]
    cols = ColumnArrays.from_records([0, 1, 2], records)
    hashes = [minhash.hash_strings(v) for v in sets_of]
    sigs = minhash.signatures(np.concatenate(hashes), np.cumsum([0] + [len(h) for h in hashes]), 128, 1)
    emb = np.tile(np.eye(1, 8, dtype=np.float32), (3, 1))
    pairs = np.array([[0, 1], [0, 2]])
    assert not joins.disjoint(cols.n_distinct[[0]], cols.n_distinct[[1]], np.zeros(1), 128)[0]
    def index_of(lists):  # the value index's (value, column) rows
        rows = [(v, c) for c, vs in enumerate(lists) for v in vs]
        return pa.array([v for v, _ in rows], pa.string()), np.array([c for _, c in rows])

    sets = joins.value_sets(cols, *index_of(sets_of))
    assert sets.full.tolist() == [True, True, True]
    blind = joins.score_pairs(cols, sigs, emb, pairs)["score"]
    seen = joins.score_pairs(cols, sigs, emb, pairs, sets=sets)["score"]
    assert seen[0] == pytest.approx(0.7 * blind[0], abs=1e-6)  # no name meets: decided against
    assert seen[1] == pytest.approx(blind[1], abs=1e-6)  # two names meet: unchanged
    # a column whose values the index holds only in part (too long, too many) stays undecided
    partial = joins.value_sets(cols, *index_of([vs[: len(vs) - (c == 1)] for c, vs in enumerate(sets_of)]))
    assert partial.full.tolist() == [True, False, True]


def test_disjoint_needs_enough_minima_to_decide():
    jac0 = np.zeros(3)
    got = joins.disjoint(np.array([40, 3, 40]), np.array([40, 5000, 0]), jac0, 128)
    assert got.tolist() == [True, False, False]  # equal sizes: decided; 3 of 5,000: not; no values: not
    assert not joins.disjoint(np.array([40]), np.array([40]), np.array([0.01]), 128)[0]
