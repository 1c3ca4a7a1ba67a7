"""Column-major views of the profiled columns, for vectorised edge discovery."""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np


@dataclass
class ColumnArrays:
    table: np.ndarray  # (C,) int32 table id of each column
    name: np.ndarray  # (C,) object: header as written
    norm_name: np.ndarray  # (C,) object: spelling-free header key
    words: np.ndarray  # (C,) object: humanised header
    dtype: np.ndarray  # (C,) object: int | float | bool | date | text
    n_rows: np.ndarray  # (C,) int64
    n_distinct: np.ndarray  # (C,) int64
    uniqueness: np.ndarray  # (C,) float64
    key_like: np.ndarray  # (C,) bool
    name_key_hint: np.ndarray  # (C,) bool
    vmin: np.ndarray  # (C,) float64, NaN unless numeric
    vmax: np.ndarray  # (C,) float64, NaN unless numeric
    sample: np.ndarray  # (C,) object: tuple of up to a few distinct values as written

    @classmethod
    def from_records(cls, table_ids, records: list[dict]) -> "ColumnArrays":
        def arr(key, dtype=object):
            return np.array([r[key] for r in records], dtype=dtype)

        vmin = np.full(len(records), np.nan)
        vmax = np.full(len(records), np.nan)
        for i, r in enumerate(records):
            if r["dtype"] in ("int", "float"):
                s = json.loads(r["summary"]) if isinstance(r["summary"], str) else r["summary"]
                if s.get("min") is not None:
                    vmin[i], vmax[i] = float(s["min"]), float(s["max"])
        return cls(
            table=np.asarray(table_ids, np.int32),
            name=arr("name"),
            norm_name=arr("norm_name"),
            words=arr("words"),
            dtype=arr("dtype"),
            n_rows=arr("n_rows", np.int64),
            n_distinct=arr("n_distinct", np.int64),
            uniqueness=arr("uniqueness", np.float64),
            key_like=arr("key_like", bool),
            name_key_hint=arr("name_key_hint", bool),
            vmin=vmin,
            vmax=vmax,
            sample=np.array([tuple(r.get("sample") or ()) for r in records] + [None], dtype=object)[:-1],
        )

    def __len__(self) -> int:
        return len(self.table)
