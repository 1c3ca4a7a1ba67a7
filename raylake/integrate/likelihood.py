"""The join likelihood graph M_J and its update between validation rounds (EcoTable Sec. 4.1–4.2).

The paper weighs each table pair by a learned joinability probability
p(e_ij) = max over column pairs (C, C') of M_J(C, C'). This slice takes the index's own
joinability scores as p (:mod:`raylake.index.joins`: value containment, header names and
embeddings, key-likeness, disjointness, in (0, 1]) — no learned calibration yet — and the
maximum over column pairs is the best link the lake graph already keeps first for every
table pair (:class:`raylake.graph.LakeGraph`). So M_J *is* the lake graph's join layer;
there is no second graph structure. An edge's Steiner weight is −log p, the cost the graph
core's shortest paths (:meth:`LakeGraph.paths_from`) already use.

UpdateGraph (Algorithm 1, line 4): an edge validated as joinable gets p = 1 (cost 0, so later
trees reuse it for free and it is never validated twice), on the column pair the judge
confirmed; an edge judged not joinable is removed. The base graph is never changed: each
round builds a new :class:`LakeGraph` (whose path cache then starts empty, as it must).
"""
from __future__ import annotations

from raylake.graph import JoinLink, LakeGraph


def edge_key(a: int, b: int) -> tuple[int, int]:
    """An undirected table pair as one key (smaller id first)."""
    return (a, b) if a < b else (b, a)


def columns_of(link: JoinLink, a: int) -> tuple[str, str]:
    """``(column of a, column of the other table)`` of a join link, whichever way it is stored."""
    return (link.src_column, link.dst_column) if link.src_table == a else (link.dst_column, link.src_column)


def join_p(graph: LakeGraph, a: int, b: int) -> float:
    """p(e_ab): the best join score between two tables (0 when the graph has no link)."""
    return graph.join_score(a, b)


def updated_graph(base: LakeGraph, verdicts: dict) -> LakeGraph:
    """G_u: ``base`` with every validated edge at p = 1 on its confirmed columns and every rejected edge removed.

    ``verdicts`` maps :func:`edge_key` pairs to objects with ``valid``, ``a_column``, ``b_column``
    (the column of the pair's first table, then of its second).
    """
    join = [dict(adj) for adj in base.join]
    for (a, b), v in verdicts.items():
        if v.valid:
            link = JoinLink(a, b, v.a_column, v.b_column, 1.0)
            join[a][b] = [link]
            join[b][a] = [link]
        else:
            join[a].pop(b, None)
            join[b].pop(a, None)
    g = LakeGraph(base.n_tables, join, base.union, shard_score=base.shard_score, max_copy_overlap=base.max_copy_overlap)
    g.shard_of = base.shard_of
    return g
