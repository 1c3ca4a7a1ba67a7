"""GRAFT Algorithm 3: online search by anchor reachability, admissible beam search, lazy reranking.

Stage 1 — anchor reachability (lines 1–5): the top-K tables of every node atom form V₀.
The candidate region is the (L−1)-hop structural closure of V₀; it is never materialised,
because every action below starts from an anchor or from a table one edge from the plan.

Stage 2 — beam search of width B (lines 6–17). An action adds a table *cluster* (a table
and its union shards: one intent tree may be witnessed by several shards, Sec. 3.1) to a
prefix Φ, attached by a join or union edge to a table already in Φ. It is admissible when
the new table lies in R_h(a_j) — within h join hops of an anchor of an atom a_j that Φ
does not yet support (ψ < ``supported``). Our choice where the paper is terse: an action
may also reach an anchor of an unsupported atom through up to h−1 *bridge* tables (the
cheapest join path, cost Σ −log ω), added in one move. A bridge alone supports almost no
atom, so a one-table beam would prune it before the table it leads to could pay; the
composite action is scored by the IGMS gain of the whole path. Actions are scored by the
value network Q when one is given, otherwise by the exact IGMS marginal gain (incremental
Cholesky state, :class:`raylake.reward.IGMSState`).

Stopping: an action adding k clusters is taken only if its gain is at least k·λ
(``SearchConfig.min_gain``); a prefix with no such action is final. The best plan maximises
U − λ·(clusters in Φ), so it has at most L tables and is not padded to L (Stage 4 then adds
the extractor's chosen tables whatever their gain). λ is charged per cluster, not per
table: the shards of one source add completeness that a per-table charge would price out,
since their rows are largely redundant with the first shard's.

Stage 3 — lazy reranking (lines 18–31): every prefix of every beam goes into a max-queue
keyed by its upper bound (the beam score); a popped prefix is evaluated exactly by
rebuilding its IGMS state from scratch, and the loop stops when the top bound falls
below the best confirmed score (Minoux). With the IGMS scorer the beam score is already
exact, so the queue confirms the leader at once; with Q it does the real work.

Stage 4 — completion (ours; an LLM's intent graph names no tables, so this reads the
offline extractor's): that extractor chooses one table per intent tree jointly over the lake
graph (:mod:`raylake.intent.offline`; the tree's evidence), and the beam often stops short of
them, because a table that supports one or two atoms of a long question gains less than λ.
Each chosen table the plan lacks (none of its shards in it) joins the plan when one join
link attaches it to a plan table, whatever its gain: the strongest such link first, so a
table reaches the plan through the table it is keyed to rather than a chance overlap; with
its shards, within L (role ``intent``). On 300 Spider tuning questions (``python -m
bench.retrieval --budgets 5 10 15 --methods raylake --limit 300``) F1 0.500 / 0.496 / 0.488 →
0.513 / 0.509 / 0.501 and Sufficiency 0.293 / 0.310 / 0.357 → 0.363 / 0.410 / 0.470 at L = 5
/ 10 / 15. At L = 10: the chosen tables of named trees only, 0.506 / 0.383; in tree order
instead of the strongest link first, 0.510 / 0.410 (but the example lake's club then joins
its points shards through a chance link before player, the table it is keyed to, joins);
through two-link bridge paths too, 0.506 / 0.410; each tree's second table too, 0.481 /
0.437. All 1,701 questions (the full ``bench.retrieval`` run at b9a0047): F1 0.482 / 0.479 /
0.470 → 0.495 / 0.490 / 0.481, Sufficiency 0.282 / 0.302 / 0.327 → 0.359 / 0.403 / 0.437.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from raylake.config import IGMSConfig, SearchConfig
from raylake.reward import IGMSState, igms_value
from raylake.search.plan import Plan, Step
from raylake.search.support import Support, jaccard


@dataclass
class Prefix:
    clusters: list[list[int]]
    steps: list[Step]
    state: IGMSState
    colsets: list[frozenset]
    tree_sup: list[dict]
    links: list[tuple[int, int, float]]  # (cluster, parent cluster, join score) in the plan tree
    covered: np.ndarray  # best support per atom so far
    rows: list = field(default_factory=list)  # unit rows of M, in insertion order
    score: float = 0.0  # U − λ·|Φ|
    tables: set = field(default_factory=set)

    @property
    def value(self) -> float:
        return self.state.value

    @property
    def n_tables(self) -> int:
        return sum(len(c) for c in self.clusters)


class BeamSearch:
    def __init__(self, graph, support: Support, cfg: SearchConfig, igms: IGMSConfig, scorer=None, region=None):
        self.g = graph
        self.sup = support
        self.cfg = cfg
        self.igms = igms
        self.scorer = scorer  # optional learned value network: scorer.rank(children, support) -> children best-first
        self.lam = cfg.min_gain
        self.region = region or graph  # .closure(seeds, hops): in process, or the part actors (raylake.graph.parts)
        self.anchors = support.anchors(cfg.top_k)
        self.evaluations = 0
        self._reach: dict[int, dict[int, int]] = {}

    # ------------------------------------------------------------------ plumbing

    def new_prefix(self) -> Prefix:
        """The empty plan: no tables, IGMS state over this question's atoms."""
        return Prefix([], [], IGMSState(self.sup.a, self.igms.sigma0_sq, capacity=2 * self.cfg.budget + 4), [], [], [], np.zeros(self.sup.a))

    def _copy(self, p: Prefix) -> Prefix:
        return Prefix(list(p.clusters), list(p.steps), p.state.copy(), list(p.colsets), list(p.tree_sup), list(p.links), p.covered.copy(), list(p.rows), p.score, set(p.tables))

    def _add_unit(self, p: Prefix, row: np.ndarray, colset: frozenset) -> float:
        c = np.array([jaccard(colset, cs) for cs in p.colsets]) if p.colsets else None
        gain = p.state.add(row, c)
        p.colsets.append(colset)
        p.rows.append(row)
        np.maximum(p.covered, row, out=p.covered)
        return gain

    def _path_to_all(self, p: Prefix, start: int) -> dict[int, tuple[float, int]]:
        """Plan-tree distance from cluster ``start``: cluster → (product of join scores, links)."""
        adj: dict[int, list[tuple[int, float]]] = {}
        for a, b, w in p.links:
            adj.setdefault(a, []).append((b, w))
            adj.setdefault(b, []).append((a, w))
        out = {start: (1.0, 0)}
        todo = [start]
        while todo:
            x = todo.pop()
            for y, w in adj.get(x, ()):
                if y not in out:
                    out[y] = (out[x][0] * w, out[x][1] + 1)
                    todo.append(y)
        return out

    def _attach(self, p: Prefix, cluster: list[int], step: Step, parent_cluster: int | None, join_score: float) -> float:
        """Append one cluster (table unit, then its join unit) and its step; returns the gain."""
        row = self.sup.table_row(cluster)
        if parent_cluster is not None and self.igms.attach_discount:
            row = row * join_score ** self.igms.attach_discount  # evidence reached over a doubtful edge counts less
        gain = self._add_unit(p, row, self.sup.colset(cluster))
        side = self.sup.tree_support(cluster)
        k = len(p.clusters)
        p.clusters.append(cluster)
        p.tree_sup.append(side)
        p.tables.update(cluster)
        if parent_cluster is not None and step.op == "join":
            p.links.append((k, parent_cluster, join_score))
            dist = self._path_to_all(p, k)
            others = [(p.tree_sup[j], dist[j][0], dist[j][1]) for j in range(k) if j in dist]
            row = self.sup.join_row(side, others)
            if row.any():
                gain += self._add_unit(p, row, frozenset(self._key_names(step)))
        elif parent_cluster is not None:
            p.links.append((k, parent_cluster, join_score))
        p.steps.append(step)
        placed = [cluster[0]]
        todo = list(cluster[1:])
        while todo:  # attach each shard to an already placed member it has a direct union link to
            t, a = next(((t, a) for t in todo for a in placed if a in self.g.union[t]), (todo[0], placed[0]))
            link = self.g.union[t].get(a)  # mapping: column of t -> column of a (new -> anchor)
            p.steps.append(Step("union", t, a, None, dict(link.mapping) if link else None, link.score if link else 0.0, 0.0, "union shard"))
            placed.append(t)
            todo.remove(t)
        return gain

    def _key_names(self, step: Step) -> list[str]:
        from raylake.index.profile import norm_name

        return [norm_name(k) for k in (step.keys or ())]

    # ------------------------------------------------------------------ actions

    def reachable(self, atom: int) -> dict[int, int]:
        """R_h(a_j): tables within h join hops of an anchor of atom j (cached per atom)."""
        if atom not in self._reach:
            self._reach[atom] = self.region.closure(self.anchors.get(atom, []), self.cfg.hops)
        return self._reach[atom]

    def _unsupported(self, p: Prefix) -> list[int]:
        return [j for j in self.anchors if p.covered[j] < self.cfg.supported and self.anchors[j]]

    def actions(self, p: Prefix) -> list[tuple]:
        """Admissible actions: (path of (anchor, new, op, link) hops, cluster per hop)."""
        budget_left = self.cfg.budget - p.n_tables
        if budget_left <= 0:
            return []
        if not p.clusters:
            starts = {t for ts in self.anchors.values() for t in ts}
            return [((None, t, "start", None),) for t in sorted(starts)]
        unsup = self._unsupported(p)
        if not unsup:
            return []
        admissible: set[int] = set()
        for j in unsup:
            admissible.update(self.reachable(j))
        actions = []
        seen = set()
        for t in p.tables:
            for u, links in self.g.join[t].items():
                if u in p.tables or u not in admissible or u in seen:
                    continue
                seen.add(u)
                actions.append(((t, u, "join", links[0]),))
            for u, link in self.g.union[t].items():
                if u in p.tables or u in seen or self.g.is_shard_link(link) or u not in admissible:
                    continue
                seen.add(u)
                actions.append(((t, u, "union", link),))
        # bridge paths to anchors of unsupported atoms
        if self.cfg.hops >= 2:
            paths = self.g.best_paths(p.tables, self.cfg.hops, self.cfg.min_join)
            targets = {t for j in unsup for t in self.anchors[j][:3]}
            for t in targets:
                if t in p.tables or t not in paths:
                    continue
                _, path = paths[t]
                if len(path) <= 2:
                    if t not in seen:
                        seen.add(t)
                        actions.append(((path[0], t, "join", self.g.join[path[0]][t][0]),))
                    continue
                hops = tuple((a, b, "join", self.g.join[a][b][0]) for a, b in zip(path, path[1:]))
                actions.append(hops)
        return actions

    def _screen(self, p: Prefix, actions: list[tuple], keep: int) -> list[tuple]:
        """Keep the ``keep`` actions whose new (last) table has the best batched IGMS gain.

        One call of the batched kernel scores every candidate's table unit against the
        prefix; the exact evaluation (table unit, join unit, shards) then runs on the few.
        """
        rows, covs = [], []
        for action in actions:
            _, new, op, link = action[-1]
            cluster = [new] + [t for t in self.g.shards(new) if t != new and t not in p.tables]
            row = self.sup.table_row(cluster)
            if op != "start" and self.igms.attach_discount:
                row = row * link.score ** self.igms.attach_discount
            rows.append(row)
            cs = self.sup.colset(cluster)
            covs.append([jaccard(cs, other) for other in p.colsets])
        Mb = np.asarray(rows)
        Cb = np.asarray(covs, dtype=float).reshape(len(actions), len(p.colsets)) if p.colsets else None
        gains = p.state.gains(Mb, Cb)
        order = np.argsort(-gains, kind="stable")[:keep]
        return [actions[i] for i in sorted(order)]

    def apply(self, p: Prefix, action: tuple, within: set | None = None) -> tuple[Prefix, float, int] | None:
        """``p`` extended by ``action`` (of :meth:`actions`): (new prefix, IGMS gain, tables added),
        or None when the action no longer fits; ``p`` itself is unchanged. Each new table brings its
        shards, only those in ``within`` when given."""
        q = self._copy(p)
        gain, added = 0.0, 0
        for i, (anchor, new, op, link) in enumerate(action):
            if new in q.tables:
                return None
            cluster = [t for t in self.g.shards(new) if t not in q.tables and (within is None or t in within)]
            if new not in cluster:
                cluster = [new] + cluster
            else:
                cluster = [new] + [t for t in cluster if t != new]
            added += 1  # a shard cluster is one logical table (Sec. 3.1): it pays λ once
            if q.n_tables + len(cluster) > self.cfg.budget:
                return None
            if op == "start":
                step = Step("start", new, None, None, None, 0.0, 0.0, "anchor")
                gain += self._attach(q, cluster, step, None, 0.0)
            else:
                parent = next(k for k, c in enumerate(q.clusters) if anchor in c)
                if op == "join":
                    keys = (link.src_column, link.dst_column) if link.src_table == anchor else (link.dst_column, link.src_column)
                    step = Step("join", new, anchor, keys, None, link.score, 0.0, "bridge" if i < len(action) - 1 else "joined")
                    gain += self._attach(q, cluster, step, parent, link.score)
                else:
                    step = Step("union", new, anchor, None, {v: k for k, v in link.mapping.items()}, link.score, 0.0, "joined")
                    gain += self._attach(q, cluster, step, parent, link.score)
        last = action[-1][1]
        next(s for s in reversed(q.steps) if s.new == last).gain = gain
        self.evaluations += 1
        q.score = q.value - self.lam * len(q.clusters)
        return q, gain, added

    # ------------------------------------------------------------------ search

    def run(self) -> Plan:
        beam = [self.new_prefix()]
        pool: list[Prefix] = []
        for _depth in range(self.cfg.budget):
            children: dict[frozenset, Prefix] = {}
            for p in beam:
                extended = False
                actions = self.actions(p)
                keep = self.cfg.screen * self.cfg.beam
                if len(actions) > keep:
                    actions = self._screen(p, actions, keep)
                for action in actions:
                    res = self.apply(p, action)
                    if res is None:
                        continue
                    q, gain, added = res
                    if gain < self.lam * added:
                        continue
                    key = frozenset(q.tables)
                    if key not in children or children[key].score < q.score:
                        children[key] = q
                    extended = True
                if not extended:  # final: no action pays λ
                    pool.append(p)
            if not children:
                break
            ranked = sorted(children.values(), key=lambda q: -q.score)
            if self.scorer is not None:
                ranked = self.scorer.rank(ranked, self.sup)
            beam = ranked[: self.cfg.beam]
            pool.extend(beam)
        best = self._rerank(pool)
        if best is None:
            return Plan([], 0.0)
        best = self._complete(best)
        return Plan(best.steps, float(best.value))

    def _rerank(self, pool: list[Prefix]) -> Prefix | None:
        """Stage 3: Minoux-style lazy queue over the shortlist, exact IGMS from scratch."""
        import heapq

        pool = [p for p in pool if p.clusters]
        if not pool:
            return None
        heap = [(-p.score, i) for i, p in enumerate(pool)]
        heapq.heapify(heap)
        best, best_score = None, -math.inf
        while heap:
            neg_bound, i = heapq.heappop(heap)
            if -neg_bound < best_score:
                break
            p = pool[i]
            exact = self._exact(p) - self.lam * len(p.clusters)
            if exact > best_score:
                best, best_score = p, exact
        return best

    def _complete(self, p: Prefix) -> Prefix:
        """Stage 4 (ours): the tables the extractor chose for the intent's trees that the plan
        lacks (none of their shards in it) join it, whatever their IGMS gain, when one join
        link attaches them — the strongest link first, so a table reaches the plan through the
        table it is keyed to rather than a chance overlap; each with its shards, within L."""
        def missing(ts, p):
            return [t for t in ts if not any(u in p.tables for u in self.g.shards(t))]

        todo = missing(self.sup.intent_tables(), p)
        while todo:
            links = [(self.g.join[a][t][0], a, t) for t in todo for a in sorted(p.tables) if t in self.g.join[a]]
            if not links:
                break
            link, anchor, t = max(links, key=lambda x: (x[0].score, -x[2], -x[1]))
            todo.remove(t)
            res = self.apply(p, ((anchor, t, "join", link),))
            if res is None:
                continue  # its shards would pass the budget
            p = res[0]
            next(s for s in p.steps if s.new == t).role = "intent"
            todo = missing(todo, p)
        return p

    def connect(self, tables: list[int]) -> Plan:
        """A plan over ``tables`` (best first), joined as the lake graph allows.

        The learned completion (:mod:`raylake.relevance`) decides *which* tables a question
        gets; this decides *how* they fuse. The first table starts the plan; then, repeatedly,
        the table with the strongest join link to the plan joins it; a table with no direct
        link joins through the cheapest bridge path of at most ``hops`` links (its interior
        tables role ``bridge``). A table no path reaches, or whose step would pass the budget,
        is left out: a plan is one connected join tree, which fusion needs. A table brings
        only those of its shards that are in ``tables`` (they are unioned to it):
        the index's shard clusters over-merge tables of a generic schema
        (:mod:`raylake.relevance.select`), so the caller's choice decides, and the first table
        always starts the plan however large its cluster.
        """
        p = self.new_prefix()
        todo = [int(t) for t in dict.fromkeys(tables)]
        within = set(todo)
        while todo:
            todo = [t for t in todo if t not in p.tables]
            if not todo:
                break
            action = self._connect_action(p, todo)
            if action is None:  # none of the rest can be joined to the plan: fusion could not use them
                break
            res = self.apply(p, action, within)
            if res is None and not p.steps:  # the first table's chosen shards pass the budget: it alone
                res = self.apply(p, action, {action[-1][1]})
            if res is None:  # past the budget: drop this table
                todo.remove(action[-1][1])
                continue
            p = res[0]
        return Plan(p.steps, float(self._exact(p)) if p.rows else 0.0)

    def _connect_action(self, p: Prefix, todo: list[int]) -> tuple:
        if p.clusters:
            links = [(self.g.join[a][t][0], a, t) for t in todo for a in sorted(p.tables) if t in self.g.join[a]]
            if links:
                link, a, t = max(links, key=lambda x: (x[0].score, -todo.index(x[2]), -x[1]))
                return ((a, t, "join", link),)
            paths = self.g.best_paths(p.tables, self.cfg.hops, self.cfg.min_join)
            reach = [(paths[t][0], todo.index(t), t) for t in todo if t in paths]
            if reach:
                path = paths[min(reach)[2]][1]
                return tuple((a, b, "join", self.g.join[a][b][0]) for a, b in zip(path, path[1:]))
            return None
        return ((None, todo[0], "start", None),)

    def _exact(self, p: Prefix) -> float:
        """U of a prefix recomputed from scratch from its units (Eq. 6)."""
        n = len(p.rows)
        C = np.eye(n) * (1.0 + self.igms.sigma0_sq)
        for i in range(n):
            for j in range(i):
                C[i, j] = C[j, i] = jaccard(p.colsets[i], p.colsets[j])
        return igms_value(np.asarray(p.rows), C)
