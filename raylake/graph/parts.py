"""The lake graph served part by part: one Ray actor per METIS part.

The index cuts the table graph into METIS parts (:mod:`raylake.index.partition`); a
:class:`PartServer` actor holds the adjacency of one part's tables — their join and union
neighbours, inside the part or across the cut — and answers neighbourhood queries for them.
:class:`PartitionedGraph` runs GRAFT Alg. 3's Stage 1 over the actors: the h-hop closure
of the anchors V₀ expands frontier by frontier, and each hop sends one batched query to each
part that owns a frontier table (the calls of a hop run in parallel). On a cluster the parts
live on different nodes; the driver never loads the whole edge list.

The in-process :class:`~raylake.graph.LakeGraph` gives identical answers (a test checks it);
it stays the default on one machine, where a remote call costs more than the lookup.
"""
from __future__ import annotations

import numpy as np


class PartServer:
    """Adjacency of one part's tables: table → [(neighbour, op, score)] (the body of the actor)."""

    def __init__(self, part: int, adjacency: dict[int, list[tuple[int, str, float]]]):
        self.part = part
        self.adj = adjacency

    def neighbours(self, tables: list[int], min_join: float = 0.0) -> dict[int, list[tuple[int, str, float]]]:
        return {t: [x for x in self.adj.get(t, ()) if x[1] != "join" or x[2] >= min_join] for t in tables}

    def size(self) -> int:
        return len(self.adj)


class PartitionedGraph:
    """Region queries over one :class:`PartServer` actor per part."""

    def __init__(self, graph, part_of: np.ndarray):
        from raylake.runtime import start_ray

        ray = start_ray()
        self.part_of = np.asarray(part_of, np.int64)
        actor_cls = ray.remote(num_cpus=0)(PartServer)  # lookups, not compute: do not hold a CPU
        self.actors = {}
        for p in np.unique(self.part_of).tolist():
            tables = np.flatnonzero(self.part_of == p).tolist()
            adjacency = {t: graph.neighbours(t) for t in tables}
            self.actors[p] = actor_cls.remote(int(p), adjacency)

    @classmethod
    def from_index(cls, index) -> "PartitionedGraph":
        return cls(index.graph, np.asarray(index.tables["part"]))

    def closure(self, seeds, hops: int, min_join: float = 0.0) -> dict[int, int]:
        """Tables within ``hops`` structural edges of ``seeds``: table → hop distance."""
        import ray

        dist = {int(s): 0 for s in seeds}
        frontier = list(dist)
        for h in range(1, hops + 1):
            by_part: dict[int, list[int]] = {}
            for t in frontier:
                by_part.setdefault(int(self.part_of[t]), []).append(t)
            replies = ray.get([self.actors[p].neighbours.remote(ts, min_join) for p, ts in by_part.items()])
            nxt = []
            for reply in replies:
                for t in sorted(reply):
                    for u, _, _ in reply[t]:
                        if u not in dist:
                            dist[u] = h
                            nxt.append(u)
            frontier = nxt
        return dist

    def close(self) -> None:
        import ray

        for a in self.actors.values():
            ray.kill(a)
        self.actors = {}
