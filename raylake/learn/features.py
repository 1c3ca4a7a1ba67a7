"""Batched heterogeneous graphs of search states for the value network (GRAFT Sec. 4.1, enc(s)).

A state s = (G_I, H^Φ_t, Φ_t) becomes one graph with three node types:

- ``atom``   — node atoms of the intent graph (entity, attribute, value): text embedding
  and a kind one-hot; edges ``atom—atom`` for has_attribute / has_value / join;
- ``table``  — tables of the prefix Φ_t: table-text embedding;
- ``column`` — their columns (at most ``max_cols`` per table): header embedding, dtype one-hot;
  edges ``table—column`` (containment), ``column—column`` (join links between prefix tables),
  ``table—table`` (union links);

plus cross-graph ``atom—column`` edges to each atom's ``align_k`` most similar prefix
columns (raw-embedding cosine), along which the encoder aligns intent with evidence.
A batch is collated straight into flat numpy arrays (no per-sample Data objects), so a
256-state batch costs milliseconds on a CPU.

The same code featurises training transitions (atoms are lake objects: embeddings looked
up in :class:`~raylake.learn.lake_arrays.LakeArrays`) and search prefixes (atoms are the question's
texts, embedded once per question).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from raylake.learn.compress import ATTRIBUTE, ENTITY, VALUE
from raylake.learn.lake_arrays import DTYPES

EDGE_TYPES = [
    ("atom", "rel", "atom"),
    ("table", "has", "column"),
    ("column", "in", "table"),
    ("column", "joins", "column"),
    ("table", "unions", "table"),
    ("atom", "aligns", "column"),
    ("column", "aligned", "atom"),
]


@dataclass
class StateBatch:
    """Flat arrays of B state graphs (node features, edges, graph index of every node)."""

    atom_x: np.ndarray  # (Na, d+3)
    table_x: np.ndarray  # (Nt, d)
    column_x: np.ndarray  # (Nc, d+len(DTYPES))
    atom_batch: np.ndarray  # (Na,) graph of each atom
    table_batch: np.ndarray
    column_batch: np.ndarray
    edges: dict  # edge type -> (2, E) int64
    n_graphs: int
    n_tables: np.ndarray  # (B,) prefix sizes

    def to_torch(self):
        import torch

        t = lambda a, dt=torch.float32: torch.from_numpy(np.ascontiguousarray(a)).to(dt)  # noqa: E731
        return {
            "x": {"atom": t(self.atom_x), "table": t(self.table_x), "column": t(self.column_x)},
            "batch": {"atom": t(self.atom_batch, torch.long), "table": t(self.table_batch, torch.long), "column": t(self.column_batch, torch.long)},
            "edges": {k: t(v, torch.long) for k, v in self.edges.items() if v.shape[1]},
            "n_graphs": self.n_graphs,
            "n_tables": t(self.n_tables),
        }


class Featurizer:
    """Turns (atoms, prefix tables) into :class:`StateBatch` es over one lake's arrays."""

    def __init__(self, arrays, max_cols: int = 12, align_k: int = 3):
        self.a = arrays
        self.max_cols = max_cols
        self.align_k = align_k
        self.dim = arrays.dim
        self._dtype_eye = np.eye(len(DTYPES), dtype=np.float32)
        self._kind_eye = np.eye(3, dtype=np.float32)
        cols = [tc[:max_cols] for tc in arrays.table_cols]
        self.cols = cols
        # mean header embedding per table: part of the shared table encoder's input
        self.table_in = np.concatenate(
            [arrays.emb_table, np.stack([arrays.emb_header[c].mean(axis=0) if len(c) else np.zeros(self.dim, np.float32) for c in cols])], axis=1
        ).astype(np.float32)

    def atom_embeddings(self, kinds, refs) -> np.ndarray:
        """Embeddings of pseudo-intent atoms (training): entity -> entity word, attribute -> header, value -> literal."""
        kinds = np.asarray(kinds)
        refs = np.asarray(refs)
        out = np.zeros((len(kinds), self.dim), np.float32)
        for k, src in ((ENTITY, self.a.entity_emb), (ATTRIBUTE, self.a.emb_header), (VALUE, self.a.value_emb)):
            m = kinds == k
            if m.any():
                out[m] = src[refs[m]]
        return out

    def batch(self, atoms: list[tuple[np.ndarray, np.ndarray, np.ndarray]], states: list) -> StateBatch:
        """``atoms[i]`` = (embeddings (n, d), kinds (n,), edges (m, 2)); ``states[i]`` = prefix tables."""
        a = self.a
        ax, ab, tx, tb, cx, cb = [], [], [], [], [], []
        e = {k: [] for k in EDGE_TYPES}
        na = nt = nc = 0
        n_tab = np.zeros(len(states), np.float32)
        for g, ((emb, kinds, aedges), tables) in enumerate(zip(atoms, states)):
            n = len(kinds)
            ax.append(np.concatenate([emb, self._kind_eye[np.asarray(kinds, np.int64)]], axis=1))
            ab.append(np.full(n, g))
            if len(aedges):
                ae = np.asarray(aedges, np.int64).reshape(-1, 2).T + na
                e[("atom", "rel", "atom")].append(np.concatenate([ae, ae[::-1]], axis=1))
            tables = [int(t) for t in tables]
            k = len(tables)
            n_tab[g] = k
            if k:
                tx.append(a.emb_table[tables])
                tb.append(np.full(k, g))
                cols_per = [self.cols[t] for t in tables]
                cols = np.concatenate(cols_per)
                cpos = {}
                start = nc
                owner = []
                for i, cs in enumerate(cols_per):
                    for c in cs:
                        cpos[int(c)] = start
                        start += 1
                    owner.extend([nt + i] * len(cs))
                cx.append(np.concatenate([a.emb_header[cols], self._dtype_eye[a.col_dtype_code[cols]]], axis=1))
                cb.append(np.full(len(cols), g))
                col_ids = np.arange(nc, nc + len(cols))
                owner = np.asarray(owner, np.int64)
                e[("table", "has", "column")].append(np.stack([owner, col_ids]))
                e[("column", "in", "table")].append(np.stack([col_ids, owner]))
                tpos = {t: nt + i for i, t in enumerate(tables)}
                jj, uu = [], []
                for i, t in enumerate(tables):
                    for u in tables[i + 1:]:
                        for _s, c, d in a.join[t].get(u, ()):
                            if c in cpos and d in cpos:
                                jj.append((cpos[c], cpos[d]))
                                jj.append((cpos[d], cpos[c]))
                        if u in a.union[t]:
                            uu.append((tpos[t], tpos[u]))
                            uu.append((tpos[u], tpos[t]))
                if jj:
                    e[("column", "joins", "column")].append(np.asarray(jj, np.int64).T)
                if uu:
                    e[("table", "unions", "table")].append(np.asarray(uu, np.int64).T)
                if n and self.align_k:
                    sim = emb @ a.emb_header[cols].T  # (n, len(cols))
                    kk = min(self.align_k, len(cols))
                    top = np.argpartition(-sim, kk - 1, axis=1)[:, :kk]
                    src = np.repeat(np.arange(na, na + n), kk)
                    dst = top.reshape(-1) + nc
                    e[("atom", "aligns", "column")].append(np.stack([src, dst]))
                    e[("column", "aligned", "atom")].append(np.stack([dst, src]))
                nt += k
                nc += len(cols)
            na += n
        d = self.dim
        cat = lambda xs, w: np.concatenate(xs) if xs else np.zeros((0, w), np.float32)  # noqa: E731
        icat = lambda xs: np.concatenate(xs).astype(np.int64) if xs else np.zeros(0, np.int64)  # noqa: E731
        return StateBatch(
            atom_x=cat(ax, d + 3), table_x=cat(tx, d), column_x=cat(cx, d + len(DTYPES)),
            atom_batch=icat(ab), table_batch=icat(tb), column_batch=icat(cb),
            edges={k: (np.concatenate(v, axis=1) if v else np.zeros((2, 0), np.int64)) for k, v in e.items()},
            n_graphs=len(states), n_tables=n_tab,
        )

    def actions(self, ops, anchors, news):
        """Shared table-encoder inputs of anchor and new tables, and the operator one-hot (start/join/union)."""
        anchors = np.asarray(anchors, np.int64)
        news = np.asarray(news, np.int64)
        anc = np.where(anchors < 0, news, anchors)  # a start action anchors on the table it places
        return self.table_in[anc], self.table_in[news], np.eye(3, dtype=np.float32)[np.asarray(ops, np.int64)]

    def transitions(self, rows: dict, next_state: bool = False):
        """Featurise a batch of transition rows (columns as produced by the trajectory shards)."""
        atoms = []
        for kinds, refs, src, dst in zip(rows["atom_kind"], rows["atom_ref"], rows["edge_src"], rows["edge_dst"]):
            atoms.append((self.atom_embeddings(kinds, refs), np.asarray(kinds), np.stack([np.asarray(src), np.asarray(dst)], axis=1)))
        states = rows["next_state" if next_state else "state"]
        return self.batch(atoms, list(states))
