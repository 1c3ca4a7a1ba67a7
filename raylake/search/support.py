"""Support of lake objects for intent atoms: the entries of IGMS's M (GRAFT Sec. 3.2).

For a node atom u and a lake object x,

    ψ(u, x) = 1[type(u) ~ type(x)] · σ(β · (s(u, x) − s₀))

where ``s ∈ [0, 1]`` is a similarity that fuses the paper's embedding cosine with two exact
signals the cosine misses (our choice, documented here because the paper leaves it open):

- entity u vs table x: max of the lemma of u naming the table (its key prefix, e.g.
  ``Festival_ID``; :class:`~raylake.intent.lexicon.Lexicon`), the cosine with the table text,
  and 0.85 × the best column match; the table the extractor chose for u's tree (jointly with
  the other entities, in its evidence) gets ``IGMSConfig.intent_tables``;
- attribute u vs column x: max of IDF-weighted header-token overlap, the rescaled cosine
  with the header embedding, and 0.9 × that with the header+sample embedding;
- value u vs column x: 1 when the normalised value is in the column (value index); 0.6 for
  a number or date inside the column's range (the type gate admits only numeric/date
  columns for them); else 0.7 × the rescaled cosine with the header+sample embedding.

Cosines are rescaled ``clip((cos − 0.3)/0.5, 0, 1)`` (MiniLM puts unrelated short texts at
0.1–0.3). The formulas and weights are :mod:`raylake.reward.psi`'s, which the trajectories'
reward shares; this module adds the exact signals. Evidence units and their rows:

- a **table unit** per table cluster in a plan (one table and its shards): node atoms get
  the best ψ over the cluster's columns (entity: over the table as well);
  ``has_attribute(e, a)`` the best ψ(e, T)·ψ(a, c) and ``has_value(a, v)`` the best
  ψ(a, c)·ψ(v, c) over its columns c — the containment paths χ of intra-tree edges;
- a **join unit** per join link of the plan: each cross-tree join atom (i, j) gets the best
  ψ(i, x)·ω(p)^(1/|p|)·ψ(j, y) over plan paths p ∋ link between tables x, y of at most h
  links, ω the join scores (Eq. after 6); ψ(i, x) is tree i's best node support in x.

The redundancy covariance is the Jaccard of the units' column sets, columns identified by
their spelling-free names, so two copies of one schema are redundant while a table and a
different table sharing one key are not.
"""
from __future__ import annotations

import math
import re
from collections import deque

import numpy as np

from raylake.config import IGMSConfig
from raylake.intent.lexicon import Lexicon, lemma, tokens
from raylake.intent.model import IntentGraph
from raylake.reward import psi as psi_

