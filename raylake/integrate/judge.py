"""The offline join judge: is a candidate edge a real join? (EcoTable Sec. 4.2, without an LLM)

The paper asks an LLM whether two tables join; offline, the same question is answered from
the data, with DuckDB over the lake files (read as the index read them,
:func:`raylake.fuse.fuse.read_lake_table`). For a table pair, the judge tries its
``max_pairs`` best column pairs from the lake graph (best score first) and accepts the edge on
the first pair that passes all of:

- **type compatibility**: the two columns' kinds (number, date/time, text, boolean) agree,
  or one of them is text (a text column may spell numbers or dates; containment decides);
- **value containment after normalisation**: keys are compared as numbers when both
  columns are numeric, else as ``lower(trim(text))`` with leading zeros and a trailing
  ``.0`` dropped (``'00042'``, ``'42.0'`` and ``42`` are one key);
  |distinct(a) ∩ distinct(b)| / min(|distinct(a)|, |distinct(b)|) ≥ ``min_containment`` — the
  foreign-key side's values must mostly be found on the key side;
- **key compatibility**: one of the two columns is an identifier — its header's last word
  is an identifier word (``id``, ``key``, ``uuid``, ``no``, ``num``, ``number``:
  every gold join of EcoTable's Ad lake is on a ``*_id``) or it is a text column the index
  profiled as key-like (distinct/non-null ≥ ``index.key_uniqueness``); numeric measures
  (``clicks``, ``spend``) share values by chance and are neither. A side with fewer than
  ``min_distinct`` distinct values that repeat (a flag or status column) meets any other by
  chance too; a one-row table's single key does not count as such. And the join's **row fan-out**
  rows(a ⋈ b) / max(rows(a), rows(b)) ≤ ``max_fanout`` (a many-to-many join on a non-key
  multiplies rows). The join size is Σ_k n_a(k)·n_b(k) over the common keys, never the
  join itself.

A pair that fails says why (``reason``); the edge is invalid when every tried pair fails.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa

from raylake.config import IntegrateConfig
from raylake.fuse.fuse import read_lake_table
from raylake.integrate.likelihood import columns_of

# not "code": currency and country codes are attributes every export repeats, and on EcoTable's Ad lake a
# one-row profile table bridged every platform through its currency_code
IDENTIFIER_WORDS = frozenset({"id", "key", "uuid", "no", "num", "number"})


@dataclass
class Verdict:
    """The judge's decision on one table pair ``(a, b)``, ``a < b``."""

    valid: bool
    a_column: str | None = None  # the column of a the join uses (the passing pair, else the best tried)
    b_column: str | None = None
    containment: float = 0.0
    fanout: float = 0.0
    reason: str = ""
    by: str = "offline"  # who judged: "offline" (this module) or "llm"
    tried: list[dict] = field(default_factory=list)  # every column pair checked, with its figures

    def to_json(self) -> dict:
        return {"valid": self.valid, "a_column": self.a_column, "b_column": self.b_column,
                "containment": round(self.containment, 4), "fanout": round(self.fanout, 3),
                "reason": self.reason, "validated_by": self.by, "tried": self.tried}


def _kind(t: pa.DataType) -> str:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "number"
    if pa.types.is_temporal(t):
        return "datetime"
    return "text"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def identifier_header(name: str) -> bool:
    """Whether a header names an identifier: its last word (split at ``_``, spaces, case changes) is one."""
    words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+", name)
    return bool(words) and (words[-1].lower() in IDENTIFIER_WORDS)


def _key_expr(col: str, numeric: bool) -> str:
    if numeric:
        return f"CAST({_q(col)} AS DOUBLE)"
    text = f"lower(trim(CAST({_q(col)} AS VARCHAR)))"
    return f"regexp_replace(regexp_replace({text}, '\\.0+$', ''), '^0+([0-9])', '\\1')"


