"""Table-level view of the lake graph G_D (GRAFT Sec. 3.1) for search.

Vertices are tables; a join link carries the best-scoring column pair between two tables
(and all other pairs, for fusion), a union link carries the column mapping and whether the
two tables are row-disjoint *shards* of one source (``row_overlap`` low) or *copies*
(``row_overlap`` high). Shard clusters are the connected components of strong shard links:
GRAFT resolves unions at the homomorphism level — one intent tree may be witnessed by all
shards of a table — so search adds a table together with its shard cluster.
"""
from __future__ import annotations

import heapq
import json
import math
from dataclasses import dataclass, field

import numpy as np

from raylake.graph.disjoint import DisjointSets


@dataclass(frozen=True)
class JoinLink:
    src_table: int
    dst_table: int
    src_column: str
    dst_column: str
    score: float


@dataclass(frozen=True)
class UnionLink:
    a: int
    b: int
    score: float
    mapping: dict  # column of a -> column of b
    row_overlap: float


@dataclass
class LakeGraph:
    n_tables: int
    join: list[dict[int, list[JoinLink]]]  # t -> neighbour -> links (best first)
    union: list[dict[int, UnionLink]]  # t -> neighbour -> link
    shard_of: np.ndarray = field(default=None)  # (T,) shard-cluster id of each table
    # union links at least this strong (the index keeps ≥ 0.62) and ...; 0.62 rather than 0.7 lets
    # fully re-spelled shards (GRAFT Fig. 1) cluster. Spider, `python -m bench.retrieval --budgets 10
    # --methods raylake --limit 300`: F1 0.419 / Sufficiency 0.223 here, 0.423 / 0.233 at 0.7 (within noise)
    shard_score: float = 0.62
    max_copy_overlap: float = 0.5  # ... with less row overlap than this are shard links

    @classmethod
    def from_edges(cls, paths: list[str], edges: list[dict], **kw) -> "LakeGraph":
        pid = {p: i for i, p in enumerate(paths)}
        n = len(paths)
        join: list[dict[int, list[JoinLink]]] = [dict() for _ in range(n)]
        union: list[dict[int, UnionLink]] = [dict() for _ in range(n)]
        for e in edges:
            a, b = pid.get(e["src_table"]), pid.get(e["dst_table"])
            if a is None or b is None or a == b:
                continue
            if e["kind"] == "join":
                link = JoinLink(a, b, e["src_column"], e["dst_column"], float(e["score"]))
                join[a].setdefault(b, []).append(link)
                join[b].setdefault(a, []).append(link)
            else:
                mapping = json.loads(e["mapping"]) if e["mapping"] else {}
                ov = float(e["row_overlap"] or 0.0)
                union[a][b] = UnionLink(a, b, float(e["score"]), mapping, ov)
                union[b][a] = UnionLink(b, a, float(e["score"]), {v: k for k, v in mapping.items()}, ov)
        for t in range(n):
            for links in join[t].values():
                links.sort(key=lambda l: -l.score)
        g = cls(n, join, union, **kw)
        g.shard_of = g._shard_clusters()
        return g

    @classmethod
    def from_index(cls, index) -> "LakeGraph":
        return cls.from_edges(index.paths, index.edges)

    # ------------------------------------------------------------------ unions

    def is_shard_link(self, link: UnionLink) -> bool:
        return link.score >= self.shard_score and link.row_overlap < self.max_copy_overlap

    def _shard_clusters(self) -> np.ndarray:
        sets = DisjointSets()
        for t in range(self.n_tables):
            for u, link in self.union[t].items():
                if self.is_shard_link(link):
                    sets.union(u, t)
        return np.asarray([sets.find(t) for t in range(self.n_tables)], np.int64)

    def shards(self, t: int) -> list[int]:
        """The shard cluster of ``t`` (``t`` included), ordered."""
        c = self.shard_of[t]
        if not self.union[t]:
            return [t]
        out, todo, seen = [], [t], {t}
        while todo:
            x = todo.pop()
            out.append(x)
            for u, link in self.union[x].items():
                if u not in seen and self.shard_of[u] == c and self.is_shard_link(link):
                    seen.add(u)
                    todo.append(u)
        return sorted(out)

    # ------------------------------------------------------------------ neighbourhoods

    def join_score(self, a: int, b: int) -> float:
        links = self.join[a].get(b)
        return links[0].score if links else 0.0

    def neighbours(self, t: int, min_join: float = 0.0) -> list[tuple[int, str, float]]:
        """``(table, op, score)`` of every table one structural edge away."""
        out = [(u, "join", links[0].score) for u, links in self.join[t].items() if links[0].score >= min_join]
        out += [(u, "union", link.score) for u, link in self.union[t].items()]
        return out

    def closure(self, seeds, hops: int, min_join: float = 0.0, limit: int | None = None) -> dict[int, int]:
        """Tables within ``hops`` structural edges of ``seeds``: table → hop distance (BFS)."""
        dist = {int(s): 0 for s in seeds}
        frontier = list(dist)
        for h in range(1, hops + 1):
            nxt = []
            for t in frontier:
                for u, _, _ in self.neighbours(t, min_join):
                    if u not in dist:
                        dist[u] = h
                        nxt.append(u)
                        if limit is not None and len(dist) >= limit:
                            return dist
            frontier = nxt
        return dist

    def best_paths(self, sources, max_hops: int, min_join: float = 0.0) -> dict[int, tuple[float, list[int]]]:
        """Cheapest join path (cost Σ −log score) from any of ``sources`` to each table within ``max_hops``.

        Returns table → (cost, path of tables from a source to it, both ends included). Built
        from per-source searches, which are cached: search asks this for every prefix, and
        prefixes share most of their tables.
        """
        best: dict[int, tuple[float, list[int]]] = {}
        for s in sources:
            for t, (cost, path) in self.paths_from(int(s), max_hops, min_join).items():
                if t not in best or cost < best[t][0]:
                    best[t] = (cost, path)
        return best

    def paths_from(self, source: int, max_hops: int, min_join: float = 0.0) -> dict[int, tuple[float, list[int]]]:
        """Cheapest join path from one table to each table within ``max_hops`` links (cached).

        Dijkstra over (table, hops) states: a table popped before may still be worth expanding
        when it is popped again with fewer hops used, since the cheap path that reached it
        first may have spent the hops a farther table needs. A state is expanded only when it
        uses fewer hops than every earlier (cheaper) one of its table, so each table is
        expanded at most ``max_hops + 1`` times.
        """
        key = (source, max_hops, min_join)
        cache = self.__dict__.setdefault("_paths_cache", {})
        hit = cache.get(key)
        if hit is not None:
            return hit
        best: dict[int, tuple[float, list[int]]] = {}
        fewest: dict[int, int] = {}  # table -> fewest hops of a state of it expanded so far
        heap = [(0.0, 0, source, [source])]
        while heap:
            cost, hops, t, path = heapq.heappop(heap)
            if hops >= fewest.get(t, max_hops + 1):
                continue  # a cheaper state of t with no more hops was expanded
            fewest[t] = hops
            if t not in best:
                best[t] = (cost, path)
            if hops == max_hops:
                continue
            for u, links in self.join[t].items():
                sc = links[0].score
                if sc >= min_join and hops + 1 < fewest.get(u, max_hops + 1):
                    heapq.heappush(heap, (cost - math.log(max(sc, 1e-6)), hops + 1, u, path + [u]))
        if len(cache) > 20_000:  # bounded: a long-lived server sees many sources
            cache.clear()
        cache[key] = best
        return best

    def degree(self, t: int) -> int:
        return len(self.join[t]) + len(self.union[t])
