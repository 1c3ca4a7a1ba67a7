"""GRAFT Algorithm 2: the canonical compression operator C: H⁺ ↦ G_I (Sec. 4.1, Stage 3).

Four deterministic graph operations on a sampled subgraph H⁺ = (V_T⁺, V_C⁺, V_V⁺, E⁺):

1. **Union-cluster merge** (line 1): connected components of V_T⁺ under union edges —
   shards of one source collapse into one intent tree.
2. **Bridge detection** (lines 2–12): a cluster's boundary bd_m are its sampled columns
   with a join edge leaving the cluster; its payload pl_m the rest. A cluster with no
   payload is a bridge (B), the others are reference clusters (R).
3. **Join abstraction** (lines 13–19): for every pair of reference clusters, the join paths
   of H⁺ between them whose interior lies in bridge clusters become one cross-tree join,
   labelled by the keys at its two ends (the first and the last edge's columns).
4. **Hierarchical projection** (lines 20–24): each reference cluster becomes an
   entity–attribute–value tree: entity = the cluster's entity word, attributes = its
   payload columns (union-aligned columns counted once), a value leaf per payload column
   with a literal in its value summary.

Our choices where Algorithm 2 is silent: the key columns named by a join are added to the
two trees as attributes (Appendix A joins link attributes, so they must exist), marked
``evidence["key"]``; when H⁺ has no reference cluster at all (every sampled column is a
key), its largest cluster is kept as the one reference cluster so G_I is never empty; of
several abstracted paths between two clusters the shortest (then strongest) gives the keys.

:func:`realises` checks the homomorphism H⁺ ⊨ C(H⁺) that makes (G_I, H⁺) a valid pair.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from raylake.graph.disjoint import DisjointSets
from raylake.intent.model import Attribute, IntentGraph, IntentTree, Join

ENTITY, ATTRIBUTE, VALUE = 0, 1, 2  # atom kinds stored in transitions
HAS_ATTRIBUTE, HAS_VALUE, JOIN = 0, 1, 2  # atom edge kinds


@dataclass
class Subgraph:
    """H⁺: sampled tables, their sampled columns, value literals and the structural edges among them."""

    tables: list[int]  # V_T⁺ in the order they were added
    columns: dict[int, list[int]]  # table -> sampled columns V_C⁺ (keys K(T) and payload P(T))
    keys: dict[int, set[int]]  # table -> K(T), its columns on join edges to the other sampled tables
    values: dict[int, str]  # column -> value literal of its summary (V_V⁺), text columns only
    joins: list[tuple[int, int, int, int, float]]  # E_⋈: (table, column, table, column, score)
    unions: list[tuple[int, int]]  # E_∪: (table, table)


@dataclass
class Compressed:
    """C(H⁺) and the homomorphism witness that goes with it."""

    intent: IntentGraph
    clusters: list[list[int]]  # union clusters T_m (tables), in order of first appearance
    bridges: list[int]  # indices into clusters: B
    refs: list[int]  # indices into clusters: R, one intent tree each (tree i ↔ refs[i])
    attr_col: dict[str, int] = field(default_factory=dict)  # attribute_id -> the column witnessing it
    join_paths: list[list[tuple[int, int, int, int]]] = field(default_factory=list)  # per intent join: edges (t, c, u, c')
    atom_kind: list[int] = field(default_factory=list)  # node atoms of intent.atoms(), in order: ENTITY/ATTRIBUTE/VALUE
    atom_ref: list[int] = field(default_factory=list)  # entity -> table, attribute/value -> column
    atom_edges: list[tuple[int, int, int]] = field(default_factory=list)  # (node i, node j, kind) between node atoms above
    # every atom of intent.atoms() (nodes and edges) in its order, for the reward kernel:
    atom_code: list[int] = field(default_factory=list)  # ENTITY/ATTRIBUTE/VALUE, or 3 + edge kind (3 has_attribute, 4 has_value, 5 join)
    atom_lake: list[int] = field(default_factory=list)  # node: its atom_ref; edge: -1
    atom_e0: list[int] = field(default_factory=list)  # edge: atom index of its first end; node: -1
    atom_e1: list[int] = field(default_factory=list)  # edge: atom index of its second end; node: -1
    atom_tree: list[int] = field(default_factory=list)  # index of the atom's tree (a join: its from tree)


def _components(tables: list[int], unions: list[tuple[int, int]]) -> list[list[int]]:
    sets, members = DisjointSets(), set(tables)
    for a, b in unions:
        if a in members and b in members:
            ra, rb = sets.find(a), sets.find(b)
            # the earlier table stays the root, so a cluster is named after its first table
            sets.union(*((ra, rb) if tables.index(ra) < tables.index(rb) else (rb, ra)))
    groups: dict[int, list[int]] = {}
    for t in tables:
        groups.setdefault(sets.find(t), []).append(t)
    return list(groups.values())


def compress(h: Subgraph, arrays) -> Compressed:
    """Algorithm 2 on ``h`` (tables and columns are ids of ``arrays``, a :class:`~raylake.learn.lake_arrays.LakeArrays`)."""
    # Step 1: union-cluster merge
    clusters = _components(h.tables, h.unions)
    cluster_of = {t: m for m, ts in enumerate(clusters) for t in ts}

    # Step 2: bridge detection
    leaving: set[int] = set()
    for t, c, u, d, _ in h.joins:
        if cluster_of[t] != cluster_of[u]:
            leaving.add(c)
            leaving.add(d)
    payload: list[list[int]] = []
    bridges, refs = [], []
    for m, ts in enumerate(clusters):
        pl = [c for t in ts for c in h.columns.get(t, ()) if c not in leaving]
        payload.append(pl)
        (refs if pl else bridges).append(m)
    if not refs:
        m = max(range(len(clusters)), key=lambda k: (sum(len(h.columns.get(t, ())) for t in clusters[k]), -k))
        bridges.remove(m)
        refs.append(m)
    is_bridge = set(bridges)

    # Step 3: join abstraction over paths whose interior lies in bridge clusters
    adj: dict[int, list[tuple[int, int, int, float]]] = {}
    for t, c, u, d, s in h.joins:
        if cluster_of[t] == cluster_of[u]:
            continue
        adj.setdefault(t, []).append((u, c, d, s))
        adj.setdefault(u, []).append((t, d, c, s))
    for edges in adj.values():
        edges.sort(key=lambda e: (-e[3], e[0], e[1], e[2]))
    ref_pos = {m: i for i, m in enumerate(refs)}
    found: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
    for i, m in enumerate(refs):
        # BFS from cluster m; interior nodes must be bridge tables; first path found = shortest, strongest
        seen = set(clusters[m])
        queue = deque((t, []) for t in clusters[m])
        while queue:
            t, path = queue.popleft()
            for u, c, d, _s in adj.get(t, ()):
                if u in seen:
                    continue
                mu = cluster_of[u]
                step = path + [(t, c, u, d)]
                if mu in is_bridge:
                    seen.add(u)
                    queue.append((u, step))
                elif mu != m and ref_pos[mu] > i and (m, mu) not in found:
                    found[(m, mu)] = step
    # Step 4: hierarchical projection, one entity–attribute–value tree per reference cluster
    trees: list[IntentTree] = []
    attr_col: dict[str, int] = {}
    tree_attr: dict[int, dict[int, Attribute]] = {}
    for i, m in enumerate(refs):
        canon = _union_aliases(clusters[m], h, arrays)
        attrs: dict[int, Attribute] = {}
        for c in payload[m]:
            k = canon.get(c, c)
            if k in attrs:
                continue
            a = Attribute(f"a{c}", arrays.col_name[c], [h.values[c]] if c in h.values else [])
            attrs[k] = a
            attr_col[a.attribute_id] = c
        tree_attr[m] = attrs
        trees.append(IntentTree(f"t{i}", arrays.entity_text[clusters[m][0]].replace("_", " "), list(attrs.values()),
                                {"tables": list(clusters[m])}))
    joins: list[Join] = []
    join_paths = []
    for (m, mu), path in sorted(found.items(), key=lambda kv: (ref_pos[kv[0][0]], ref_pos[kv[0][1]])):
        ends = []
        for cl, col in ((m, path[0][1]), (mu, path[-1][3])):
            attrs = tree_attr[cl]
            a = attrs.get(col)
            if a is None:
                a = Attribute(f"a{col}", arrays.col_name[col], [], {"key": True})
                attrs[col] = a
                trees[ref_pos[cl]].attributes.append(a)
                attr_col[a.attribute_id] = col
            ends.append(a.attribute_id)
        joins.append(Join(f"t{ref_pos[m]}", ends[0], f"t{ref_pos[mu]}", ends[1],
                          {"keys": [arrays.col_name[path[0][1]], arrays.col_name[path[-1][3]]],
                           "via": [u for _, _, u, _ in path[:-1]]}))
        join_paths.append(path)
    intent = IntentGraph(trees, joins)
    out = Compressed(intent, clusters, bridges, refs, attr_col, join_paths)
    _atom_refs(out, arrays)
    return out


def _union_aliases(tables: list[int], h: Subgraph, arrays) -> dict[int, int]:
    """Column -> the column of the cluster's first table it is union-aligned with (one attribute for both)."""
    if len(tables) == 1:
        return {}
    sets = DisjointSets()
    ts = set(tables)
    for t in tables:
        for u, (_s, mapping) in arrays.union[t].items():
            if u in ts:
                for a, b in mapping.items():
                    ra, rb = sets.find(a), sets.find(b)
                    if ra != rb:
                        sets.union(*((ra, rb) if tables.index(arrays.col_table[ra]) <= tables.index(arrays.col_table[rb]) else (rb, ra)))
    return {c: sets.find(c) for c in sets.parent}


