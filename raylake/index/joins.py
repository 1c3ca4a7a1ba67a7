"""Join edges between columns of different tables.

Candidates come from three places, so that neither renamed keys nor keys with
uninformative values are missed:

1. MinHash LSH over the columns' distinct values (:mod:`.lsh`);
2. the nearest columns by header embedding (FAISS, cosine ≥ 0.5);
3. columns with the same spelling-free header (``Club_ID`` / ``clubid``), in groups small
   enough to be informative.

Each candidate pair (a, b) gets a joinability score in (0, 1], a noisy-OR of two kinds of
evidence, gated by key-likeness:

    value = max(C(a⊆b)·1[b key-like], C(b⊆a)·1[a key-like], ½·max(C(a⊆b), C(b⊆a))) · spec
    name  = max(token-Jaccard(words_a, words_b), (cos(emb_a, emb_b) − 0.5)/0.4 clipped, same header) · type-compat
            ≤ 0.25 when both headers are generic keys (``id`` / ``ID``: they name no entity);
            ≥ 0.55 + 0.45·rel for a reference header onto a generic key-like column
            (``station_id`` → ``id``), rel = (cos(emb_ref, table_key) − 0.2)/0.4 clipped
    score = (1 − (1 − 0.9·value)(1 − 0.85·name)) · (1 if a or b is key-like else 0.6)
            · (0.7 when the two value sets are disjoint, see :func:`disjoint` and
               :func:`exactly_disjoint`, or only one of the two columns has values)
    final = 0.97·score + 0.03·(½·Jaccard(a, b) + ½·cos(table_a, table_b))   (tie-break)

Generic keys and reference headers: in a lake whose tables say what they are only through
their headers, two primary keys both called ``id`` share the most common header there is,
not a relationship, while ``station_id`` → ``id`` is the usual foreign key onto a table
that never says "station". Credited as equal names, the ``id`` pairs of unrelated tables
filled the per-column slots of every ``id`` key before its real foreign keys (:func:`score_pairs`
on the Spider index: ``station.id`` – ``customers.id`` 0.88, ``status.station_id`` →
``station.id`` 0.61 before; 0.43 and 0.84 now).
On the Spider lake (``python -m bench.index_bench``) gold join pairs found rose from 81.2 %
to 82.1 % at the same 25 edges per table (10 per column; 83.7 % at 11, the default).

Disjoint values: an equi-join whose values never meet returns nothing, so their absence is
evidence against the pair, not merely no evidence for it. Without it, two same-named keys
scored 0.85 on the name alone; on the Spider index 14,911 of 26,860 join edges had no value
containment either way, mostly ``customer_id`` / ``Name`` pairs of unrelated databases, and
they held the per-column slots of real foreign keys. With the 0.7 weight (``python -m
bench.index_bench``; ``python -m bench.retrieval --budgets 10 --methods raylake --limit
300``): edges per table 27.3 → 24.6, gold join pairs found at column level 83.7 → 84.0 %
(table level 90.9 → 90.1 %: the pairs lost were two row-shards' files that share no key
values, or same-database ``Name`` columns with nothing in common, not the gold foreign key),
retrieval F1 at L = 10 0.477 → 0.489 (0.486 / 0.489 / 0.489 / 0.490 at weights 0.5 / 0.6 /
0.7 / 0.8, 0.487 with the pairs dropped), entity F1 of the intent extractor 0.605 → 0.610.
A value set of a few entries against one of thousands stays undecided (128 minima need not
show a small subset), and so does a pair of two columns without values (the header-only
tables of an empty database: their schema is all there is to join them by). A column without
values against one with values is decided, though: the join returns nothing, as for disjoint
values. Before, such pairs scored on the name alone (``Name`` of a header-only people table
— 71 of the Spider lake's files hold no rows — against every ``Name`` at 0.83), and search
bridged through empty tables to plans that fused no rows. With the 0.7 (``python -m
bench.index_bench``; ``python -m bench.retrieval --budgets 10 --methods raylake --limit
300``; ``python -m bench.intent_bench``): join edges 24,232 → 23,684, gold join pairs found
84.0 → 84.0 % (column), 90.1 → 90.2 % (table); empty tables no gold set holds in the plans
of 300 questions 43 → 23 (a scratch tally over that run's predictions), retrieval F1 at L = 10 0.509 → 0.513 (Sufficiency 0.410 →
0.403); intent entity F1 on all 1,701 questions 0.594 → 0.596.

Value sets known in full decide what MinHash cannot: a text column whose every distinct
value is in the value index (``value_index_max_distinct``, ``value_max_chars``) is compared
exactly with another such column, and no common value counts as disjoint whatever the two
sizes (six people's names against 500 wine names, both ``Name``, the pair that emptied a
fused answer). Same runs: join edges 23,684 → 23,507 (gold join pairs found unchanged at
84.0 % / 90.2 %); retrieval F1 at L = 10 0.513 → 0.514, Sufficiency 0.403 → 0.407 (all
1,701 questions: 0.496 → 0.496, 0.402 → 0.402); plans of 300 questions that fused to no
rows 63 → 58 (every 5.67th question in file order, not the seeded ``--limit 300`` sample;
``raylake ask --questions Q --fuse --json`` on them, ``fused.rows`` counted by a scratch
script); intent entity F1 on 400 questions 0.611 → 0.608 (noise-level; join
0.376 → 0.373).

Header cosines below 0.5 count nothing: MiniLM puts short unrelated headers that share
only a generic token (``company id`` / ``product id``) near 0.4–0.5, and crediting them
filled the per-column slots of key columns with such pairs (on the Spider lake: 2.9 fewer
edges per table and more gold joins kept than with a 0.35 floor).

``spec`` discounts value overlap that is likely by chance: small dense integer ranges
(1..n ids) are contained in each other all over a lake, so their containment counts 0.35;
text, dates and wide numeric ranges count fully. Each column keeps its
``join_max_per_column`` best edges. The edge is stored from the contained (foreign-key)
side to the key side.

Two columns that a union edge aligns (the same column of two shards of one table) are not
a join: their equal names and values say "same attribute", which the union edge already
records, and as join candidates they would take the slots of real foreign keys.

Memory stays linear in the number of candidates: pairs are scored in fixed-size chunks
(the embedding and signature rows of a chunk are gathered, never those of all pairs), only
pairs above the threshold are kept, and the per-column selection is a numba loop.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numba
import numpy as np

from raylake.config import IndexConfig
from raylake.index.arrays import ColumnArrays
from raylake.index.lsh import unique_pairs
from raylake.index.profile import KEY_WORDS
from raylake.kernels.minhash import containment, jaccard

_NUMERIC = {"int", "float"}
_STEM = re.compile(r"(ies|es|s)$")


@lru_cache(maxsize=1 << 16)
def _tokens(words: str) -> frozenset[str]:
    return frozenset(_STEM.sub("", w) if len(w) > 3 else w for w in words.split())


def token_jaccard(a: str, b: str) -> float:
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


def type_compatible(da: np.ndarray, db: np.ndarray) -> np.ndarray:
    same = da == db
    num = np.isin(da, list(_NUMERIC)) & np.isin(db, list(_NUMERIC))
    # ids are often text in one file and numbers in another; canonical strings still match
    mixed = (np.isin(da, ["int", "text"]) & np.isin(db, ["int", "text"]))
    return np.where(same | num, 1.0, np.where(mixed, 0.7, 0.0))


def value_specificity(cols: ColumnArrays, i: np.ndarray) -> np.ndarray:
    d = cols.dtype[i]
    small_dense = (d == "int") & (np.nan_to_num(cols.vmax[i], nan=0.0) <= 5000) & (np.nan_to_num(cols.vmin[i], nan=0.0) >= -1)
    spec = np.where(small_dense, 0.35, 1.0)
    spec = np.where(d == "bool", 0.0, spec)
    spec = np.where(d == "float", 0.5, spec)
    # a handful of distinct values (yes/no, 1..3) overlaps by chance
    return spec * np.clip(np.log1p(cols.n_distinct[i]) / np.log(20.0), 0.0, 1.0)


def name_candidates(cols: ColumnArrays, dirty: np.ndarray, max_group: int = 400) -> np.ndarray:
    groups: dict[str, list[int]] = {}
    for i, n in enumerate(cols.norm_name):
        groups.setdefault(n, []).append(i)
    out = []
    for members in groups.values():
        if len(members) < 2 or len(members) > max_group:
            continue
        m = np.asarray(members)
        a, b = np.triu_indices(len(m), 1)
        pa_, pb = m[a], m[b]
        keep = (cols.table[pa_] != cols.table[pb]) & (dirty[pa_] | dirty[pb])
        out.append(np.stack([pa_[keep], pb[keep]], 1))
    return np.concatenate(out) if out else np.empty((0, 2), np.int64)


def embedding_candidates(emb: np.ndarray, cols: ColumnArrays, dirty: np.ndarray, k: int, min_cos: float = 0.5) -> np.ndarray:
    import faiss

    if len(cols) < 2 or not dirty.any():
        return np.empty((0, 2), np.int64)
    index = faiss.IndexFlatIP(emb.shape[1])
    index.add(np.ascontiguousarray(emb, np.float32))
    q = np.flatnonzero(dirty)
    sims, nbrs = index.search(np.ascontiguousarray(emb[q], np.float32), min(k + 1, len(cols)))
    a = np.repeat(q, nbrs.shape[1])
    b = nbrs.ravel()
    s = sims.ravel()
    keep = (b >= 0) & (s >= min_cos) & (a != b)
    a, b = a[keep], b[keep]
    keep = cols.table[a] != cols.table[b]
    pairs = np.stack([np.minimum(a, b)[keep], np.maximum(a, b)[keep]], 1)
    return pairs


_GENERIC_NAME = 0.25  # name evidence of two generic keys (``id`` / ``ID``): they name no entity
_FK_NAME = 0.55  # name evidence of ``<entity> id`` → a generic key, before the entity/table relatedness
_CHUNK = 1 << 16  # candidate pairs scored at a time (bounds the gathered embedding rows)
_COS_FLOOR = 0.5  # header cosine that counts as no name evidence (see the module docstring)
SCORING = 4  # version of the join scoring below, kept in the manifest (2: disjoint values weigh 0.7; 3: so does a column without values against one with values; 4: and value sets the value index holds in full that share nothing)
_DISJOINT = 0.7  # weight of a pair whose value sets are disjoint (see the module docstring)


def _pair_token_jaccard(words: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Token Jaccard of the headers of pairs ``(a, b)``, computed once per distinct header pair."""
    uniq, wid = np.unique(words.astype(str), return_inverse=True)
    key = wid[a].astype(np.int64) * len(uniq) + wid[b]
    ukey, inv = np.unique(key, return_inverse=True)
    vals = np.array([token_jaccard(uniq[k // len(uniq)], uniq[k % len(uniq)]) for k in ukey.tolist()], np.float32)
    return vals[inv]


def _shape(words: str) -> int:
    """0: a descriptive header; 1: a reference ``<entity> id`` (``station id``); 2: a generic key (``id``)."""
    toks = words.lower().split()
    if toks and all(t in KEY_WORDS for t in toks):
        return 2
    return 1 if len(toks) >= 2 and toks[-1] in KEY_WORDS else 0


def _column_shapes(words: np.ndarray) -> np.ndarray:
    """(C,) :func:`_shape` of every column, computed once per distinct header."""
    uniq, wid = np.unique(words.astype(str), return_inverse=True)
    return np.array([_shape(w) for w in uniq.tolist()], np.int8)[wid]


def disjoint(n_a: np.ndarray, n_b: np.ndarray, jac: np.ndarray, num_perm: int, confidence: float = 0.05) -> np.ndarray:
    """Are two value sets of ``n_a`` and ``n_b`` distinct values (almost surely) disjoint? A
    MinHash Jaccard estimate ``jac`` of 0 says so when the smaller set, were it inside the
    larger, would have matched at least one of the ``num_perm`` minima:
    P(no match | A ⊆ B) = (1 − min/max)^num_perm < ``confidence`` (sizes within a factor ≈ 43
    at 128 permutations; a short list against a long one stays undecided)."""
    n_a, n_b = np.asarray(n_a, np.float64), np.asarray(n_b, np.float64)
    ratio = np.minimum(n_a, n_b) / np.maximum(np.maximum(n_a, n_b), 1.0)
    return (n_a > 0) & (n_b > 0) & (jac == 0) & ((1.0 - ratio) ** num_perm < confidence)


@dataclass(frozen=True)
class ValueSets:
    """The distinct values of the text columns that the value index holds in full, as sorted
    value ids per column (CSR: column c's ids are ``ids[offsets[c]:offsets[c + 1]]``): an
    int32 per value, so a lake of millions of indexed values costs megabytes, not the Python
    sets it would take. ``full[c]``: every distinct value of column c is there."""

    offsets: np.ndarray  # (C + 1,) int64
    ids: np.ndarray  # (V,) int32, sorted within each column
    full: np.ndarray  # (C,) bool


def value_sets(cols: ColumnArrays, values, column_ids: np.ndarray) -> ValueSets:
    """:class:`ValueSets` of the value index: ``values`` (a pyarrow string array) held by
    ``column_ids`` (aligned ints), the rows ``values.parquet`` stores."""
    n = len(cols)
    column_ids = np.asarray(column_ids, np.int64)
    if not len(column_ids):
        return ValueSets(np.zeros(n + 1, np.int64), np.zeros(0, np.int32), np.zeros(n, bool))
    ids = values.dictionary_encode().indices.to_numpy().astype(np.int32)
    order = np.lexsort((ids, column_ids))
    counts = np.bincount(column_ids, minlength=n)
    return ValueSets(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), ids[order],
                     (counts == cols.n_distinct) & (counts > 0))


@numba.njit(cache=True)
def _disjoint_sorted(offsets, ids, a, b):
    out = np.zeros(a.shape[0], np.bool_)
    for k in range(a.shape[0]):
        i, i_end = offsets[a[k]], offsets[a[k] + 1]
        j, j_end = offsets[b[k]], offsets[b[k] + 1]
        meet = False
        while i < i_end and j < j_end:
            if ids[i] == ids[j]:
                meet = True
                break
            if ids[i] < ids[j]:
                i += 1
            else:
                j += 1
        out[k] = not meet
    return out


def exactly_disjoint(a: np.ndarray, b: np.ndarray, sets: ValueSets | None) -> np.ndarray:
    """(P,) bool: both columns' value sets are known in full (:func:`value_sets`) and share no value."""
    if sets is None or not len(a):
        return np.zeros(len(a), bool)
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    both = sets.full[a] & sets.full[b]
    out = np.zeros(len(a), bool)
    if both.any():
        out[both] = _disjoint_sorted(sets.offsets, sets.ids, a[both], b[both])
    return out


def _score_chunk(cols, sigs, emb, a, b, table_emb, tok, shape, sets=None):
    vals_a, vals_b = cols.n_distinct[a] > 0, cols.n_distinct[b] > 0
    jac = np.where(vals_a & vals_b, jaccard(sigs[a], sigs[b]), 0.0)
    c_ab = containment(jac, cols.n_distinct[a], cols.n_distinct[b])
    c_ba = containment(jac, cols.n_distinct[b], cols.n_distinct[a])
    ka, kb = cols.key_like[a], cols.key_like[b]
    spec = np.minimum(value_specificity(cols, a), value_specificity(cols, b))
    value = np.maximum.reduce([c_ab * kb, c_ba * ka, 0.5 * np.maximum(c_ab, c_ba)]) * spec
    cos = np.einsum("ij,ij->i", emb[a], emb[b])
    same = cols.norm_name[a] == cols.norm_name[b]
    name = np.maximum.reduce([tok, np.clip((cos - _COS_FLOOR) / (0.9 - _COS_FLOOR), 0.0, 1.0), same.astype(float)])
    sa, sb = shape[a], shape[b]
    name = np.where((sa == 2) & (sb == 2), np.minimum(name, _GENERIC_NAME), name)
    if table_emb is not None:
        # a reference header names its target: 'station id' is about a table of stations
        for ref, key, s_ref, s_key, k_key in ((a, b, sa, sb, kb), (b, a, sb, sa, ka)):
            fk = (s_ref == 1) & (s_key == 2) & k_key
            if fk.any():
                rel = np.clip((np.einsum("ij,ij->i", emb[ref], table_emb[cols.table[key]]) - 0.2) / 0.4, 0.0, 1.0)
                name = np.where(fk, np.maximum(name, _FK_NAME + (1.0 - _FK_NAME) * rel), name)
    tc = type_compatible(cols.dtype[a], cols.dtype[b])
    name = name * tc
    value = value * (tc > 0)
    keyed = ka | kb | cols.name_key_hint[a] | cols.name_key_hint[b]
    score = (1.0 - (1.0 - 0.9 * value) * (1.0 - 0.85 * name)) * np.where(keyed, 1.0, 0.6)
    # values that never meet are evidence against an equi-join (it would return nothing), not
    # merely no evidence for one: same-named keys of unrelated tables no longer take the slots
    # of the foreign keys whose values do meet (figures in the module docstring)
    void = vals_a != vals_b
    apart = void | disjoint(cols.n_distinct[a], cols.n_distinct[b], jac, sigs.shape[1]) | exactly_disjoint(a, b, sets)
    score = np.where(apart, _DISJOINT * score, score)
    # Tie-break among equally named keys (78 `customer_id` columns in the Spider lake): the
    # pair from one source shares id ranges (Jaccard) and vocabulary (table cosine).
    context = jac
    if table_emb is not None:
        tcos = np.einsum("ij,ij->i", table_emb[cols.table[a]], table_emb[cols.table[b]])
        context = 0.5 * jac + 0.5 * np.clip(tcos, 0.0, 1.0)
    score = score * 0.97 + 0.03 * context
    # direction: from the contained (foreign-key) side to the key side
    a_to_b = (kb & ~ka) | ((ka == kb) & (c_ab >= c_ba))
    return {
        "src": np.where(a_to_b, a, b),
        "dst": np.where(a_to_b, b, a),
        "score": np.clip(score, 0.0, 1.0).astype(np.float32),
        "containment": np.where(a_to_b, c_ab, c_ba).astype(np.float32),  # C(src ⊆ dst)
        "containment_rev": np.where(a_to_b, c_ba, c_ab).astype(np.float32),
        "name_sim": name.astype(np.float32),
        "value_sim": value.astype(np.float32),
    }


def score_pairs(
    cols: ColumnArrays,
    sigs: np.ndarray,
    emb: np.ndarray,
    pairs: np.ndarray,
    table_emb: np.ndarray | None = None,
    min_score: float | None = None,
    chunk: int = _CHUNK,
    sets: ValueSets | None = None,
) -> dict[str, np.ndarray]:
    """Joinability of each candidate pair; arrays aligned with ``pairs`` (or, with
    ``min_score``, with the pairs scoring at least that, in order). ``sets``: the value sets
    known in full (:func:`value_sets`), which decide disjointness where MinHash cannot."""
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    tok = _pair_token_jaccard(cols.words, pairs[:, 0], pairs[:, 1]) if len(pairs) else np.zeros(0, np.float32)
    shape = _column_shapes(cols.words)
    parts = []
    for lo in range(0, len(pairs), chunk):
        a, b = pairs[lo : lo + chunk, 0], pairs[lo : lo + chunk, 1]
        part = _score_chunk(cols, sigs, emb, a, b, table_emb, tok[lo : lo + chunk], shape, sets)
        if min_score is not None:
            ok = part["score"] >= min_score
            part = {k: v[ok] for k, v in part.items()}
        parts.append(part)
    if not parts:
        parts = [_score_chunk(cols, sigs, emb, pairs[:, 0], pairs[:, 1], table_emb, tok, shape, sets)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


@numba.njit(cache=True)
def _greedy_keep(order, src, dst, count, per_column):
    keep = np.empty(order.shape[0], np.int64)
    n = 0
    for e in order:
        s, d = src[e], dst[e]
        if count[s] < per_column or count[d] < per_column:
            keep[n] = e
            n += 1
            count[s] += 1
            count[d] += 1
    return keep[:n]


def keep_best(
    scored: dict[str, np.ndarray], n_columns: int, threshold: float, per_column: int, held: np.ndarray | None = None
) -> np.ndarray:
    """Indices of scored pairs above ``threshold`` and among each endpoint's ``per_column`` best.

    ``held``: join edges each column already has (carried over by an incremental build), so
    that a re-indexed file does not give its partners more edges than a cold build would.
    """
    ok = np.flatnonzero(scored["score"] >= threshold)
    if ok.size == 0:
        return ok.astype(np.int64)
    order = ok[np.argsort(-scored["score"][ok], kind="stable")].astype(np.int64)
    count = np.zeros(n_columns, np.int64) if held is None else np.asarray(held, np.int64).copy()
    return _greedy_keep(order, scored["src"].astype(np.int64), scored["dst"].astype(np.int64), count, per_column)


def drop_pairs(pairs: np.ndarray, exclude: np.ndarray | None) -> np.ndarray:
    """``pairs`` (``i < j``) without those in ``exclude`` (unordered column pairs)."""
    if exclude is None or len(exclude) == 0 or len(pairs) == 0:
        return pairs
    ex = np.sort(np.asarray(exclude, np.int64).reshape(-1, 2), axis=1)
    k_ex = ex[:, 0] << 32 | ex[:, 1]
    k = pairs[:, 0].astype(np.int64) << 32 | pairs[:, 1].astype(np.int64)
    return pairs[~np.isin(k, k_ex)]


def find_joins(
    cols: ColumnArrays,
    sigs: np.ndarray,
    emb: np.ndarray,
    table_emb: np.ndarray,
    dirty: np.ndarray,
    lsh_pairs: np.ndarray,
    cfg: IndexConfig,
    exclude: np.ndarray | None = None,
    held: np.ndarray | None = None,
    sets: ValueSets | None = None,
):
    """All join edges touching a ``dirty`` column: ``(scored arrays, kept indices)``.

    ``exclude``: column pairs that are not join candidates (aligned by a union edge);
    ``held``: carried-over join edges per column (see :func:`keep_best`); ``sets``: value
    sets known in full (:func:`value_sets`).
    """
    pairs = np.concatenate(
        [
            lsh_pairs.reshape(-1, 2),
            name_candidates(cols, dirty),
            embedding_candidates(emb, cols, dirty, cfg.header_neighbours),
        ]
    ).astype(np.int64)
    pairs = pairs[cols.table[pairs[:, 0]] != cols.table[pairs[:, 1]]] if len(pairs) else pairs
    pairs = drop_pairs(unique_pairs(pairs), exclude)
    if len(pairs) == 0:
        return None, np.empty(0, np.int64)
    scored = score_pairs(cols, sigs, emb, pairs, table_emb, min_score=cfg.join_threshold, sets=sets)
    return scored, keep_best(scored, len(cols), cfg.join_threshold, cfg.join_max_per_column, held)