_NUM = re.compile(r"^[+-]?\d+(\.\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _as_float(x) -> float | None:
    """A summary bound as a number; indexes written before decimals were stored as numbers hold
    them as text, and a bound that is neither (a bug elsewhere) must not fail the question."""
    if isinstance(x, bool) or x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


class Support:
    """ψ for every atom of ``intent`` against every column and table of ``index``."""

    def __init__(self, index, lexicon: Lexicon, intent: IntentGraph, cfg: IGMSConfig | None = None):
        self.index = index
        self.lex = lexicon
        self.intent = intent
        self.cfg = cfg or IGMSConfig()
        self.atoms = intent.atoms()
        self.a = len(self.atoms)
        # tree → the table the extractor chose for it (its evidence's first), if one of ours
        self._chosen = {t.tree_id: self._first_table(t) for t in intent.trees}
        n_cols = index.n_columns
        starts = np.asarray([tc[0] if len(tc) else 0 for tc in index.table_columns], np.int64)
        self._starts = starts
        node = [at for at in self.atoms if at.is_node]
        texts = [at.text for at in node]
        emb = index.embedder.encode([t.lower() for t in texts]) if texts else np.zeros((0, index.emb_header.shape[1]), np.float32)
        hcos = emb @ index.emb_header.T  # (n_node, C)
        scos = emb @ index.emb_sample.T
        tcos = emb @ index.emb_table.T  # (n_node, T)
        self.col_s = np.zeros((self.a, n_cols))  # similarity s(u, column) of node atoms
        self.tab_s = np.zeros((self.a, index.n_tables))  # similarity s(u, table) of node atoms
        dtype = np.asarray(index.columns["dtype"])
        for k, at in enumerate(node):
            i = at.index
            if at.kind == "value":
                self.col_s[i] = self._value_sim(at.text, scos[k], dtype)
            else:
                s = psi_.column_similarity(hcos[k], scos[k], self.cfg)
                for c, w in lexicon.lexical_scores(tokens(at.text)).items():
                    s[c] = max(s[c], w)
                self.col_s[i] = s
            best_col = np.maximum.reduceat(self.col_s[i], starts) if n_cols else np.zeros(index.n_tables)
            if at.kind == "entity":
                named = self._entity_naming(at.text)
                self.tab_s[i] = np.maximum(named, psi_.table_similarity(tcos[k], best_col, self.cfg))
                chosen = self._chosen.get(at.tree)
                if chosen is not None and self.cfg.intent_tables > 0:
                    self.tab_s[i, chosen] = max(self.tab_s[i, chosen], self.cfg.intent_tables)
            else:
                self.tab_s[i] = best_col
        self.col_psi = psi_.psi(self.col_s, self.cfg)
        self.tab_psi = psi_.psi(self.tab_s, self.cfg)
        self._node_mask = np.array([at.is_node for at in self.atoms])
        self.col_psi[~self._node_mask] = 0.0
        self.tab_psi[~self._node_mask] = 0.0
        self.join_atoms = [at for at in self.atoms if at.kind == "join"]
        tree_nodes: dict[str, list[int]] = {}
        for at in self.atoms:
            if at.is_node:
                tree_nodes.setdefault(at.tree, []).append(at.index)
        self._tree_nodes = tree_nodes
        self._join_trees = [(at.index, self._tree_of(at.ends[0]), self._tree_of(at.ends[1])) for at in self.join_atoms]
        self._row_cache: dict[int, np.ndarray] = {}
        self._colset_cache: dict[tuple, frozenset] = {}
        self.weights = self._specificity()
        self.scale = np.sqrt(self.weights) * self.cfg.prior_scale
        self.names = np.asarray(index.columns["norm_name"])

    # ------------------------------------------------------------------ similarities

    def _value_sim(self, text: str, scos: np.ndarray, dtype: np.ndarray) -> np.ndarray:
        idx = self.index
        s = np.zeros(idx.n_columns)
        norm = " ".join(text.lower().split())
        numeric = bool(_NUM.match(norm))
        date = bool(_DATE.match(norm))
        if numeric or date:
            gate = np.isin(dtype, ["int", "float"]) if numeric else (dtype == "date") | (dtype == "text")
            s = np.where(gate, self.cfg.value_type_only, 0.0)
            if numeric:
                v = float(norm)
                for c in np.flatnonzero(gate):
                    summ = idx.column_summary(int(c))
                    lo, hi = _as_float(summ.get("min")), _as_float(summ.get("max"))
                    if lo is not None and hi is not None and lo <= v <= hi:
                        s[c] = self.cfg.value_in_range
        else:
            s = psi_.value_similarity(scos, self.cfg)
        hits = idx.values.get(norm)
        if hits is not None:
            s[hits] = 1.0
        return s

    def intent_tables(self) -> list[int]:
        """The tables the extractor chose for the intent's trees, in tree order (no repeats)."""
        return list(dict.fromkeys(t for t in self._chosen.values() if t is not None))

    def _first_table(self, tree) -> int | None:
        """The table the extractor chose for a tree (its evidence), if it names one of ours."""
        tables = (tree.evidence or {}).get("tables") or []
        return self.index.path_id.get(tables[0]) if tables else None

    def _entity_naming(self, text: str) -> np.ndarray:
        out = np.zeros(self.index.n_tables)
        toks = tokens(text)
        if not toks:
            return out
        for w in {toks[-1], "".join(toks), "_".join(toks)}:
            for t in self.lex.entity_tables.get(w, ()):
                out[t] = max(out[t], self.lex.entity_strength(t, w))
        return out

    def _specificity(self) -> np.ndarray:
        """Prior variance w_j of each atom: how few tables support it (an IDF over tables).

        θ_j ~ N(0, w_j) instead of N(0, 1) turns Eq. 6 into logdet(I + W½MᵀC⁻¹MW½): rows of M
        are scaled by √w. An atom that every table supports ('name', 'id') carries no
        information about which tables to pick; the paper's unit prior would let it pull
        in any table. Edge atoms take the geometric mean of their two ends.
        """
        n = max(2, self.index.n_tables)
        w = np.ones(self.a)
        for at in self.atoms:
            if at.is_node:
                k = int((self.tab_psi[at.index] >= 0.5).sum())
                w[at.index] = np.clip(math.log(n / max(k, 1)) / math.log(n), 0.05, 1.0)
        for at in self.atoms:
            if not at.is_node:
                w[at.index] = math.sqrt(w[at.ends[0]] * w[at.ends[1]])
        return w

    def _tree_of(self, atom_index: int) -> str:
        return self.atoms[atom_index].tree

    # ------------------------------------------------------------------ anchors

    def anchors(self, k: int) -> dict[int, list[int]]:
        """Top-``k`` tables per node atom (GRAFT Alg. 3 line 3), best first."""
        out = {}
        for at in self.atoms:
            if not at.is_node:
                continue
            row = self.tab_s[at.index]
            top = np.argpartition(-row, min(k, len(row) - 1))[:k] if len(row) > k else np.arange(len(row))
            top = top[np.argsort(-row[top], kind="stable")]
            out[at.index] = [int(t) for t in top if row[t] > 0]
        return out

    # ------------------------------------------------------------------ unit rows

    def table_row(self, tables: list[int]) -> np.ndarray:
        """Support row of the table unit of a cluster (a table and its shards)."""
        key = tables[0] if len(tables) == 1 else None
        if key is not None and key in self._row_cache:
            return self._row_cache[key]
        cols = np.concatenate([self.index.table_columns[t] for t in tables])
        row = np.zeros(self.a)
        cp = self.col_psi[:, cols]  # (a, n_cols)
        best = cp.max(axis=1) if cols.size else np.zeros(self.a)
        for at in self.atoms:
            if at.kind == "entity":
                row[at.index] = max(self.tab_psi[at.index, tables].max(), best[at.index])
            elif at.is_node:
                row[at.index] = best[at.index]
        for at in self.atoms:
            if at.kind == "has_attribute":
                e, x = at.ends
                row[at.index] = row[e] * best[x]
            elif at.kind == "has_value":
                x, v = at.ends
                row[at.index] = float((cp[x] * cp[v]).max()) if cols.size else 0.0
        row = row * self.scale
        if key is not None:
            self._row_cache[key] = row
        return row

    def tree_support(self, tables: list[int]) -> dict[str, float]:
        row = self.table_row(tables) / self.scale
        return {tree: float(row[nodes].max()) for tree, nodes in self._tree_nodes.items()}

    def join_row(self, new_side: dict[str, float], others: list[tuple[dict[str, float], float, int]]) -> np.ndarray:
        """Support row of a join unit that attached a cluster with tree supports ``new_side``.

        ``others``: for every other plan cluster, its tree supports, the product of join scores
        on the plan path to the new cluster, and that path's length in links.
        """
        row = np.zeros(self.a)
        for j, ti, tj in self._join_trees:
            best = 0.0
            for sup, omega, length in others:
                if length > self.cfg.hops or length == 0:
                    continue
                g = omega ** (1.0 / length)
                best = max(best, sup.get(ti, 0.0) * g * new_side.get(tj, 0.0), sup.get(tj, 0.0) * g * new_side.get(ti, 0.0))
            row[j] = best
        return row * self.scale

    def colset(self, tables: list[int]) -> frozenset:
        """Column identities of a cluster, for ColJac: a shard's column aligned by a union edge
        counts under the name of the column it maps to, so re-spelled shards (``EmployeeID`` →
        ``InstructorID``) add no phantom columns to the cluster's set."""
        if len(tables) == 1:
            return frozenset(self.names[self.index.table_columns[tables[0]]].tolist())
        key = tuple(tables)
        if key in self._colset_cache:
            return self._colset_cache[key]
        raw, members = self.index.columns["name"], set(tables)
        canon = {tables[0]: {raw[c]: self.names[c] for c in self.index.table_columns[tables[0]]}}
        todo, union = deque([tables[0]]), self.index.graph.union
        while todo:  # breadth-first over the cluster's union links, from its first table
            a = todo.popleft()
            for t in union[a]:
                if t in members and t not in canon:
                    back = union[t][a].mapping  # column of t -> column of a
                    canon[t] = {raw[c]: canon[a].get(back.get(raw[c]), self.names[c]) for c in self.index.table_columns[t]}
                    todo.append(t)
        names = {n for m in canon.values() for n in m.values()}
        for t in tables:  # members without a union link to the others keep their own names
            if t not in canon:
                names.update(self.names[self.index.table_columns[t]].tolist())
        self._colset_cache[key] = out = frozenset(names)
        return out


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)
