"""Semantic schema access and table inspection (Octopus Sec. 3.2–3.3).

Column search matches a phrase against the stored header embeddings (cosine, FAISS inner
product over L2-normalised vectors) and returns distinct column names, as the paper's
primitive does: the agent asks about a meaning, and one name shared by forty tables is one
answer with forty tables, not forty answers.
"""
from __future__ import annotations

import numpy as np

from raylake.tools.base import Toolbox, ToolError
from raylake.tools.sql import quote


def column_search(tb: Toolbox, phrase: str, threshold: float | None = None, limit: int | None = None) -> dict:
    """Column names whose header means ``phrase`` (cosine ≥ ``threshold``), best first, at most
    ``limit`` distinct names, each with its score and the tables holding it."""
    if not isinstance(phrase, str) or not phrase.strip():
        raise ToolError("column search needs a non-empty phrase")
    threshold = tb.cfg.column_threshold if threshold is None else threshold
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not -1.0 <= threshold <= 1.0:
        raise ToolError(f"threshold is a cosine between -1 and 1, not {threshold!r}")
    limit = tb.limit(tb.cfg.column_limit if limit is None else limit, "limit", tb.cfg.max_list)
    idx = tb.index
    q = idx.embedder.encode([phrase.strip()]).astype(np.float32)
    faiss_index = idx.faiss("columns_header")
    names = idx.columns["name"]
    found: dict[str, dict] = {}
    k = min(idx.n_columns, max(64, limit * 16))
    while True:
        scores, ids = faiss_index.search(q, k)
        found.clear()
        below = False
        for s, c in zip(scores[0], ids[0]):
            if c < 0:
                continue
            if s < threshold:
                below = True
                break
            hit = found.setdefault(names[c], {"column": names[c], "score": round(float(s), 4), "tables": []})
            hit["tables"].append(idx.paths[idx.col_table[c]])
        # columns with one header share one vector, so the k nearest can be few distinct names
        if below or len(found) > limit or k >= idx.n_columns:
            break
        k = min(idx.n_columns, k * 4)
    hits = sorted(found.values(), key=lambda h: -h["score"])[:limit]
    for h in hits:
        h["n_tables"] = len(h["tables"])
        h["tables"] = sorted(set(h["tables"]))[: tb.cfg.max_list]
    return {"phrase": phrase, "threshold": threshold, "columns": hits}


def find_column(tb: Toolbox, name: str) -> dict:
    """Tables with a column spelled like ``name`` (case, ``_`` and spaces ignored): Octopus's
    join-column lookup."""
    from raylake.index.profile import norm_name  # numba behind it: not on every CLI start

    if not isinstance(name, str) or not norm_name(name):
        raise ToolError("find_column needs a column name with letters or digits")
    key = norm_name(name)
    idx = tb.index
    hits = [
        {"table": idx.columns["path"][c], "column": idx.columns["name"][c]}
        for c in np.flatnonzero(np.asarray(idx.columns["norm_name"], dtype=object) == key)
    ]
    return {"name": name, "n_matches": len(hits), "matches": hits[: tb.cfg.max_list]}


def inspect_table(tb: Toolbox, table: str, rows: int | None = None) -> dict:
    """A table's schema and column profiles (type, distinct count, nulls, key-likeness, sample
    values), its first ``rows`` rows, and the join and union edges the index found for it."""
    tb.table(table)
    n = tb.limit(tb.cfg.sample_rows if rows is None else rows, "rows", tb.cfg.sql_max_rows)
    prof = tb.index.table_profile(table)
    sample = tb.db.run(f"SELECT * FROM {quote(table)} LIMIT {n}", n, tb.cfg.sql_timeout_s)
    edges = prof["edges"][: tb.cfg.max_list]
    return {
        "table": table,
        "n_rows": prof["n_rows"],
        "columns": [
            {k: c[k] for k in ("name", "dtype", "n_distinct", "null_frac", "key_like", "sample")} | {"summary": c["summary"]}
            for c in prof["columns"]
        ],
        "rows": {"columns": sample["columns"], "rows": sample["rows"]},
        "joins": [
            {k: e[k] for k in ("src_table", "src_column", "dst_table", "dst_column")} | {"score": round(float(e["score"]), 4)}
            for e in edges if e["kind"] == "join"
        ],
        "unions": [
            {"table": e["dst_table"] if e["src_table"] == table else e["src_table"], "score": round(float(e["score"]), 4)}
            for e in edges if e["kind"] != "join"
        ],
    }
