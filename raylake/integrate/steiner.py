"""Steiner trees over the lake graph: the KMB 2-approximation (Kou, Markowsky and Berman 1981; EcoTable Sec. 4.1).

EcoTable's join path for a question is the tree of highest joinability Π p(e) that connects
its tables, bridges allowed: a minimum Steiner tree under weights w(e) = −log p(e). KMB:

1. the metric closure over the terminals: the cheapest path between every two terminals
   (:meth:`LakeGraph.paths_from`, Dijkstra on −log p, at most ``max_hops`` links, links
   below ``min_join`` ignored — the paper's 5-hop limit and p < 0.3 cut);
2. a minimum spanning tree of that closure (Kruskal, :class:`raylake.graph.DisjointSets`);
3. every closure edge replaced by its path; a minimum spanning tree of the union of the paths;
4. non-terminal leaves pruned until none is left.

The tree costs at most 2(1 − 1/ℓ) times the optimum (ℓ leaves). Terminals the lake does not
connect within the hop limit cannot be in one tree: the tree spans the connected group with
the most terminals (ties: the group of the earliest terminal, the caller's most likely
table), and the others are returned as ``unreached``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from raylake.graph import DisjointSets, LakeGraph
from raylake.integrate.likelihood import edge_key


@dataclass
class SteinerTree:
    nodes: list[int] = field(default_factory=list)  # terminals first (in the caller's order), then bridges
    edges: list[tuple[int, int]] = field(default_factory=list)  # edge_key pairs
    cost: float = 0.0  # Σ −log p over the edges
    unreached: list[int] = field(default_factory=list)  # terminals outside the tree's connected group


def _cost(graph: LakeGraph, a: int, b: int) -> float:
    return -math.log(max(graph.join_score(a, b), 1e-6))


def _kruskal(weighted: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    sets, out = DisjointSets(), []
    for w, a, b in sorted(weighted):
        if sets.find(a) != sets.find(b):
            sets.union(a, b)
            out.append((w, a, b))
    return out


def steiner_tree(graph: LakeGraph, terminals, max_hops: int = 5, min_join: float = 0.0) -> SteinerTree:
    """The KMB Steiner tree of ``terminals`` (table ids, most likely first) in ``graph``."""
    terms = list(dict.fromkeys(int(t) for t in terminals))
    if not terms:
        return SteinerTree()
    # 1-2: metric closure over the terminals and its minimum spanning forest
    paths = {s: graph.paths_from(s, max_hops, min_join) for s in terms}
    closure = []
    for i, s in enumerate(terms):
        for t in terms[i + 1:]:
            hit = paths[s].get(t)
            if hit is not None:
                closure.append((hit[0], s, t))
    # 3: expand the closure edges into lake edges, then span them again
    expanded: dict[tuple[int, int], float] = {}
    for _, s, t in _kruskal(closure):
        path = paths[s][t][1]
        for u, v in zip(path, path[1:]):
            expanded[edge_key(u, v)] = _cost(graph, u, v)
    tree = _kruskal([(w, a, b) for (a, b), w in expanded.items()])
    # the connected group with the most terminals (ties: the earliest terminal's)
    sets = DisjointSets()
    for _, a, b in tree:
        sets.union(a, b)
    groups: dict[int, list[int]] = {}
    for t in terms:
        groups.setdefault(sets.find(t), []).append(t)
    root = max(groups, key=lambda r: (len(groups[r]), -terms.index(groups[r][0])))
    keep_terms = set(groups[root])
    edges = {edge_key(a, b): w for w, a, b in tree if sets.find(a) == root}
    # 4: prune non-terminal leaves
    while True:
        degree: dict[int, int] = {}
        for a, b in edges:
            degree[a] = degree.get(a, 0) + 1
            degree[b] = degree.get(b, 0) + 1
        leaves = {n for n, d in degree.items() if d == 1 and n not in keep_terms}
        if not leaves:
            break
        edges = {e: w for e, w in edges.items() if e[0] not in leaves and e[1] not in leaves}
    bridges = sorted({n for e in edges for n in e} - keep_terms)
    return SteinerTree(
        nodes=[t for t in terms if t in keep_terms] + bridges,
        edges=sorted(edges),
        cost=float(sum(edges.values())),
        unreached=[t for t in terms if t not in keep_terms],
    )
