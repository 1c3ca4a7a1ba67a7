"""Join-specific tools (Octopus Sec. 3.3): the progressive join exploration.

Cheapest first: exact schema correspondence (two tables' columns with the same name or the
same values), then MinHash LSH over the index's stored signatures (value-compatible columns
under other names), then exact overlap of one suspected pair. Values are compared in the
form the index hashed them (:func:`raylake.index.profile.canonical`: text trimmed and
lower-cased, dates ISO), so an exact count and a MinHash estimate speak of the same sets.
"""
from __future__ import annotations

import numpy as np

from raylake.tools.base import Toolbox, ToolError


def _value_sets(tb: Toolbox, table: str) -> dict[str, set]:
    import pyarrow.compute as pc

    from raylake.fuse import read_lake_table
    from raylake.index.profile import canonical

    tb.location(table)  # refuses a file that became a link out of the lake
    t = read_lake_table(tb.lake_root, table)
    return {name: set(pc.unique(canonical(col).drop_null()).to_pylist()) for name, col in zip(t.column_names, t.columns)}


def _overlap(a: set, b: set) -> dict:
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return {
        "distinct_a": len(a),
        "distinct_b": len(b),
        "common": inter,
        "jaccard": round(inter / union, 4) if union else 0.0,
        "containment_a_in_b": round(inter / len(a), 4) if a else 0.0,
        "containment_b_in_a": round(inter / len(b), 4) if b else 0.0,
    }


def schema_correspondence(tb: Toolbox, table_a: str, table_b: str) -> dict:
    """Column pairs of two tables with the same name (case and ``_`` ignored) or exactly the
    same non-empty value set, each with its exact value overlap."""
    from raylake.index.profile import norm_name

    tb.table(table_a)
    tb.table(table_b)
    if table_a == table_b:
        raise ToolError("schema correspondence compares two different tables")
    va, vb = _value_sets(tb, table_a), _value_sets(tb, table_b)
    pairs = []
    for ca, sa in va.items():
        for cb, sb in vb.items():
            why = [w for w, ok in (("name", norm_name(ca) == norm_name(cb) != ""), ("values", bool(sa) and sa == sb)) if ok]
            if why:
                pairs.append({"column_a": ca, "column_b": cb, "match": why} | _overlap(sa, sb))
    return {"table_a": table_a, "table_b": table_b, "pairs": pairs}


def joinable_columns(tb: Toolbox, table: str, column: str, threshold: float = 0.5, limit: int = 10) -> dict:
    """Columns of other tables whose values likely overlap ``table.column``'s: MinHash LSH
    over the stored signatures, scored by estimated containment either way (≥ ``threshold``)."""
    from raylake.index.lsh import band_keys  # numba: compiled on first use, not on every CLI start
    from raylake.kernels.minhash import containment

    c = tb.column(table, column)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
        raise ToolError(f"threshold is a containment between 0 and 1, not {threshold!r}")
    n = tb.limit(limit, "limit", tb.cfg.max_list)
    idx = tb.index
    n_distinct = np.asarray(idx.columns["n_distinct"], np.float64)
    if n_distinct[c] == 0:
        return {"table": table, "column": column, "threshold": threshold, "columns": [], "reason": "the column holds no values"}
    sigs = np.asarray(idx.signatures)
    bands = int(idx.manifest.get("params", {}).get("lsh_bands", 64))
    rows = sigs.shape[1] // bands
    hit = np.zeros(len(sigs), bool)
    with np.errstate(over="ignore"):
        for band in range(bands):
            keys = band_keys(sigs, band, rows)
            hit |= keys == keys[c]
    hit &= (idx.col_table != idx.col_table[c]) & (n_distinct > 0)
    cand = np.flatnonzero(hit)
    jac = np.mean(sigs[cand] == sigs[c], axis=1)
    c_in = containment(jac, n_distinct[c], n_distinct[cand])  # the query's values inside the candidate's
    c_out = containment(jac, n_distinct[cand], n_distinct[c])
    best = np.maximum(c_in, c_out)
    keep = np.flatnonzero(best >= threshold)
    keep = keep[np.argsort(-best[keep], kind="stable")][:n]
    out = [
        {
            "table": idx.paths[idx.col_table[cand[k]]],
            "column": idx.columns["name"][cand[k]],
            "jaccard": round(float(jac[k]), 4),
            "containment_query_in_column": round(float(c_in[k]), 4),
            "containment_column_in_query": round(float(c_out[k]), 4),
        }
        for k in keep
    ]
    return {"table": table, "column": column, "threshold": threshold, "columns": out}


def value_overlap(tb: Toolbox, table_a: str, column_a: str, table_b: str, column_b: str, examples: int = 5) -> dict:
    """The exact overlap of two columns' distinct values: counts, Jaccard, containment either
    way, and a few shared values."""
    tb.column(table_a, column_a)
    tb.column(table_b, column_b)
    n = tb.limit(examples, "examples", tb.cfg.max_list)
    sa = _value_sets(tb, table_a)[column_a]
    sb = sa if (table_a, column_a) == (table_b, column_b) else _value_sets(tb, table_b)[column_b]
    return (
        {"table_a": table_a, "column_a": column_a, "table_b": table_b, "column_b": column_b}
        | _overlap(sa, sb)
        | {"examples": sorted(map(str, sa & sb))[:n]}
    )
