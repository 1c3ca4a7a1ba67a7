"""Ranking the lake's tables for one entity mention: its own words, the question, the lake graph.

Step 3 of the package docstring (:mod:`raylake.intent.offline`). An entity's candidate tables
are those its words name, whose headers or text match it, and those holding a precise
attribute or value of the question (:meth:`Ranker.base_tables`). They are ranked by that own
score plus the question's other mentions *through the lake graph* (a mention counts for a
table when a table close to it by join-path cost explains it), the whole question's cosine
with the table's text and with its join neighbourhood's (:meth:`Ranker.rank_tables`); and,
among the tables an entity word names, by how well each holds the words asked of it
(:meth:`Ranker.holds`). A question is about one part of the lake: of a dozen same-named
``student`` tables, the one whose neighbourhood also holds the rest of the question is meant.
Closeness is exp(−cheapest join-path cost / τ) over the lake graph (GRAFT, Sec. 3.1: join and
union edges between tables), one Dijkstra per table, cached. The joint choice of one table
per entity is :mod:`.joint`'s.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from raylake.intent.lexicon import name_entity_words, tokens
from raylake.intent.offline.matching import Matcher
from raylake.reward.psi import rescale
from raylake.config import IntentConfig
from raylake.intent.offline.span import Span


class Ranker:
    """Candidate tables of an entity mention and their ranking (see the module docstring)."""

    def __init__(self, index, lex, settings: IntentConfig, matcher: Matcher):
        self.index = index
        self.lex = lex
        self.settings = settings
        self.matcher = matcher
        self._costs = None  # sparse join-cost matrix of the lake graph, built on first use
        self._near_cache: OrderedDict[int, np.ndarray] = OrderedDict()

    def why(self, e: Span, t: int, joint: bool) -> dict:
        """The terms of the first table's score, for the evidence: own (and from what), context,
        question, neighbourhood."""
        own, ctx, q, near = e.parts.get(t, (0.0, 0.0, 0.0, 0.0))
        src = e.why.get(t, ("",))
        if src[0] == "held":
            source = "holds a precise attribute or value of the question"
        elif src[0] == "named":
            by = self.lex.referenced.get(t, {}).get(src[1])
            if by:
                how = f"by the headers of {', '.join(self.index.paths[u] for u in by[:2])} referencing it"
            else:
                how = "by its file name" if src[1] in name_entity_words(self.index.paths[t]) else "by its headers"
            source = f"named {src[1]!r} {how}" + (" (abbreviated)" if src[2] else "")
        elif src[0] == "header":
            source = f"header {self.index.columns['name'][src[1]]!r}"
        else:
            source = "table text" if src[0] == "text" else ""
        out = {"own": round(own, 3), "from": source, "context": round(ctx, 3), "question": round(q, 3),
               "neighbourhood": round(near, 3)}
        if e.held_attrs is not None:
            out["attributes"] = round(e.held_attrs.get(t, 0.0), 3)
        if joint:
            out["chosen"] = "jointly with the other entities"
        return out

    def holds(self, tables: list[int], spans: list[Span]) -> dict[int, float]:
        """How well each table holds a set of attribute words: the mean over ``spans`` of the
        best match among the table's and its shards' headers, header cosine (rescaled) or
        lexical match, in [0, 1]:

            holds(t) = 1/|A| · Σ_{a ∈ A} max_{c ∈ cols(t)} max(cos(a, c), lex(a, c))

        Of several tables named alike, the one that has what is asked of the entity is meant.
        Two rankings add η · holds(t): the offline extractor's, for the generic words the
        question's syntax gives an entity, among the tables its word names
        (``generic_holds``, package docstring step 3); and the grounding of an LLM's graph,
        whose trees list their own attributes (:func:`raylake.intent.ground.ground`).

        Args:
            tables: the candidate tables to score.
            spans: attribute words, embedded by :meth:`.matching.Matcher.match`.

        Returns ``{table: holds}``; empty without words.
        """
        if not spans:
            return {}
        m = self.matcher
        emb = np.stack([s.emb for s in spans]).T  # (d, |A|)
        lexical = [m.lexical(s) for s in spans]
        out = {}
        for t in tables:
            shards = self.index.graph.shards(t)
            cols, cos = m.header_cos(shards, emb)  # cos: (|cols|, |A|)
            if not len(cols):
                continue
            out[t] = sum(max(float(cos[:, i].max()), m.header_match(lex, shards), 0.0)
                         for i, lex in enumerate(lexical)) / len(spans)
        return out

    def context_tables(self, context: list[Span], min_spec: float = 0.5, min_col: float = 0.9) -> dict[int, float]:
        """Tables holding what the question says precisely: a value it quotes, or a header an
        attribute mention matches (score ≥ ``min_col``) that few tables have (specificity ≥
        ``min_spec``) — each with ``held_floor`` × that score as a candidate for every entity."""
        out: dict[int, float] = {}
        for s in context:
            if self.matcher.specificity(s) < min_spec:
                continue
            for t, b in self.matcher.table_best(s).items():
                if b >= min_col:
                    out[t] = max(out.get(t, 0.0), self.settings.held_floor * b)
        return out

    def base_tables(self, e: Span, held: dict[int, float] | None = None) -> dict[int, float]:
        """Candidate tables of an entity mention on its own words: naming (the word prefixes the
        table's key, ``Festival_ID``) ∨ 0.6 × its best column ∨ 0.9 × cosine with the table text
        ∨ the ``held`` floor of a table holding a precise attribute or value of the question
        (:meth:`context_tables`): the phone table (``Hardware_Model_name``, …) never says
        "phone", but "the phone whose hardware model name is …" means it."""
        idx, lex = self.index, self.lex
        toks = tokens(e.text)
        cand: dict[int, float] = {}

        def put(t: int, v: float, why: tuple) -> None:
            if v > cand.get(t, 0.0):
                cand[t] = v
                e.why[t] = why  # worded by why(), for the chosen table only

        for t, v in (held or {}).items():
            put(t, v, ("held",))
        # an entity word that abbreviates the mention ('stu' for 'student') names a table as surely
        # as one that spells it: weighting it w instead, `python -m bench.intent_bench --limit 400`
        # gave entity F1 0.564 / 0.581 / 0.586 / 0.587 at w = 0.75 / 0.85 / 0.95 / 1.0 (all 1,701:
        # 0.561 at 0.85, 0.566 at 0.95, 0.568 at 1.0) — in a lake whose keys are abbreviated, it is the name
        words = [(w, False) for w in sorted({e.head, "_".join(toks)})]
        words += [(w, True) for w in self.matcher.abbreviations(e)]
        for w, abbreviated in words:
            for t in lex.entity_tables.get(w, ()):
                put(t, lex.entity_strength(t, w), ("named", w, abbreviated))
        for c, s in e.columns[:16]:
            put(int(idx.col_table[c]), 0.6 * s, ("header", c))
        if e.table_cos is not None:
            k = min(10, len(e.table_cos) - 1)
            for t in np.argpartition(-e.table_cos, k)[: k + 1]:
                put(int(t), 0.9 * float(e.table_cos[t]), ("text",))
        return {t: v for t, v in cand.items() if v > 0}

    def near(self, t: int) -> np.ndarray:
        """closeness(t, ·) = exp(−cheapest join-path cost) over the lake graph (0 beyond
        ``max_cost``; shards of one table at 1): one C Dijkstra per table, the last
        ``near_cache`` rows kept (a long-running service meets every table of a large lake)."""
        row = self._near_cache.get(t)
        if row is not None:
            self._near_cache.move_to_end(t)
        else:
            cfg = self.settings
            if self._costs is None:
                self._costs = _cost_matrix(self.index.graph, cfg.min_join)
            # the cost matrix is symmetric, so directed=True is the undirected distance without
            # scipy re-symmetrising the whole matrix on every call
            d = dijkstra(self._costs, directed=True, indices=t, limit=cfg.max_cost)
            row = np.where(np.isfinite(d), np.exp(-d / cfg.near_scale), 0.0).astype(np.float32)
            self._near_cache[t] = row
            if len(self._near_cache) > cfg.near_cache:
                self._near_cache.popitem(last=False)
        return row

    def question_tables(self, question: str) -> np.ndarray:
        """(T,) rescaled cosine of the whole question with each table's text: the question's
        words together (a database's own vocabulary) tell same-named tables apart."""
        q = np.ascontiguousarray(self.index.embedder.encode([question.lower()]), np.float32)
        return rescale(q @ self.index.emb_table.T)[0]

    def neighbourhood_cos(self, ts: np.ndarray, qcos: np.ndarray) -> np.ndarray:
        """(|ts|,) how much each table's join neighbourhood, outside its own shard cluster,
        reads like the question:

            Σ_u closeness(t, u) · q(u) / (1 + Σ_u closeness(t, u)),   u ∉ cluster(t)

        a closeness-weighted mean of the rescaled cosines ``qcos`` shrunk towards 0 by one
        table's worth of prior weight. Without the table's own cosine (that is the question
        term's) and without the shrinkage, a table with one neighbour took that neighbour's
        whole cosine: in a two-table lake 'roller coaster' went to the country table the
        question also names, and a table joined to nothing ranked by its own cosine twice.
        """
        shard = np.asarray(self.index.graph.shard_of)
        near = np.stack([self.near(int(t)) for t in ts])  # (|ts|, T)
        near[shard[None, :] == shard[ts][:, None]] = 0.0
        return (near @ qcos) / (1.0 + near.sum(axis=1))

    def rank_tables(self, e: Span, cand: dict[int, float], context: list[Span],
                    others: list[dict[int, float]] = (), qcos: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Candidate tables ``cand`` of an entity mention, best first: its own score (:meth:`base_tables`)
        plus ζ · Σ_s w_s · max_u b_s(u) · closeness(t, u) (at most ``max_context``) over the
        question's other mentions s — attributes and values (b_s: their best column per table,
        w_s: specificity) and the other entities (b_s: their own table scores, w_s = 1) —
        plus φ · cos(question, text of t), rescaled (``question_prior``, :meth:`question_tables`),
        plus ν · the same cosine averaged over t's join neighbourhood, weighted by closeness
        (``neighbour_prior``, :meth:`neighbourhood_cos`): the question reads like the
        database around the meant table, not only like the table. That term needs a Dijkstra
        per candidate, so only the ``neighbour_top`` (32) best on the other terms get it (all
        1,701 Spider questions: the same graphs as with every candidate, entity F1 0.6273).

        A question is about one part of the lake: of several same-named tables, the one whose
        join neighbourhood also holds what the rest of the question names, and whose own
        vocabulary the question reads like, is meant.
        """
        if not cand:
            return []
        cfg, m = self.settings, self.matcher
        ctx = [(m.table_best(s), m.specificity(s)) for s in context if s is not e]
        ctx += [(o, 1.0) for o in others]
        ctx = [(b, w) for b, w in ctx if b and w > 0]
        arrays = []
        for b, w in ctx:
            top_b = sorted(b.items(), key=lambda x: (-x[1], x[0]))[: cfg.top_k * 2]
            arrays.append((np.asarray([u for u, _ in top_b]), np.asarray([v for _, v in top_b], np.float32), w))
        # closeness is symmetric: one Dijkstra per context table rather than per candidate (a
        # name such as 'park' has hundreds of candidate tables in a 10,000-table lake)
        ts = np.fromiter(cand, np.int64, len(cand))
        bonus = np.zeros(len(ts))
        for u, v, w in arrays:
            near = np.stack([self.near(int(x))[ts] for x in u])  # (|u|, |candidates|)
            bonus += w * (v[:, None] * near).max(axis=0)
        bonus_q, bonus_n = np.zeros(len(ts)), np.zeros(len(ts))
        if qcos is not None:
            bonus_q = cfg.question_prior * qcos[ts]
            if cfg.neighbour_prior > 0:
                # one Dijkstra per table read: only the candidates best on the other terms (a
                # common name has hundreds in a large lake, and the joint choice looks at ~10)
                pre = np.asarray([cand[int(t)] for t in ts]) + np.minimum(cfg.max_context, cfg.near_context * bonus) + bonus_q
                top = np.argsort(-pre, kind="stable")[: cfg.neighbour_top]
                bonus_n[top] = cfg.neighbour_prior * self.neighbourhood_cos(ts[top], qcos)
        e.parts = {int(t): (cand[int(t)], min(cfg.max_context, cfg.near_context * float(b)), float(bq), float(bn))
                   for t, b, bq, bn in zip(ts, bonus, bonus_q, bonus_n)}
        scored = {t: sum(p) for t, p in e.parts.items()}
        return sorted(scored.items(), key=lambda x: (-x[1], x[0]))


def _cost_matrix(graph, min_join: float) -> csr_matrix:
    """Join links as a sparse cost matrix (−log score); shard links nearly free (csgraph drops zeros)."""
    rows, cols, data = [], [], []
    for t in range(graph.n_tables):
        for u, links in graph.join[t].items():
            if links[0].score >= min_join:
                rows.append(t), cols.append(u), data.append(max(1e-6, -np.log(max(links[0].score, 1e-6))))
        for u, link in graph.union[t].items():
            if graph.is_shard_link(link):
                rows.append(t), cols.append(u), data.append(1e-6)
    n = graph.n_tables
    m = csr_matrix((np.asarray(data, np.float64), (np.asarray(rows), np.asarray(cols))), shape=(n, n))
    return m.maximum(m.T).tocsr()  # links are stored both ways; make the symmetry exact
