"""KMB Steiner trees over the lake graph core (raylake.integrate.steiner) on graphs whose optimum is known."""
from __future__ import annotations

import math

from raylake.graph import LakeGraph
from raylake.integrate import edge_key, steiner_tree, updated_graph
from raylake.integrate.judge import Verdict

PATHS = ["a.csv", "b.csv", "c.csv", "x.csv", "y.csv", "z.csv"]
A, B, C, X, Y, Z = range(6)


def _graph(links):
    edges = [{"kind": "join", "src_table": PATHS[s], "dst_table": PATHS[d], "src_column": "k", "dst_column": "k",
              "score": p, "mapping": None, "row_overlap": None} for s, d, p in links]
    return LakeGraph.from_edges(PATHS, edges)


def test_bridge_star_beats_direct_edges():
    # three terminals, pairwise direct links at p = 0.4, a bridge X at p = 0.9 to each: the optimum is the
    # star through X (cost 3·(−log 0.9) ≈ 0.32 against 2·(−log 0.4) ≈ 1.83 for any two direct links)
    g = _graph([(A, B, 0.4), (B, C, 0.4), (A, C, 0.4), (A, X, 0.9), (B, X, 0.9), (C, X, 0.9), (X, Y, 0.95)])
    tree = steiner_tree(g, [A, B, C])
    assert tree.edges == sorted([edge_key(A, X), edge_key(B, X), edge_key(C, X)])
    assert tree.nodes == [A, B, C, X]  # terminals first, then the bridge; Y (a dead-end leaf) is not in it
    assert math.isclose(tree.cost, -3 * math.log(0.9))
    assert tree.unreached == []


def test_unreachable_terminal_and_hop_limit():
    g = _graph([(A, X, 0.9), (X, Y, 0.9), (Y, B, 0.9)])  # A–B only through 3 links; C isolated
    tree = steiner_tree(g, [A, B, C], max_hops=5)
    assert tree.edges == sorted([edge_key(A, X), edge_key(X, Y), edge_key(Y, B)])
    assert tree.unreached == [C]
    short = steiner_tree(g, [A, B], max_hops=2)  # the path is longer than the limit: no tree joins them
    assert short.edges == [] and short.nodes == [A] and short.unreached == [B]


def test_min_join_cuts_weak_links_and_single_terminal():
    g = _graph([(A, B, 0.2), (A, X, 0.8), (X, B, 0.8)])
    assert steiner_tree(g, [A, B], min_join=0.3).edges == sorted([edge_key(A, X), edge_key(X, B)])
    one = steiner_tree(g, [B])
    assert one.nodes == [B] and one.edges == [] and one.cost == 0.0


def test_updated_graph_frees_valid_edges_and_removes_invalid_ones():
    g = _graph([(A, B, 0.5), (A, X, 0.6), (X, B, 0.6), (A, Z, 0.3), (Z, B, 0.3)])
    assert steiner_tree(g, [A, B]).edges == [edge_key(A, B)]
    gu = updated_graph(g, {edge_key(A, B): Verdict(False), edge_key(A, Z): Verdict(True, "k", "k"),
                           edge_key(B, Z): Verdict(True, "k", "k")})
    assert gu.join_score(A, B) == 0.0 and g.join_score(A, B) == 0.5  # the base graph is unchanged
    tree = steiner_tree(gu, [A, B])  # validated (p = 1, cost 0) beats the unvalidated 0.6 path
    assert tree.edges == sorted([edge_key(A, Z), edge_key(B, Z)]) and tree.cost == 0.0
