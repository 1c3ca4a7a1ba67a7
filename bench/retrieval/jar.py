"""Join-aware retrieval as a mixed-integer program (JAR-like; Chen et al. 2024), union-extended.

JAR re-ranks a base retriever's top-N tables by choosing the subset that maximises
relevance, coverage of the question's parts and join compatibility. Over the candidates
i (hybrid top-N), question atoms a (raylake's offline intent nodes: entity, attribute,
value) and candidate pairs e = (i, j) with a join *or union* edge in the lake graph
(GRAFT's union extension of JAR):

    max  Σ_i r_i x_i  +  λ_c Σ_a z_a  +  λ_j Σ_e w_e y_e
    s.t. z_a ≤ Σ_i c_ai x_i,  z_a ≤ 1          (atom a counted once if some table covers it)
         y_e ≤ x_i,  y_e ≤ x_j                  (an edge counts only between chosen tables)
         Σ_e y_e ≤ Σ_i x_i − 1,  Σ_i x_i ≤ L    (at most a spanning tree's worth of edges)
         x, y ∈ {0, 1},  z ∈ [0, 1]

r_i = rescaled cos(question, table); c_ai = the best rescaled cosine of atom a with a
column header (0.9× with header+sample), 1 where the atom is a value the column holds;
w_e = the edge score of the index. Solved by HiGHS (``scipy.optimize.milp``) with a
branch-and-bound node limit (deterministic; a wall-clock limit only as a safety net); the
best integer solution found is used, and when there is none, the LP relaxation (``linprog``) is rounded
by taking the L largest x (ties by relevance) — the relaxation GRAFT used for JAR.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import LinearConstraint, linprog, milp

from bench.retrieval.base import Method, top_k
from raylake.reward.psi import rescale
from bench.retrieval.hybrid import rrf
from raylake.intent.lexicon import tokens


class JAR(Method):
    name = "jar"

    def __init__(self, ctx, n_candidates: int = 30, w_cover: float = 1.0, w_join: float = 1.0, node_limit: int = 500, time_limit_s: float = 20.0):
        super().__init__(ctx, n_candidates=n_candidates, w_cover=w_cover, w_join=w_join, node_limit=node_limit, time_limit_s=time_limit_s)
        self.n_candidates, self.w_cover, self.w_join = n_candidates, w_cover, w_join
        self.node_limit, self.time_limit_s = node_limit, time_limit_s
        self.stats = {"milp_optimal": 0, "milp_feasible": 0, "lp_fallback": 0}

    def prepare(self, question: str):
        ctx, idx = self.ctx, self.ctx.index
        graph = ctx.extractor.extract(question)
        atoms = [a for a in graph.atoms() if a.is_node]
        emb = ctx.encode([question] + [a.text.lower() for a in atoms])
        dense = ctx.table_emb @ emb[0]
        sparse = np.asarray(ctx.bm25.get_scores(tokens(question)))
        cand = top_k(rrf(sparse, dense), self.n_candidates)
        r = rescale(dense[cand])
        cover = np.zeros((len(atoms), len(cand)))
        if atoms:
            cols = [idx.table_columns[t] for t in cand]
            allc = np.concatenate(cols)
            h = rescale(emb[1:] @ idx.emb_header[allc].T)
            s = 0.9 * rescale(emb[1:] @ idx.emb_sample[allc].T)
            best = np.maximum(h, s)
            for k, a in enumerate(atoms):
                if a.kind == "value":
                    hits = idx.values.get(" ".join(a.text.lower().split()))
                    if hits is not None:
                        best[k, np.isin(allc, hits)] = 1.0
            bounds = np.cumsum([0] + [len(c) for c in cols])
            for i in range(len(cand)):
                if bounds[i + 1] > bounds[i]:
                    cover[:, i] = best[:, bounds[i] : bounds[i + 1]].max(axis=1)
        g = ctx.graph
        pos = {t: i for i, t in enumerate(cand)}
        edges = {}
        for t in cand:
            for u, links in g.join[t].items():
                if u in pos and pos[u] > pos[t]:
                    edges[(pos[t], pos[u])] = max(edges.get((pos[t], pos[u]), 0.0), links[0].score)
            for u, link in g.union[t].items():
                if u in pos and pos[u] > pos[t]:
                    edges[(pos[t], pos[u])] = max(edges.get((pos[t], pos[u]), 0.0), link.score)
        return cand, r, cover, sorted(edges.items())

    def select(self, prepared, budget: int) -> list[str]:
        cand, r, cover, edges = prepared
        n, a, m = len(cand), cover.shape[0], len(edges)
        if n == 0:
            return []
        if n <= budget:
            return [self.ctx.paths[cand[i]] for i in np.argsort(-r, kind="stable")]
        w = np.array([s for _, s in edges])
        cost = -np.concatenate([r, self.w_join * w, self.w_cover * np.ones(a)])
        X, Y, Z = 0, n, n + m
        rows, cols, vals, ub = [], [], [], []

        def row(entries, bound):
            k = len(ub)
            for c, v in entries:
                rows.append(k)
                cols.append(c)
                vals.append(v)
            ub.append(bound)

        for e, ((i, j), _) in enumerate(edges):
            row([(Y + e, 1.0), (X + i, -1.0)], 0.0)
            row([(Y + e, 1.0), (X + j, -1.0)], 0.0)
        for k in range(a):
            row([(Z + k, 1.0)] + [(X + i, -cover[k, i]) for i in range(n) if cover[k, i] > 0], 0.0)
        row([(X + i, 1.0) for i in range(n)], float(budget))
        row([(Y + e, 1.0) for e in range(m)] + [(X + i, -1.0) for i in range(n)], -1.0)
        A = sp.csr_matrix((vals, (rows, cols)), shape=(len(ub), n + m + a))
        ub = np.asarray(ub)
        integrality = np.concatenate([np.ones(n + m), np.zeros(a)])
        res = milp(cost, integrality=integrality, bounds=(0, 1), constraints=LinearConstraint(A, -np.inf, ub),
                   options={"node_limit": self.node_limit, "time_limit": self.time_limit_s, "presolve": True})
        if res.x is not None:
            self.stats["milp_optimal" if res.status == 0 else "milp_feasible"] += 1
            x = res.x[:n]
            chosen = [i for i in range(n) if x[i] > 0.5]
        else:
            self.stats["lp_fallback"] += 1
            lp = linprog(cost, A_ub=A, b_ub=ub, bounds=(0, 1), method="highs")
            x = lp.x[:n] if lp.x is not None else r
            chosen = [i for i in np.lexsort((-r, -x))[:budget]]
        chosen.sort(key=lambda i: (-r[i], i))
        return [self.ctx.paths[cand[i]] for i in chosen[:budget]]
