"""Value search over the index's value index (Octopus Sec. 3.3, "Value search").

The value index holds the distinct values of text columns with at most
``IndexConfig.value_index_max_distinct`` of them, trimmed and lower-cased as the profiler
stores them, so a lookup is one dictionary probe; numbers and prose are not in it (SQL finds
those).
"""
from __future__ import annotations

from raylake.tools.base import Toolbox, ToolError


def value_search(tb: Toolbox, value: str, exact: bool = True, limit: int = 50) -> dict:
    """Columns whose values include ``value`` (case and surrounding spaces ignored); with
    ``exact=False``, values containing it as a substring (each matching value reported)."""
    if not isinstance(value, str) or not value.strip():
        raise ToolError("value search needs a non-empty value")
    n = tb.limit(limit, "limit", tb.cfg.max_list)
    key = value.strip().lower()
    idx = tb.index
    if exact:
        matched = {key: idx.values[key]} if key in idx.values else {}
    else:
        matched = {v: cids for v, cids in idx.values.items() if key in v}
    hits = []
    for v in sorted(matched, key=lambda x: (len(x), x)):
        for c in matched[v]:
            hits.append({"value": v, "table": idx.columns["path"][c], "column": idx.columns["name"][c]})
    return {"value": value, "exact": exact, "n_matches": len(hits), "matches": hits[:n], "truncated": len(hits) > n}
