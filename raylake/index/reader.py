"""A built index, loaded for reading: the object search, fusion, learning and serving share.

Arrays are memory-mapped; FAISS indexes, the value index, the lake graph and the
embedding model load on first use, so opening an index to inspect it is instant.
"""
from __future__ import annotations

import functools
import json
import os

import numpy as np
import pyarrow.parquet as pq

from raylake.errors import LakeError
from raylake.index import store
from raylake.lake.files import safe_relpath


class LakeIndex:
    """Read-only view of one build of an index directory."""

    def __init__(self, index_dir: str):
        self.index_dir = os.path.abspath(index_dir)
        self.build, self.manifest = store.read_manifest(self.index_dir)
        self.tables = pq.read_table(os.path.join(self.build, "tables.parquet")).to_pydict()
        self.columns = pq.read_table(os.path.join(self.build, "columns.parquet")).to_pydict()
        self.paths: list[str] = self.tables["path"]
        for p in self.paths:  # an edited index folder must not point fusion outside the lake
            if safe_relpath(p) != p:
                raise LakeError(f"the index in {self.index_dir!r} names table {p!r}, not a plain path inside the lake: rebuild it")
        self.path_id = {p: i for i, p in enumerate(self.paths)}
        self.col_table = np.asarray(self.columns["table_id"], np.int32)
        order = np.argsort(self.col_table, kind="stable")
        bounds = np.searchsorted(self.col_table[order], np.arange(len(self.paths) + 1))
        self.table_columns = [order[bounds[t] : bounds[t + 1]] for t in range(len(self.paths))]
        self.col_index = {(self.columns["path"][c], self.columns["name"][c]): c for c in range(len(self.col_table))}

    @classmethod
    def load(cls, index_dir: str) -> "LakeIndex":
        return cls(index_dir)

    # ------------------------------------------------------------------ basic facts

    @property
    def n_tables(self) -> int:
        return len(self.paths)

    @property
    def n_columns(self) -> int:
        return len(self.col_table)

    @property
    def lake_root(self) -> str:
        return self.manifest["lake_root"]

    @property
    def model_path(self) -> str:
        return self.manifest["model"]

    @property
    def summary(self) -> dict:
        return self.manifest["summary"]

    def column_summary(self, c: int) -> dict:
        s = self.columns["summary"][c]
        return json.loads(s) if s else {}

    def table_profile(self, path: str) -> dict:
        """Everything the index knows about one table (for ``GET /tables/{path}`` and inspect)."""
        t = self.path_id[path]
        cols = []
        for c in self.table_columns[t]:
            cols.append(
                {k: self.columns[k][c] for k in ("name", "dtype", "n_rows", "null_frac", "n_distinct", "uniqueness", "key_like", "sample")}
                | {"summary": self.column_summary(c)}
            )
        edges = self.edges
        mine = [e for e in edges if e["src_table"] == path or e["dst_table"] == path]
        return {"table": path, "n_rows": self.tables["n_rows"][t], "part": self.tables["part"][t], "columns": cols, "edges": mine}

    def find_tables(self, query: str, limit: int) -> dict:
        """Tables whose path or a column's name contains ``query`` (case, ``_`` and spaces ignored,
        as :func:`~raylake.index.profile.norm_name` compares headers), for the web page's lake
        browser: path matches first, then the most matching columns, then by path; a query with
        no letter or digit lists every table. Each hit has its rows, columns, the matching
        columns and its count of join and union edges; ``total`` counts all hits, ``tables``
        holds the first ``limit``."""
        from raylake.index.profile import norm_name  # numba behind it: only when a search is made

        key = norm_name(query)
        norm = self.columns["norm_name"]
        hits = []
        for t, path in enumerate(self.paths):
            cols = [int(c) for c in self.table_columns[t]]
            matched = [self.columns["name"][c] for c in cols if key and key in norm[c]]
            named = key in norm_name(path)
            if named or matched:
                hits.append((not named, -len(matched), path, t, matched))
        hits.sort()
        degree = self.degree
        tables = [{"table": path, "n_rows": self.tables["n_rows"][t], "n_columns": len(self.table_columns[t]),
                   "matched_columns": matched, "name_match": not not_named, **degree.get(path, {"join": 0, "union": 0})}
                  for not_named, _, path, t, matched in hits[:limit]]
        return {"query": query, "total": len(hits), "tables": tables}

    @functools.cached_property
    def degree(self) -> dict[str, dict[str, int]]:
        """Per table path, its count of join and union edges (either end)."""
        out: dict[str, dict[str, int]] = {}
        for e in self.edges:
            for end in ("src_table", "dst_table"):
                d = out.setdefault(e[end], {"join": 0, "union": 0})
                d[e["kind"]] = d.get(e["kind"], 0) + 1
        return out

    # ------------------------------------------------------------------ lazy pieces

    def _npy(self, name: str) -> np.ndarray:
        return np.load(os.path.join(self.build, f"{name}.npy"), mmap_mode="r")

    @functools.cached_property
    def signatures(self) -> np.ndarray:
        return self._npy("signatures")

    @functools.cached_property
    def emb_header(self) -> np.ndarray:
        return np.asarray(self._npy("emb_header"))

    @functools.cached_property
    def emb_sample(self) -> np.ndarray:
        return np.asarray(self._npy("emb_sample"))

    @functools.cached_property
    def emb_table(self) -> np.ndarray:
        return np.asarray(self._npy("emb_table"))

    @functools.cached_property
    def edges(self) -> list[dict]:
        return pq.read_table(os.path.join(self.build, "edges.parquet")).to_pylist()

    def faiss(self, name: str):
        """FAISS index ``columns_header``, ``columns_sample`` or ``tables`` (loaded once)."""
        cache = self.__dict__.setdefault("_faiss", {})
        if name not in cache:
            import faiss

            cache[name] = faiss.read_index(os.path.join(self.build, f"{name}.faiss"))
        return cache[name]

    @functools.cached_property
    def values(self) -> dict[str, np.ndarray]:
        """Normalised value → ids of the columns holding it."""
        t = pq.read_table(os.path.join(self.build, "values.parquet"))
        vals = t.column("value").to_pylist()
        cids = t.column("column_id").to_numpy()
        out: dict[str, list[int]] = {}
        for v, c in zip(vals, cids):
            out.setdefault(v, []).append(int(c))
        return {k: np.asarray(v, np.int32) for k, v in out.items()}

    @functools.cached_property
    def embedder(self):
        from raylake.index.embed import Embedder

        cfg = self.manifest["params"]
        return Embedder(self.model_path, cfg.get("embed_max_seq_length", 64), cfg.get("embed_batch_size", 64),
                        cfg.get("embed_backend", "torch"))

    @functools.cached_property
    def graph(self):
        from raylake.graph import LakeGraph

        return LakeGraph.from_index(self)