def _atom_refs(comp: Compressed, arrays) -> None:
    """Atoms of ``comp.intent`` as lake ids, in the order of ``IntentGraph.atoms()`` (pinned by a test).

    Walks the trees directly instead of building :class:`~raylake.intent.model.Atom` objects:
    per tree its entity, then per attribute the attribute, its has_attribute edge and, per
    value, the value and its has_value edge; then the joins.
    """
    code, lake, e0, e1, tree = [], [], [], [], []
    node_pos: list[int] = []  # atom index -> position among node atoms (-1 for edges)
    kinds, refs, edges = [], [], []
    node_of: dict[str, int] = {}

    def node(kind: int, ref: int, ti: int) -> int:
        node_pos.append(len(kinds))
        kinds.append(kind)
        refs.append(ref)
        code.append(kind)
        lake.append(ref)
        e0.append(-1)
        e1.append(-1)
        tree.append(ti)
        return len(code) - 1

    def edge(kind: int, x: int, y: int, ti: int) -> None:
        node_pos.append(-1)
        edges.append((node_pos[x], node_pos[y], kind))
        code.append(3 + kind)
        lake.append(-1)
        e0.append(x)
        e1.append(y)
        tree.append(ti)

    tree_idx = {}
    for i, t in enumerate(comp.intent.trees):
        tree_idx[t.tree_id] = i
        e = node(ENTITY, int(comp.clusters[comp.refs[i]][0]), i)
        for a in t.attributes:
            col = int(comp.attr_col[a.attribute_id])
            x = node(ATTRIBUTE, col, i)
            node_of[a.attribute_id] = x
            edge(HAS_ATTRIBUTE, e, x, i)
            for _v in a.values:
                y = node(VALUE, col, i)
                edge(HAS_VALUE, x, y, i)
    for j in comp.intent.joins:
        edge(JOIN, node_of[j.from_attribute], node_of[j.to_attribute], tree_idx[j.from_tree])
    comp.atom_kind, comp.atom_ref, comp.atom_edges = kinds, refs, edges
    comp.atom_code, comp.atom_lake, comp.atom_e0, comp.atom_e1, comp.atom_tree = code, lake, e0, e1, tree


