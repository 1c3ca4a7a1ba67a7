"""Flat arrays of the lake graph G_D that trajectory generation, the reward and the model share.

A :class:`LakeArrays` holds, per table and per column, everything Algorithms 1–2 and the
value network touch, as numpy arrays and small adjacency dicts, so a Ray task samples
thousands of subgraphs per second without going back to the index:

- structure: columns of each table, the join links between two tables (column pairs,
  score ≥ ``min_join``, best first) and union links (column mapping), METIS part of each
  table;
- text embeddings: table text, column header, header+sample (from the index), and two
  that only pseudo-intent atoms need: the *entity word* of each table (the prefix of its
  own key, :class:`raylake.intent.lexicon.Lexicon`) and one *value literal* per text column;
- specificity of every possible pseudo-atom (Support's IDF over tables, precomputed
  lake-wide once, because a trajectory cannot afford an (atoms × all tables) product).

Built from an index (:meth:`from_index`) or from hand-written tables (:meth:`from_tables`,
tests and the paper's figures). ``save``/``load`` keep a copy beside the trajectory shards,
so training needs neither the index nor the embedding model.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from raylake.config import IGMSConfig, RaylakeContext
from raylake.reward import psi as psi_

ARRAY_FIELDS = ("part", "col_table", "emb_table", "emb_header", "emb_sample", "entity_emb", "value_emb",
                "spec_table", "spec_col", "spec_value", "col_dtype_code")
DTYPES = ("int", "float", "text", "date", "bool")


def norm_value(v: str) -> str:
    """A value literal as the value index keys it: lowercased, whitespace collapsed."""
    return " ".join(str(v).lower().split())


@dataclass
class LakeArrays:
    paths: list[str]
    part: np.ndarray  # (T,) METIS part of each table
    table_cols: list[np.ndarray]  # table -> its column ids
    col_table: np.ndarray  # (C,) table of each column
    col_name: list[str]  # header as written
    col_norm: list[str]  # spelling-free header (profile.norm_name): identity for Jaccard and union mapping
    col_dtype_code: np.ndarray  # (C,) index into DTYPES
    join: list[dict[int, list[tuple[float, int, int]]]]  # t -> u -> [(score, column of t, column of u)], best first
    union: list[dict[int, tuple[float, dict[int, int]]]]  # t -> u -> (score, column of t -> column of u)
    emb_table: np.ndarray  # (T, d) table text embedding
    emb_header: np.ndarray  # (C, d) header embedding (an attribute atom's text)
    emb_sample: np.ndarray  # (C, d) header+sample embedding
    entity_text: list[str]  # entity word of each table (pseudo-intent tree root)
    entity_emb: np.ndarray  # (T, d)
    value_text: list[str | None]  # one literal per text column (pseudo-intent value leaf), None if none
    value_emb: np.ndarray  # (C, d), zero rows where value_text is None
    value_cols: dict[str, np.ndarray]  # normalised literal -> columns holding it (the index's value index)
    entity_named: list[dict[str, float]]  # table -> entity word -> how clearly the table is about it, 0..1 (Lexicon.entity_strength)
    spec_table: np.ndarray = field(default=None)  # (T,) specificity w of the entity atom of each table
    spec_col: np.ndarray = field(default=None)  # (C,) of the attribute atom of each column
    spec_value: np.ndarray = field(default=None)  # (C,) of the value atom of each column
    build_id: str = ""  # the index build these arrays come from ("" for hand-built)
    min_join: float = field(default_factory=lambda: RaylakeContext.get_current().learn.min_join)  # join links below this score are not structural edges of G_D here

    # ------------------------------------------------------------------ sizes

    @property
    def n_tables(self) -> int:
        return len(self.paths)

    @property
    def n_columns(self) -> int:
        return len(self.col_table)

    @property
    def dim(self) -> int:
        return int(self.emb_table.shape[1])

    def degree(self, t: int) -> int:
        return len(self.join[t]) + len(self.union[t])

    def neighbours(self, t: int):
        """Tables one structural edge from ``t``."""
        return list(self.join[t]) + [u for u in self.union[t] if u not in self.join[t]]

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_index(cls, index, *, min_join: float | None = None, igms: IGMSConfig | None = None, embedder=None,
                   pseudo_atoms: bool = True) -> "LakeArrays":
        """Arrays of a built :class:`~raylake.index.reader.LakeIndex` (embeds entity words and literals once).

        ``pseudo_atoms=False`` skips what only trajectory generation needs (entity/literal
        embeddings, specificity): the structure and index embeddings search-time scoring uses.
        """
        from raylake.intent.lexicon import Lexicon

        min_join = RaylakeContext.get_current().learn.min_join if min_join is None else min_join
        lex = Lexicon(index)
        graph = index.graph
        col_of = index.col_index
        paths = index.paths
        join: list[dict] = [dict() for _ in paths]
        for t in range(len(paths)):
            for u, links in graph.join[t].items():
                keep = []
                for l in links:
                    if l.score < min_join:
                        continue
                    a, b = (l.src_column, l.dst_column) if l.src_table == t else (l.dst_column, l.src_column)
                    ca, cb = col_of.get((paths[t], a)), col_of.get((paths[u], b))
                    if ca is not None and cb is not None:
                        keep.append((float(l.score), int(ca), int(cb)))
                if keep:
                    join[t][u] = keep
        union: list[dict] = [dict() for _ in paths]
        for t in range(len(paths)):
            for u, link in graph.union[t].items():
                mapping = {}
                for a, b in link.mapping.items():
                    ca, cb = col_of.get((paths[t], a)), col_of.get((paths[u], b))
                    if ca is not None and cb is not None:
                        mapping[int(ca)] = int(cb)
                union[t][u] = (float(link.score), mapping)
        samples = index.columns["sample"]
        dtypes = index.columns["dtype"]
        key_like = index.columns["key_like"]
        value_text = []
        for c in range(index.n_columns):
            s = samples[c] or []
            ok = dtypes[c] == "text" and not key_like[c] and s and 0 < len(str(s[0])) <= 40
            value_text.append(str(s[0]) if ok else None)
        entity_text = [_entity_word(lex, index, t) for t in range(len(paths))]
        d = index.emb_table.shape[1]
        emb = (embedder or index.embedder) if pseudo_atoms else None
        encode = (lambda texts: _encode(emb, texts, d)) if pseudo_atoms else (lambda texts: np.zeros((len(texts), d), np.float32))
        arrays = cls(
            paths=list(paths),
            part=np.asarray(index.tables["part"], np.int32),
            table_cols=[np.asarray(tc, np.int32) for tc in index.table_columns],
            col_table=np.asarray(index.col_table, np.int32),
            col_name=list(index.columns["name"]),
            col_norm=list(index.columns["norm_name"]),
            col_dtype_code=np.asarray([DTYPES.index(d) if d in DTYPES else 2 for d in dtypes], np.int8),
            join=join,
            union=union,
            emb_table=np.asarray(index.emb_table, np.float32),
            emb_header=np.asarray(index.emb_header, np.float32),
            emb_sample=np.asarray(index.emb_sample, np.float32),
            entity_text=entity_text,
            entity_emb=encode(entity_text),
            value_text=value_text,
            value_emb=encode(value_text),
            value_cols={k: np.asarray(v, np.int32) for k, v in index.values.items()},
            entity_named=[{w: min(1.0, k / 3.0) for w, k in lex.table_entity_words[t].items()} for t in range(len(paths))],
            build_id=os.path.basename(index.build),
            min_join=min_join,
        )
        if pseudo_atoms:
            arrays.compute_specificity(igms or IGMSConfig())
        return arrays

    @classmethod
    def from_tables(cls, tables: dict[str, dict[str, list]], joins=(), unions=(), *, embedder=None, part=None,
                    min_join: float | None = None, igms: IGMSConfig | None = None) -> "LakeArrays":
        """Hand-built lake: ``tables`` name → {column: values}; ``joins`` (t, col, u, col, score);
        ``unions`` (t, u, {col of t: col of u}, score). With ``embedder`` (an
        :class:`~raylake.index.embed.Embedder`) texts are embedded; without, embeddings are zero
        (enough for sampling and compression, not for the reward)."""
        from raylake.index.profile import humanize, norm_name
        from raylake.intent.lexicon import tokens

        min_join = RaylakeContext.get_current().learn.min_join if min_join is None else min_join
        paths = list(tables)
        tid = {p: i for i, p in enumerate(paths)}
        col_table, col_name, table_cols, samples = [], [], [], []
        for t, p in enumerate(paths):
            ids = []
            for name, vals in tables[p].items():
                ids.append(len(col_table))
                col_table.append(t)
                col_name.append(name)
                samples.append([str(v) for v in vals])
            table_cols.append(np.asarray(ids, np.int32))
        cid = {(paths[col_table[c]], col_name[c]): c for c in range(len(col_table))}
        join: list[dict] = [dict() for _ in paths]
        for a, ca, b, cb, s in joins:
            if s < min_join:
                continue
            x, y = cid[(a, ca)], cid[(b, cb)]
            join[tid[a]].setdefault(tid[b], []).append((float(s), x, y))
            join[tid[b]].setdefault(tid[a], []).append((float(s), y, x))
        for t in range(len(paths)):
            for links in join[t].values():
                links.sort(key=lambda l: -l[0])
        union: list[dict] = [dict() for _ in paths]
        for a, b, mapping, s in unions:
            m = {cid[(a, x)]: cid[(b, y)] for x, y in mapping.items()}
            union[tid[a]][tid[b]] = (float(s), m)
            union[tid[b]][tid[a]] = (float(s), {v: k for k, v in m.items()})
        dtype = []
        for vals in samples:
            try:
                [float(v) for v in vals]
                dtype.append(DTYPES.index("int"))
            except ValueError:
                dtype.append(DTYPES.index("text"))
        words = [humanize(n) for n in col_name]
        is_key = lambda c: tokens(words[c])[-1:] in (["id"], ["code"])  # noqa: E731
        value_text = [s[0] if dtype[c] == DTYPES.index("text") and s and not is_key(c) else None for c, s in enumerate(samples)]
        entity_text = [humanize(os.path.splitext(os.path.basename(p))[0]).split(" ")[0] for p in paths]
        value_cols: dict[str, list[int]] = {}
        for c, vals in enumerate(samples):
            for v in set(vals):
                value_cols.setdefault(norm_value(v), []).append(c)
        d = embedder.dim if embedder is not None else 8
        enc = (lambda texts: _encode(embedder, texts, d)) if embedder is not None else (lambda texts: np.zeros((len(texts), d), np.float32))
        sample_text = [f"{words[c]}: {', '.join(samples[c][:3])}" for c in range(len(col_table))]
        table_text = [" ".join(words[c] for c in table_cols[t]) for t in range(len(paths))]
        arrays = cls(
            paths=paths,
            part=np.asarray(part if part is not None else np.zeros(len(paths)), np.int32),
            table_cols=table_cols,
            col_table=np.asarray(col_table, np.int32),
            col_name=col_name,
            col_norm=[norm_name(n) for n in col_name],
            col_dtype_code=np.asarray(dtype, np.int8),
            join=join,
            union=union,
            emb_table=enc(table_text),
            emb_header=enc(words),
            emb_sample=enc(sample_text),
            entity_text=entity_text,
            entity_emb=enc(entity_text),
            value_text=value_text,
            value_emb=enc(value_text),
            value_cols={k: np.asarray(v, np.int32) for k, v in value_cols.items()},
            entity_named=[{e: 1.0} for e in entity_text],
            min_join=min_join,
        )
        arrays.compute_specificity(igms or IGMSConfig())
        return arrays

    def compute_specificity(self, igms: IGMSConfig, chunk: int = 1024) -> None:
        """Support's prior variance w of every pseudo-atom, lake-wide (see ``Support._specificity``).

        w = clip(log(n/k)/log(n), 0.05, 1), k the number of tables on which the atom's
        similarity reaches cos0 (ψ ≥ ½). Computed in row chunks, O(C·(C+T)·d).
        """
        n_t, n_c = self.n_tables, self.n_columns
        n = max(2, n_t)
        order = np.argsort(self.col_table, kind="stable")
        starts = np.searchsorted(self.col_table[order], np.arange(n_t))
        has_cols = np.asarray([len(tc) > 0 for tc in self.table_cols])
        starts = np.minimum(starts, max(n_c - 1, 0))
        s0 = igms.cos0

        def per_table_max(sim: np.ndarray) -> np.ndarray:  # (k, C) -> (k, T)
            if n_c == 0:
                return np.zeros((sim.shape[0], n_t))
            out = np.maximum.reduceat(sim[:, order], starts, axis=1)
            out[:, ~has_cols] = 0.0
            return out

        def weight(k: np.ndarray) -> np.ndarray:
            return np.clip(np.log(n / np.maximum(k, 1)) / math.log(n), 0.05, 1.0)

        H, S = self.emb_header, self.emb_sample
        same = {}
        for c, nm in enumerate(self.col_norm):
            same.setdefault(nm, []).append(c)
        spec_col = np.ones(n_c)
        spec_value = np.ones(n_c)
        for lo in range(0, n_c, chunk):
            hi = min(n_c, lo + chunk)
            sim = psi_.column_similarity(H[lo:hi] @ H.T, H[lo:hi] @ S.T, igms)
            for c in range(lo, hi):  # identical header: the lexical signal of Support
                sim[c - lo, same[self.col_norm[c]]] = 1.0
            spec_col[lo:hi] = weight((per_table_max(sim) >= s0).sum(axis=1))
            vs = psi_.value_similarity(self.value_emb[lo:hi] @ S.T, igms)
            for c in range(lo, hi):
                if self.value_text[c] is not None:
                    hits = self.value_cols.get(norm_value(self.value_text[c]))
                    if hits is not None:
                        vs[c - lo, hits] = 1.0
                    vs[c - lo, c] = 1.0
            spec_value[lo:hi] = weight((per_table_max(vs) >= s0).sum(axis=1))
        spec_table = np.ones(n_t)
        for lo in range(0, n_t, chunk):
            hi = min(n_t, lo + chunk)
            E = self.entity_emb[lo:hi]
            tab = psi_.table_similarity(E @ self.emb_table.T, per_table_max(psi_.column_similarity(E @ H.T, E @ S.T, igms)), igms)
            for t in range(lo, hi):
                w = self.entity_text[t]
                for u in self.entity_tables.get(w, ()):
                    tab[t - lo, u] = max(tab[t - lo, u], self.entity_named[u].get(w, 0.0))
            spec_table[lo:hi] = weight((tab >= s0).sum(axis=1))
        self.spec_col, self.spec_value, self.spec_table = spec_col, spec_value, spec_table

    @property
    def name_id(self) -> np.ndarray:
        """(C,) integer id of each column's spelling-free header (equal ids: identical headers)."""
        cache = self.__dict__.get("_name_id")
        if cache is None:
            ids: dict[str, int] = {}
            cache = np.asarray([ids.setdefault(n, len(ids)) for n in self.col_norm], np.int64)
            self.__dict__["_name_id"] = cache
        return cache

    @property
    def entity_tables(self) -> dict[str, list[int]]:
        cache = self.__dict__.get("_entity_tables")
        if cache is None:
            cache = {}
            for t, words in enumerate(self.entity_named):
                for w in words:
                    cache.setdefault(w, []).append(t)
            self.__dict__["_entity_tables"] = cache
        return cache

    @property
    def py(self) -> "PyLake":
        """Plain-Python views of the adjacency the samplers walk (cached): ints, not numpy scalars."""
        cache = self.__dict__.get("_py")
        if cache is None:
            cache = PyLake(
                table_cols=[[int(c) for c in tc] for tc in self.table_cols],
                join_top=[[(u, links[0][0]) for u, links in j.items()] for j in self.join],
                union_score=[[(u, s) for u, (s, _m) in un.items()] for un in self.union],
            )
            self.__dict__["_py"] = cache
        return cache

    @property
    def flat(self) -> "FlatLake":
        """The dict/list parts of these arrays as CSR arrays, for the numba reward kernel (cached)."""
        cache = self.__dict__.get("_flat")
        if cache is None:
            cache = FlatLake.of(self)
            self.__dict__["_flat"] = cache
        return cache

    def __getstate__(self):
        # caches (name ids, the flat kernel view) are rebuilt where they are needed, not shipped to Ray workers
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    # ------------------------------------------------------------------ persistence

    def save(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        np.savez(os.path.join(directory, "arrays.npz"), **{k: getattr(self, k) for k in ARRAY_FIELDS})
        meta = {
            "paths": self.paths,
            "table_cols": [tc.tolist() for tc in self.table_cols],
            "col_name": self.col_name,
            "col_norm": self.col_norm,
            "join": [{str(u): links for u, links in j.items()} for j in self.join],
            "union": [{str(u): [s, {str(a): b for a, b in m.items()}] for u, (s, m) in un.items()} for un in self.union],
            "entity_text": self.entity_text,
            "value_text": self.value_text,
            "value_cols": {k: v.tolist() for k, v in self.value_cols.items()},
            "entity_named": self.entity_named,
            "build_id": self.build_id,
            "min_join": self.min_join,
        }
        with open(os.path.join(directory, "lake.json"), "w") as f:
            json.dump(meta, f)

    @classmethod
    def load(cls, directory: str) -> "LakeArrays":
        with open(os.path.join(directory, "lake.json")) as f:
            m = json.load(f)
        z = np.load(os.path.join(directory, "arrays.npz"))
        arrays = {k: z[k] for k in ARRAY_FIELDS}
        return cls(
            paths=m["paths"],
            table_cols=[np.asarray(tc, np.int32) for tc in m["table_cols"]],
            col_name=m["col_name"],
            col_norm=m["col_norm"],
            join=[{int(u): [tuple(l) for l in links] for u, links in j.items()} for j in m["join"]],
            union=[{int(u): (s, {int(a): b for a, b in mp.items()}) for u, (s, mp) in un.items()} for un in m["union"]],
            entity_text=m["entity_text"],
            value_text=m["value_text"],
            value_cols={k: np.asarray(v, np.int32) for k, v in m["value_cols"].items()},
            entity_named=m["entity_named"],
            build_id=m["build_id"],
            min_join=m["min_join"],
            **arrays,
        )


def _csr(rows: list) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(rows) + 1, np.int64)
    ptr[1:] = np.cumsum([len(r) for r in rows])
    idx = np.concatenate([np.asarray(r, np.int64) for r in rows]) if rows and ptr[-1] else np.zeros(0, np.int64)
    return ptr, idx


