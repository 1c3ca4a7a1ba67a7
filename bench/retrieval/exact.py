"""GRAFT-Exact: exhaustive IGMS over the anchor region, with a time cap (GRAFT Sec. 5.4, Table 6).

Keeps raylake's anchor reachability and objective but replaces the beam search by
enumeration. Everything that defines the objective is raylake's own: the intent graph of
the offline extractor, the support matrix M and redundancy covariance C of
:class:`raylake.search.support.Support`, and the units a plan contributes, built by
:class:`raylake.search.beam.BeamSearch`'s own ``_apply`` (a table-cluster unit per table
and its union shards, a join unit per join link). The score is raylake's
U_IGMS(Φ) − λ·|Φ| (Eq. 6 and the stopping rule), so Exact differs from raylake only in
how much of the space it looks at.

Region: the tables within h join/union hops of an anchor of some atom (R_h of Alg. 3,
h = ``SearchConfig.hops``). Vertices are shard clusters; every connected set of clusters
holding at most L tables and containing an anchor is enumerated exactly once by ESU
(Wernicke 2006) rooted at anchors, which are ordered first. Each set is built along its
ESU order, a new cluster attaching to a member by its strongest edge (one spanning tree
per set). Sizes are deepened iteratively (all sets of 1 cluster, then 2, …), so when the
time cap stops the enumeration every size below the one in progress was covered
completely; ``stats`` records how often the enumeration completed.

The cap is a number of prefix expansions (one ``_apply``, i.e. one set built from a
smaller one), so results are deterministic given the index; a wall-clock cap stops
pathological cases and is counted separately (``time_capped``: those answers depend on
the machine's speed).
"""
from __future__ import annotations

import time
from dataclasses import replace

from bench.retrieval.base import Method


class _Capped(Exception):
    pass


class Exact(Method):
    name = "exact"

    def __init__(self, ctx, max_expansions: int = 3000, time_cap_s: float = 20.0):
        super().__init__(ctx, max_expansions=max_expansions, time_cap_s=time_cap_s)
        from raylake.config import RaylakeContext

        self.rctx = RaylakeContext.get_current()
        self.max_expansions = max_expansions
        self.cap = time_cap_s
        self.stats = {"calls": 0, "complete": 0, "work_capped": 0, "time_capped": 0, "sets_evaluated": 0, "sizes_completed": []}

    def prepare(self, question: str):
        from raylake.search.support import Support

        intent = self.ctx.extractor.extract(question)
        return Support(self.ctx.index, self.ctx.lexicon, intent, self.rctx.igms)

    def select(self, support, budget: int) -> list[str]:
        from raylake.search.beam import BeamSearch

        g = self.ctx.graph
        bs = BeamSearch(g, support, replace(self.rctx.search, budget=budget), self.rctx.igms)
        self.stats["calls"] += 1
        anchor_rank: dict[int, int] = {}
        for j, ts in bs.anchors.items():
            for r, t in enumerate(ts):
                anchor_rank[t] = min(anchor_rank.get(t, r), r)
        if not anchor_rank:
            self.stats["complete"] += 1
            return []
        region: set[int] = set()
        for j in bs.anchors:
            region.update(bs.reachable(j))
        rep = {}
        for t in region:
            rep[t] = min(g.shards(t))
        for t in anchor_rank:
            rep.setdefault(t, min(g.shards(t)))
        nodes = sorted(set(rep.values()))
        members: dict[int, list[int]] = {}
        for t, c in rep.items():
            members.setdefault(c, []).append(t)
        # best link between two clusters, oriented: (cluster a, cluster b) -> (score, table in a, table in b, op, link)
        link: dict[tuple[int, int], tuple] = {}
        for t, c in rep.items():
            for u, links in g.join[t].items():
                d = rep.get(u)
                if d is not None and d != c and link.get((c, d), (-1,))[0] < links[0].score:
                    link[(c, d)] = (links[0].score, t, u, "join", links[0])
            for u, ul in g.union[t].items():
                d = rep.get(u)
                if d is not None and d != c and link.get((c, d), (-1,))[0] < ul.score:
                    link[(c, d)] = (ul.score, t, u, "union", ul)
        nbrs: dict[int, set[int]] = {c: set() for c in nodes}
        for c, d in link:
            nbrs[c].add(d)
        anchors = {rep[t] for t in anchor_rank}
        a_key = {c: min(anchor_rank.get(t, 10**9) for t in members[c]) for c in anchors}
        order = sorted(anchors, key=lambda c: (a_key[c], c)) + sorted(set(nodes) - anchors)
        pos = {c: i for i, c in enumerate(order)}

        deadline = time.perf_counter() + self.cap
        best = [None, -float("inf")]
        evaluated = [0]
        work = [0]

        def expand(p, action):
            work[0] += 1
            if work[0] > self.max_expansions:
                raise _Capped("work_capped")
            if time.perf_counter() > deadline:
                raise _Capped("time_capped")
            return bs.apply(p, action)

        def extend(p, sub: list[int], closed: set[int], ext: list[int], root: int, k: int):
            if len(sub) == k:
                evaluated[0] += 1
                if p.score > best[1]:
                    best[0], best[1] = p, p.score
                return
            ext = list(ext)
            while ext:
                w = ext.pop()
                # attach w by the strongest edge from any member
                s, a, b, op, lk = max((link[(m, w)] for m in sub if (m, w) in link), key=lambda x: x[0])
                if op == "union":
                    lk = g.union[a][b]
                res = expand(p, ((a, b, op, lk),))
                if res is None:  # over budget (or overlaps): every superset is too
                    continue
                new_ext = ext + [u for u in nbrs[w] if pos[u] > pos[root] and u not in closed]
                extend(res[0], sub + [w], closed | nbrs[w] | {w}, new_ext, root, k)

        sizes_done = 0
        try:
            for k in range(1, budget + 1):
                for root in order:
                    if root not in anchors:
                        break
                    start = expand(bs.new_prefix(), ((None, root, "start", None),))
                    if start is None:
                        continue
                    ext = [u for u in nbrs[root] if pos[u] > pos[root]]
                    extend(start[0], [root], nbrs[root] | {root}, ext, root, k)
                sizes_done = k
            self.stats["complete"] += 1
        except _Capped as cap:
            self.stats[cap.args[0]] += 1
        self.stats["sets_evaluated"] += evaluated[0]
        self.stats["sizes_completed"].append(sizes_done)
        p = best[0]
        self.last_score = best[1]  # U − λ·|Φ| of the plan returned (−inf when none)
        if p is None:
            return []
        return [self.ctx.paths[s.new] for s in p.steps][:budget]
