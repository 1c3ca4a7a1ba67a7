"""Choosing one table per entity jointly: the best-scored set that also hangs together in the lake.

Step 3 of the package docstring (:mod:`raylake.intent.offline`). Each entity's ranked tables
(:mod:`.ranking`) are scored together: their own scores, minus ξ times the cost of the
cheapest join tree between them (GRAFT, Sec. 3.1: the trees of an intent graph are joined,
possibly through bridge tables nobody names), plus μ for each attribute or value one of them
explains, minus δ for each table taken twice. Tables of one database join through strong key
links, so a coherent set is what tells apart the many same-named tables of a lake. The
runners-up of each entity are its other tables by max-marginal — the next coherent reading of
the whole question, not the next same-named table.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from raylake.intent.offline.matching import Matcher
from raylake.intent.offline.ranking import Ranker
from raylake.config import IntentConfig
from raylake.intent.offline.span import Span


class JointChooser:
    """``choose(ranked, context, pins) -> (chosen, runners_up)`` (see :meth:`choose`)."""

    def __init__(self, index, settings: IntentConfig, matcher: Matcher, ranker: Ranker):
        self.index = index
        self.settings = settings
        self.matcher = matcher
        self.ranker = ranker
        self.evaluations = 0  # objective evaluations made, every call together (what the beam bounds)

    def choose(self, ranked: list[list[tuple[int, float]]], context: list[Span] = (),
               pins=()) -> tuple[dict[int, int], dict[int, list[int]]]:
        """One table per entity, chosen jointly: the set maximising

            Σ_k score_k(t_k) − ξ · MST_cost(t_1 … t_n) + μ · Σ_s w_s · max_k best_s(t_k) − δ · (n − #clusters)

        over the top ``joint_width`` candidates of each entity and up to ``joint_near`` more that
        join closely to another entity's two best (Spider, 1,701 questions: entity F1 0.558 →
        0.561, join 0.288 → 0.294), where the MST is over the cheapest lake join
        paths between the chosen tables (cost Σ −log join score, ``LakeGraph.best_paths``,
        ≤ 2 links, unreachable = ``max_cost``), the μ term credits the set once for each
        attribute or value mention ``s`` (weight: its specificity) that one of its tables
        explains, and δ (``distinct``) charges each entity resolved to a table (shard cluster)
        another entity already took: a question that names two things means two tables.
        Tables of one database join through strong key links (gold pairs of the tuning
        questions: median cost 0.15, random pairs 0.51, by a scratch measurement over the
        stored index, not in ``bench/``), so a coherent set is what tells apart
        the many same-named tables ('student', 'customers') of a lake. ``pins`` (the second
        pass, package docstring step 3) are tables already fixed: they join the spanning tree
        and count as context closeness for every entity.

        Bounded: the sets are enumerated exactly while their number (the product of the
        entities' candidate counts) is at most ``max_joint`` (3,000: at tens of µs an evaluation,
        tens of ms a call — a small share of the 1 s a long question may take; every Spider
        question of ``bench.intent_snapshot --limit 400 --ground`` stays exact, byte-identical).
        Beyond it a beam (:meth:`beam`, ``joint_beam`` partial sets) costs at most
        (B + 1) · n · W evaluations instead of W^n: the EcoTable Ad requests (up to 8
        entities, up to ~390k sets, 38 s for one request's joint choice) take ≤ 2,401
        evaluations, joint choice p95 65 ms (``python -m bench.ecotable_latency``,
        docs/benchmarks.md); on the 8 requests timed both ways the tables returned are the same.

        Returns the chosen table per entity and, per entity, its other candidates by their
        *max-marginal*: the value of the best set that holds them, max over t_{−k} of the
        objective at t_k = t. A tree's runner-up is then the table of the next coherent reading
        of the whole question (another database's customers *and* products), not the next
        same-named table on the mention's own score.
        """
        cfg, graph, near_of = self.settings, self.index.graph, self.ranker.near
        ks = [k for k in range(len(ranked)) if ranked[k]]
        if not ks or len(ks) + len(pins) <= 1:
            return {k: ranked[k][0][0] for k in ks}, {}
        width = cfg.joint_width
        while width > 2 and (width + cfg.joint_near) ** len(ks) > cfg.max_joint:
            width -= 1
        cands = {k: ranked[k][:width] for k in ks}
        if cfg.joint_near:
            # a table ranked below the width but joined to another entity's best tables (the
            # loan_1 customer, named only by the abbreviation 'cust', next to its loan table)
            for k in ks:
                near = np.max(np.stack([near_of(t) for j in ks if j != k for t, _ in ranked[j][:2]]
                                       + [near_of(t) for t in pins]), axis=0)
                more = [(t, v) for t, v in ranked[k][width:] if near[t] >= cfg.joint_near_min]
                more.sort(key=lambda x: (-(x[1] + float(near[x[0]])), x[0]))
                cands[k] = cands[k] + more[: cfg.joint_near]
        tabs = sorted({t for k in ks for t, _ in cands[k]} | set(pins))
        costs: dict[tuple[int, int], float] = {}
        for t in tabs:
            bp = graph.best_paths([t], max_hops=2, min_join=cfg.min_join)
            for u in tabs:
                if u != t:
                    hit = bp.get(u)
                    c = 0.0 if graph.shard_of[t] == graph.shard_of[u] else (min(hit[0], cfg.max_cost) if hit else cfg.max_cost)
                    costs[(t, u)] = min(c, costs.get((u, t), c))
                    costs[(u, t)] = costs[(t, u)]
        ctx = [(self.matcher.table_best(s), self.matcher.specificity(s)) for s in context]
        ctx = [(b, w) for b, w in ctx if w > 0 and b]

        def mst(sel: list[int]) -> float:
            # Prim with each outside table's cheapest link to the tree kept: O(m²), the same links
            # added in the same order ((cost, table) smallest first) as the O(m³) scan it replaced,
            # so the same float sum
            rest, total = sel[1:], 0.0
            dist = [0.0 if y == sel[0] else costs[(sel[0], y)] for y in rest]
            while rest:
                i = min(range(len(rest)), key=lambda j: (dist[j], rest[j]))
                total += dist.pop(i)
                u = rest.pop(i)
                dist = [min(d, 0.0 if y == u else costs[(u, y)]) for d, y in zip(dist, rest)]
            return total

        marginal: dict[int, dict[int, tuple]] = {k: {} for k in ks}
        best: list = [None, None]  # the best set so far and its key

        def key_of(combo) -> tuple:
            """The objective of a (partial) set as a sort key, best first: (−value, tables)."""
            self.evaluations += 1
            sel = [t for t, _ in combo]
            val = sum(s for _, s in combo) - cfg.coherence * mst(sel + list(pins))
            val -= cfg.distinct * (len(sel) - len({int(graph.shard_of[t]) for t in sel}))
            val += cfg.joint_context * sum(w * max(b.get(t, 0.0) for t in sel) for b, w in ctx)
            return (-round(val, 9), tuple(sel))

        def record(key: tuple) -> None:
            for k, t in zip(ks, key[1]):
                if key < marginal[k].get(t, (np.inf,)):
                    marginal[k][t] = key
            if best[1] is None or key < best[1]:
                best[:] = [list(key[1]), key]

        if math.prod(len(cands[k]) for k in ks) <= cfg.max_joint:
            for combo in itertools.product(*(cands[k] for k in ks)):
                record(key_of(combo))
        else:
            self.beam([cands[k] for k in ks], key_of, record)
        best = best[0]
        chosen = dict(zip(ks, best))
        runners_up = {k: sorted((t for t in marginal[k] if t != chosen[k]), key=marginal[k].__getitem__) for k in ks}
        return chosen, runners_up

    def beam(self, cands: list[list[tuple[int, float]]], key_of, record) -> None:
        """The joint choice where enumerating every set costs too much: a beam over the entities
        in question order, then one round of single swaps around its best set.

        Layer i extends each kept partial set by each candidate of entity i and keeps the
        ``joint_beam`` best by the objective of :meth:`choose` evaluated on the partial set (its
        own tables, the pins, its MST: every partial set of a layer has as many tables, so they
        compare like for like). Every complete set of the last layer is recorded (best set and
        max-marginals). Then each entity's other candidates are swapped one at a time into the
        best set and recorded: a set that beats it replaces it, and every candidate gets a
        max-marginal (a lower bound of the exact one: the best set holding it that was tried).
        Evaluations ≤ Σ_i min(B, Π_{j<i} |c_j|) · |c_i| + Σ_i (|c_i| − 1) ≤ (B + 1) · n · W for
        n entities of at most W candidates and beam B: linear in the entities, where the exact
        choice is W^n.

        ``cands``: each entity's candidates ``(table, score)``; ``key_of(combo)`` the sort key of
        a (partial) set, best first; ``record(key)`` keeps a complete set's key."""
        layer: list[tuple] = [()]
        grown: list[tuple[tuple, tuple]] = []
        for cs in cands:
            grown = sorted(((key_of(part + (c,)), part + (c,)) for part in layer for c in cs), key=lambda x: x[0])
            layer = [sel for _, sel in grown[: self.settings.joint_beam]]
        seen = set()
        for key, _ in grown:
            record(key)
            seen.add(key[1])
        top = grown[0][1]
        for i, cs in enumerate(cands):
            for c in cs:
                sel = top[:i] + (c,) + top[i + 1:]
                tables = tuple(t for t, _ in sel)
                if tables not in seen:
                    seen.add(tables)
                    record(key_of(sel))