@dataclass
class PyLake:
    table_cols: list[list[int]]  # table -> its columns
    join_top: list[list[tuple[int, float]]]  # table -> [(neighbour, best join score)], in LakeArrays.join order
    union_score: list[list[tuple[int, float]]]  # table -> [(neighbour, union score)], in LakeArrays.union order


@dataclass
class FlatLake:
    """What the reward kernel reads of a :class:`LakeArrays`, with every dict and list flattened.

    Numba cannot read Python dicts of strings, so the three lookups of the reward become
    arrays once per lake: a table's columns (CSR), the columns holding a column's value
    literal (the value index hit list, sorted, CSR) and the naming strength of each entity
    word on each table (words as ids, CSR).
    """

    tc_ptr: np.ndarray  # (T+1,) table -> its columns tc_idx[tc_ptr[t]:tc_ptr[t+1]]
    tc_idx: np.ndarray
    vh_ptr: np.ndarray  # (C+1,) column -> sorted columns holding its value literal (value_cols), empty if none
    vh_idx: np.ndarray
    ent_word: np.ndarray  # (T,) id of the table's entity word (entity_text)
    nm_ptr: np.ndarray  # (T+1,) table -> (entity word id, strength) pairs of entity_named, entity words only
    nm_word: np.ndarray
    nm_val: np.ndarray
    name_id: np.ndarray  # (C,) id of the spelling-free header (LakeArrays.name_id)
    emb_header: np.ndarray  # C-contiguous float32 copies (views when already contiguous)
    emb_sample: np.ndarray
    emb_table: np.ndarray
    entity_emb: np.ndarray
    value_emb: np.ndarray
    spec_table: np.ndarray  # float64
    spec_col: np.ndarray
    spec_value: np.ndarray
    jt_ptr: np.ndarray = None  # (T+1,) table -> join neighbours jt_u and their best join score jt_s, in LakeArrays.join order
    jt_u: np.ndarray = None
    jt_s: np.ndarray = None
    us_ptr: np.ndarray = None  # (T+1,) table -> union neighbours us_u and union scores us_s, in LakeArrays.union order
    us_u: np.ndarray = None
    us_s: np.ndarray = None
    scratch_inset: np.ndarray = None  # (T,) False; the expansion kernel's set membership, restored after each call
    scratch_pos: np.ndarray = None  # (T,) -1; the expansion kernel's candidate slots, restored after each call

    @classmethod
    def of(cls, a: "LakeArrays") -> "FlatLake":
        tc_ptr, tc_idx = _csr([tc for tc in a.table_cols])
        empty = np.zeros(0, np.int64)
        hits = []
        for c in range(a.n_columns):
            # the key the reward looks up: None → "" (as LakeArrays' reference reward does)
            h = a.value_cols.get(norm_value(a.value_text[c] or ""))
            hits.append(np.unique(h) if h is not None else empty)
        vh_ptr, vh_idx = _csr(hits)
        vocab: dict[str, int] = {}
        ent_word = np.asarray([vocab.setdefault(w, len(vocab)) for w in a.entity_text], np.int64)
        nm_rows = [[(vocab[w], s) for w, s in named.items() if w in vocab] for named in a.entity_named]
        nm_ptr, nm_word = _csr([[w for w, _ in r] for r in nm_rows])
        nm_val = np.asarray([s for r in nm_rows for _, s in r], np.float64)
        f32 = lambda x: np.ascontiguousarray(x, np.float32)  # noqa: E731
        f64 = lambda x: np.ascontiguousarray(x, np.float64)  # noqa: E731
        jt_ptr, jt_u = _csr([list(j) for j in a.join])
        jt_s = np.asarray([links[0][0] for j in a.join for links in j.values()], np.float64)
        us_ptr, us_u = _csr([list(un) for un in a.union])
        us_s = np.asarray([sc for un in a.union for sc, _m in un.values()], np.float64)
        return cls(tc_ptr, tc_idx, vh_ptr, vh_idx, ent_word, nm_ptr, nm_word, nm_val, a.name_id,
                   f32(a.emb_header), f32(a.emb_sample), f32(a.emb_table), f32(a.entity_emb), f32(a.value_emb),
                   f64(a.spec_table), f64(a.spec_col), f64(a.spec_value), jt_ptr, jt_u, jt_s, us_ptr, us_u, us_s,
                   np.zeros(a.n_tables, np.bool_), np.full(a.n_tables, -1, np.int64))


def _entity_word(lex, index, t: int) -> str:
    """The word a question would use for table ``t``: the prefix of its own key, else its first header word."""
    words = lex.table_entity_words[t]
    if words:
        return max(words.items(), key=lambda kv: (kv[1], -len(kv[0]), kv[0]))[0]
    cols = index.table_columns[t]
    if len(cols):
        w = index.columns["words"][cols[0]].split()
        if w:
            return w[0]
    return os.path.splitext(os.path.basename(index.paths[t]))[0]


def _encode(embedder, texts: list, dim: int) -> np.ndarray:
    out = np.zeros((len(texts), dim), np.float32)
    idx = [i for i, t in enumerate(texts) if t]
    if idx:
        out[idx] = embedder.encode([str(texts[i]).lower().replace("_", " ") for i in idx])
    return out
