"""METIS partitioning of the table graph (Karypis & Kumar, 1998) via pymetis.

Tables are vertices; join and union edges, weighted by score, are the graph. Parts are
balanced by table count and cut as few strong edges as possible, so a part's actor answers
most neighbourhood queries alone (GRAFT Alg. 1 seeds trajectories per part as well).
"""
from __future__ import annotations

import numpy as np


def partition_tables(paths: list[str], edges: list[dict], n_parts: int) -> np.ndarray:
    """Part id (0..n_parts-1) of every table in ``paths`` order."""
    n = len(paths)
    if n_parts <= 1 or n <= n_parts:
        return np.zeros(n, np.int64) if n_parts <= 1 else np.arange(n, dtype=np.int64) % max(n_parts, 1)
    index = {p: i for i, p in enumerate(paths)}
    weight: dict[tuple[int, int], int] = {}
    for e in edges:
        a, b = index.get(e["src_table"]), index.get(e["dst_table"])
        if a is None or b is None or a == b:
            continue
        key = (min(a, b), max(a, b))
        weight[key] = max(weight.get(key, 0), 1 + int(round(100 * float(e["score"]))))
    adj: list[list[int]] = [[] for _ in range(n)]
    wts: list[list[int]] = [[] for _ in range(n)]
    for (a, b), w in weight.items():
        adj[a].append(b)
        wts[a].append(w)
        adj[b].append(a)
        wts[b].append(w)
    import pymetis

    xadj = np.zeros(n + 1, np.int64)
    xadj[1:] = np.cumsum([len(x) for x in adj])
    adjncy = np.fromiter((v for x in adj for v in x), np.int64, count=int(xadj[-1]))
    eweights = np.fromiter((w for x in wts for w in x), np.int64, count=int(xadj[-1]))
    if len(adjncy) == 0:
        return np.arange(n, dtype=np.int64) % n_parts
    _, membership = pymetis.part_graph(n_parts, xadj=xadj, adjncy=adjncy, eweights=eweights)
    return np.asarray(membership, np.int64)
