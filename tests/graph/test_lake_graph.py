"""Hop-limited best join paths of the lake graph (``LakeGraph.paths_from`` / ``best_paths``)."""
from __future__ import annotations

import itertools
import math
import random

from raylake.graph.lake_graph import LakeGraph


def _graph(names: list[str], scores: dict[tuple[str, str], float]) -> LakeGraph:
    edges = [{"kind": "join", "src_table": a, "src_column": "k", "dst_table": b, "dst_column": "k", "score": s}
             for (a, b), s in scores.items()]
    return LakeGraph.from_edges(names, edges)


def _brute_force(g: LakeGraph, source: int, max_hops: int, min_join: float) -> dict[int, float]:
    """Cheapest cost to every table over all simple join paths of at most ``max_hops`` links."""
    best = {source: 0.0}
    stack = [(source, 0.0, (source,))]
    while stack:
        t, cost, path = stack.pop()
        if len(path) - 1 == max_hops:
            continue
        for u, links in g.join[t].items():
            if u in path or links[0].score < min_join:
                continue
            c = cost - math.log(max(links[0].score, 1e-6))
            best[u] = min(best.get(u, math.inf), c)
            stack.append((u, c, path + (u,)))
    return best


def test_a_table_reached_cheaply_at_the_hop_limit_is_still_expanded_by_a_shorter_path():
    # s–x–t costs −2·log 0.99 ≈ 0.02, less than the direct s–t (−log 0.5 ≈ 0.69), but it spends
    # both hops; u lies beyond t, and only s–t–u reaches it within two
    g = _graph(["s", "t", "x", "u"], {("s", "t"): 0.5, ("s", "x"): 0.99, ("x", "t"): 0.99, ("t", "u"): 0.9})
    s, t, x, u = range(4)
    got = g.paths_from(s, max_hops=2)
    assert got[t][1] == [s, x, t]  # t's best path is still the cheap one
    assert u in got and got[u][1] == [s, t, u]
    assert math.isclose(got[u][0], -math.log(0.5) - math.log(0.9))
    assert u not in g.paths_from(s, max_hops=1)
    assert u in g.best_paths([s], max_hops=2)


def test_paths_are_the_cheapest_within_the_hop_limit_on_random_graphs():
    rng = random.Random(7)
    for trial in range(40):
        n = rng.randint(4, 9)
        names = [f"t{i}" for i in range(n)]
        scores = {(a, b): round(rng.uniform(0.3, 1.0), 3)
                  for a, b in itertools.combinations(names, 2) if rng.random() < 0.4}
        g = _graph(names, scores)
        for source, hops, min_join in ((0, 1, 0.0), (0, 2, 0.0), (1, 3, 0.0), (2, 2, 0.6)):
            if source >= n:
                continue
            want = _brute_force(g, source, hops, min_join)
            got = g.paths_from(source, hops, min_join)
            assert set(got) == set(want), (trial, source, hops)
            for t, (cost, path) in got.items():
                assert math.isclose(cost, want[t], abs_tol=1e-9), (trial, t)
                assert path[0] == source and path[-1] == t and len(path) - 1 <= hops
                links = [g.join_score(a, b) for a, b in zip(path, path[1:])]
                assert all(sc >= min_join for sc in links)
                assert math.isclose(cost, -sum(math.log(sc) for sc in links), abs_tol=1e-9)


def test_search_min_join_keeps_every_link_a_default_index_stores(example_index):
    # search walked every stored link (min_join 0.0) before min_join became one config field at
    # the index's join_threshold: the same paths only while no stored link scores below it
    from raylake.config import IndexConfig, SearchConfig
    from raylake.index.reader import LakeIndex

    g = LakeIndex.load(example_index).graph
    scores = [l.score for t in range(g.n_tables) for links in g.join[t].values() for l in links]
    assert scores and min(scores) >= IndexConfig().join_threshold >= SearchConfig().min_join
    for s in range(g.n_tables):
        assert g.paths_from(s, 2, SearchConfig().min_join) == g.paths_from(s, 2, 0.0)