def realises(h: Subgraph, comp: Compressed, arrays) -> list[str]:
    """The homomorphism H⁺ ⊨ C(H⁺): every problem found (empty list: H⁺ realises G_I).

    - each tree maps onto one reference cluster, and its tables are union-connected in H⁺;
    - each attribute onto a sampled column of that cluster, each value onto that column's literal;
    - each cross-tree join onto a path of H⁺ join edges from the ``from`` key's column to the
      ``to`` key's column whose interior tables all lie in bridge clusters;
    - every reference cluster is the image of exactly one tree.
    """
    problems = []
    sampled = {c for cols in h.columns.values() for c in cols}
    bridge_tables = {t for m in comp.bridges for t in comp.clusters[m]}
    join_set = {(t, c, u, d) for t, c, u, d, _ in h.joins} | {(u, d, t, c) for t, c, u, d, _ in h.joins}
    union_set = {(a, b) for a, b in h.unions} | {(b, a) for a, b in h.unions}
    if len(comp.intent.trees) != len(comp.refs):
        problems.append(f"{len(comp.intent.trees)} trees for {len(comp.refs)} reference clusters")
    tree_cluster = {}
    for i, tree in enumerate(comp.intent.trees):
        m = comp.refs[i]
        ts = comp.clusters[m]
        tree_cluster[tree.tree_id] = set(ts)
        if not set(ts) <= set(h.tables):
            problems.append(f"tree {tree.tree_id} maps to tables outside H+")
        # union-connected
        seen, todo = {ts[0]}, [ts[0]]
        while todo:
            x = todo.pop()
            for y in ts:
                if y not in seen and (x, y) in union_set:
                    seen.add(y)
                    todo.append(y)
        if seen != set(ts):
            problems.append(f"tree {tree.tree_id}: tables {sorted(ts)} are not one union cluster in H+")
        for a in tree.attributes:
            c = comp.attr_col.get(a.attribute_id)
            if c is None or c not in sampled or int(arrays.col_table[c]) not in ts:
                problems.append(f"attribute {a.attribute_id} of {tree.tree_id} has no sampled column in its cluster")
                continue
            for v in a.values:
                if h.values.get(c) != v:
                    problems.append(f"value {v!r} of {a.attribute_id} is not the value summary of its column")
    for k, j in enumerate(comp.intent.joins):
        path = comp.join_paths[k] if k < len(comp.join_paths) else []
        if not path:
            problems.append(f"join {j.from_tree}->{j.to_tree} has no witness path")
            continue
        if any(e not in join_set for e in path):
            problems.append(f"join {j.from_tree}->{j.to_tree} uses an edge not in H+")
        if any(path[i][2] != path[i + 1][0] for i in range(len(path) - 1)):
            problems.append(f"join {j.from_tree}->{j.to_tree}: path is not connected")
        if path[0][0] not in tree_cluster[j.from_tree] or path[-1][2] not in tree_cluster[j.to_tree]:
            problems.append(f"join {j.from_tree}->{j.to_tree}: path ends are not in the two trees' clusters")
        if comp.attr_col.get(j.from_attribute) != path[0][1] or comp.attr_col.get(j.to_attribute) != path[-1][3]:
            problems.append(f"join {j.from_tree}->{j.to_tree}: keys are not the path's end columns")
        if any(u not in bridge_tables for _, _, u, _ in path[:-1]):
            problems.append(f"join {j.from_tree}->{j.to_tree}: path interior leaves the bridge clusters")
    return problems