class OfflineJudge:
    """Judges table pairs of one lake; each lake table is read once and kept in one DuckDB connection."""

    def __init__(self, index, cfg: IntegrateConfig | None = None):
        import duckdb

        self.index = index
        self.lake_root, self.paths = index.lake_root, index.paths
        self.cfg = cfg or IntegrateConfig()
        self.con = duckdb.connect()
        self.loaded: dict[int, tuple[str, pa.Table]] = {}

    def _table(self, t: int) -> tuple[str, pa.Table]:
        if t not in self.loaded:
            name = f"t{t}"
            table = read_lake_table(self.lake_root, self.paths[t])
            self.con.register(name, table)
            self.loaded[t] = (name, table)
        return self.loaded[t]

    def check_pair(self, a: int, col_a: str, b: int, col_b: str) -> dict:
        """The figures of one column pair and whether it passes (``ok``, ``reason``)."""
        (na, ta), (nb, tb) = self._table(a), self._table(b)
        if col_a not in ta.column_names or col_b not in tb.column_names:
            return {"a_column": col_a, "b_column": col_b, "ok": False, "reason": "column no longer in the lake file"}
        ka, kb = _kind(ta.schema.field(col_a).type), _kind(tb.schema.field(col_b).type)
        row = {"a_column": col_a, "b_column": col_b, "types": [ka, kb]}
        if ka != kb and "text" not in (ka, kb):
            return row | {"ok": False, "reason": f"type mismatch ({ka} vs {kb})"}
        if not (self._identifier(a, col_a, ka) or self._identifier(b, col_b, kb)):
            return row | {"ok": False, "reason": "neither column is an identifier (header or key-like text)"}
        numeric = ka == kb == "number"
        ea, eb = _key_expr(col_a, numeric), _key_expr(col_b, numeric)
        sql = (f"WITH ka AS (SELECT {ea} AS k, count(*) AS n FROM {na} WHERE {_q(col_a)} IS NOT NULL GROUP BY 1), "
               f"kb AS (SELECT {eb} AS k, count(*) AS n FROM {nb} WHERE {_q(col_b)} IS NOT NULL GROUP BY 1) "
               "SELECT (SELECT count(*) FROM ka), (SELECT count(*) FROM kb), count(*), "
               "coalesce(sum(ka.n * kb.n), 0) FROM ka JOIN kb ON ka.k = kb.k")
        da, db, common, join_rows = self.con.execute(sql).fetchall()[0]
        smaller = min(da, db)
        rows_small = ta.num_rows if da <= db else tb.num_rows
        containment = common / smaller if smaller else 0.0
        fanout = join_rows / max(ta.num_rows, tb.num_rows, 1)
        row |= {"distinct": [int(da), int(db)], "common": int(common), "containment": round(containment, 4),
                "fanout": round(fanout, 3)}
        cfg = self.cfg
        if smaller == 0 or (smaller < cfg.min_distinct and rows_small > smaller):
            return row | {"ok": False, "reason": f"only {smaller} distinct key value(s) on one side, repeated"}
        if containment < cfg.min_containment:
            return row | {"ok": False, "reason": f"containment {containment:.2f} < {cfg.min_containment}"}
        if fanout > cfg.max_fanout:
            return row | {"ok": False, "reason": f"row fan-out {fanout:.1f} > {cfg.max_fanout} (many-to-many)"}
        return row | {"ok": True, "reason": "passes"}

    def _identifier(self, t: int, col: str, kind: str) -> bool:
        if identifier_header(col):
            return True
        c = self.index.col_index.get((self.paths[t], col))
        return kind == "text" and c is not None and bool(self.index.columns["key_like"][c])

    def judge(self, a: int, b: int, links) -> Verdict:
        """The verdict on the table pair ``(a, b)`` (``a < b``) over its lake-graph ``links`` (best first)."""
        tried = []
        for link in list(links)[: self.cfg.max_pairs]:
            col_a, col_b = columns_of(link, a)
            row = self.check_pair(a, col_a, b, col_b)
            tried.append(row)
            if row["ok"]:
                return Verdict(True, col_a, col_b, row["containment"], row["fanout"], "passes", "offline", tried)
        if not tried:
            return Verdict(False, reason="no column pair links the two tables")
        best = max(tried, key=lambda r: r.get("containment", 0.0))
        return Verdict(False, best["a_column"], best["b_column"], best.get("containment", 0.0), best.get("fanout", 0.0),
                       "; ".join(r["reason"] for r in tried), "offline", tried)
