"""Cross-tree joins: the named entities chained over the lake's cheapest join paths, with bridges.

Step 4 of the package docstring (:mod:`raylake.intent.offline`). A question relates what it
names, so the trees with a chosen table are joined by a spanning tree over the lake's
cheapest join paths between their tables (question order breaking ties). A table inside such
a path that no tree names becomes a *bridge* tree (GRAFT, Appendix A, rule 3: a bridge entity
the question never mentions connects two named ones) — if it maps one key to another through
strong links (:func:`bridge_ok`). Each join records its lake link as evidence.
"""
from __future__ import annotations

from raylake.intent.model import Attribute, Join
from raylake.intent.offline.forest import Forest, attribute_on
from raylake.config import IntentConfig


def joins(forest: Forest, settings: IntentConfig) -> list[Join]:
    """Cross-tree joins: a spanning tree of the named entities over cheapest lake join paths;
    a table on such a path that no tree names becomes a bridge tree (Appendix A, rule 3)."""
    idx, graph = forest.index, forest.index.graph
    trees, tree_table, tree_start = forest.trees, forest.table, forest.start
    named = [k for k in range(len(trees)) if tree_table[k] is not None]
    if len(named) < 2:
        return []
    paths = {k: graph.best_paths([tree_table[k]], max_hops=settings.max_bridge_hops + 1, min_join=settings.min_join) for k in named}
    # Prim over path costs, question order breaking ties; unreachable pairs cost +inf
    inside, edges = [min(named, key=lambda k: tree_start[k])], []
    while len(inside) < len(named):
        best = None
        for a in inside:
            for b in named:
                if b in inside:
                    continue
                hit = paths[a].get(tree_table[b])
                cost = hit[0] if hit else float("inf")
                key = (cost, abs(tree_start[a] - tree_start[b]), tree_start[b])
                if best is None or key < best[0]:
                    best = (key, a, b, hit[1] if hit else None)
        _, a, b, path = best
        if path is not None and not bridge_ok(graph, path, settings.min_bridge):
            path = None
        inside.append(b)
        edges.append((a, b, path))
    owner = {tree_table[k]: k for k in named}
    out: list[Join] = []
    key_attr: dict[tuple[int, str], Attribute] = {}

    def key_of(k: int, t: int, column: str) -> Attribute:
        if (k, column) not in key_attr:
            c = idx.col_index.get((idx.paths[t], column))
            words = idx.columns["words"][c] if c is not None else column
            existing = attribute_on(trees[k], idx.paths[t], column)
            key_attr[(k, column)] = existing or forest.add_attr(k, words, [(c, 1.0)] if c is not None else [], "", extra={"implied": True, "role": "key"})
        return key_attr[(k, column)]

    for a, b, path in edges:
        if path is None:
            ka = trees[a].attributes[0] if trees[a].attributes else forest.add_attr(a, "id", [], "", extra={"implied": True, "role": "key"})
            kb = trees[b].attributes[0] if trees[b].attributes else forest.add_attr(b, "id", [], "", extra={"implied": True, "role": "key"})
            out.append(Join(trees[a].tree_id, ka.attribute_id, trees[b].tree_id, kb.attribute_id,
                            {"words": f"{trees[a].entity} … {trees[b].entity}", "reason": "the question relates them; no join path in the lake"}))
            continue
        hops = [a] + [owner.get(t) for t in path[1:-1]] + [b]
        for i, t in enumerate(path[1:-1], start=1):
            if hops[i] is None:
                hops[i] = forest.implied_tree(t, "", f"bridge between {trees[a].entity!r} and {trees[b].entity!r}")
                owner[t] = hops[i]
        for (x, tx), (y, ty) in zip(zip(hops, path), zip(hops[1:], path[1:])):
            link = graph.join[tx][ty][0]
            cx, cy = (link.src_column, link.dst_column) if link.src_table == tx else (link.dst_column, link.src_column)
            ax, ay = key_of(x, tx, cx), key_of(y, ty, cy)
            out.append(Join(trees[x].tree_id, ax.attribute_id, trees[y].tree_id, ay.attribute_id, {
                "words": f"{trees[x].entity} … {trees[y].entity}",
                "lake": [idx.paths[tx], cx, idx.paths[ty], cy, round(link.score, 3)],
                "reason": "bridge" if len(path) > 2 else "join link"}))
    return out


def bridge_ok(graph, path: list[int], min_score: float) -> bool:
    """Is every table inside this join path a bridge: entered and left through two different
    columns (``management``: department_ID → department, head_ID → head), by links at least
    ``min_score`` strong? A path in and out through one column (the ``customer_id`` of a third
    table) relates nothing its two ends do not share themselves, and weaker links are mostly
    the lake's chance id overlaps between databases. Spider, ``python -m bench.intent_bench
    --limit 400``: entity F1 0.555 → 0.575, join F1 0.262 → 0.287 with this test at
    ``min_score`` 0.84 (entity 0.566 at 0.80, 0.571 at 0.87); bridge trees 111 (25 right) →
    32 (22 right), by a scratch tally of the extracted trees, not in ``bench/``.

    ``path``: tables linked one to the next by join links, as :meth:`LakeGraph.best_paths`
    returns them."""
    join = graph.join
    for x, y, z in zip(path, path[1:], path[2:]):
        cols = []
        for u, v in ((x, y), (y, z)):
            link = join[u][v][0]
            if link.score < min_score:
                return False
            cols.append(link.src_column if link.src_table == y else link.dst_column)
        if cols[0] == cols[1]:
            return False
    return True
