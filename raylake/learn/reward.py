"""Terminal reward of a self-generated trajectory: U_IGMS(C(H⁺), H⁺) (GRAFT Alg. 1 line 30, Eq. 6).

M and C are built exactly the way search builds them (:class:`raylake.search.support.Support`
and :class:`raylake.search.beam.BeamSearch`), restricted to what a pseudo-intent needs:

- ψ(u, x) = σ(β·(s(u, x) − s₀)), zero where s = 0, with the same similarity s: rescaled
  cosines of header / header+sample / table embeddings, 1 for an identical header (the
  lexical signal), 1 for a value literal present in the column (the value index), the
  naming strength for an entity word on the tables it names;
- one **table unit** per union cluster of H⁺ (bridges included; node atoms take their best
  ψ over the cluster's columns, has_attribute / has_value the containment products) and
  one **join unit** per join action that attached a new cluster, with the plan-tree path
  products ω^(1/|p|) of ``Support.join_row``;
- rows scaled by √w, the specificity of each atom over the whole lake
  (``LakeArrays.compute_specificity``), C = column-name Jaccard + (1 + σ₀²)·I.

Only the node-atom embeddings differ from Support's: a pseudo-atom's text *is* a lake object
(an entity word, a header, a literal), so its embedding is looked up, not computed, which is
what lets a Ray task score thousands of trajectories per second.
"""
from __future__ import annotations

import math

import numpy as np

from raylake.config import IGMSConfig
from raylake.learn.compress import ATTRIBUTE, ENTITY, Compressed
from raylake.learn.lake import LakeArrays, _norm_value, _rescale


def _psi(s: np.ndarray, cfg: IGMSConfig) -> np.ndarray:
    return np.where(s > 0, 1.0 / (1.0 + np.exp(-cfg.beta * (s - cfg.cos0))), 0.0)


def logdet_igms(M: np.ndarray, C: np.ndarray) -> float:
    """U = (1/a)·logdet(I_a + MᵀC⁻¹M) through Sylvester's identity, in q×q instead of a×a:
    logdet(I_a + MᵀC⁻¹M) = logdet(C + MMᵀ) − logdet(C). Equal to :func:`raylake.reward.igms_value`
    (pinned by a test); cheaper when a unit count q is below the atom count a, as here."""
    a = M.shape[1]
    l1 = np.linalg.cholesky(C + M @ M.T)
    l0 = np.linalg.cholesky(C)
    return 2.0 * float(np.log(np.diag(l1)).sum() - np.log(np.diag(l0)).sum()) / a


def pseudo_reward(arrays: LakeArrays, comp: Compressed, clusters: list[list[int]],
                  links: list[tuple[int, int, float, tuple[int, int] | None]], cfg: IGMSConfig) -> float:
    """U_IGMS of pseudo-intent ``comp.intent`` on the evidence ``clusters``.

    Args:
        clusters: the union clusters of H⁺ in the order they entered the plan (tables).
        links: per attached cluster k ≥ 1: (k, parent cluster, join score, (anchor col, new col)
            or None for a union attachment) — the plan tree of the trajectory's actions.
    """
    atoms = comp.atoms
    a = len(atoms)
    kinds = np.asarray(comp.atom_kind)
    refs = np.asarray(comp.atom_ref)
    node_idx = np.asarray([at.index for at in atoms if at.is_node])
    n_node = len(node_idx)
    ent, att, val = kinds == ENTITY, kinds == ATTRIBUTE, kinds == 2
    emb = np.empty((n_node, arrays.dim), np.float32)
    emb[ent] = arrays.entity_emb[refs[ent]]
    emb[att] = arrays.emb_header[refs[att]]
    emb[val] = arrays.value_emb[refs[val]]
    all_tables = [t for cl in clusters for t in cl]
    cols = np.concatenate([arrays.table_cols[t] for t in all_tables])
    n_cols = len(cols)
    hcos = emb @ arrays.emb_header[cols].T
    scos = emb @ arrays.emb_sample[cols].T
    s = np.maximum(_rescale(hcos), 0.9 * _rescale(scos))
    names = arrays.name_id[cols]
    s[att] = np.where(names[None, :] == arrays.name_id[refs[att]][:, None], 1.0, s[att])  # identical header: lexical signal
    for k in np.flatnonzero(val):
        row = 0.7 * _rescale(scos[k])
        hits = arrays.value_cols.get(_norm_value(arrays.value_text[refs[k]] or ""))
        if hits is not None:
            row[np.isin(cols, hits)] = 1.0
        row[cols == refs[k]] = 1.0
        s[k] = row
    psi = _psi(s, cfg)  # (n_node, n_cols)
    # cluster boundaries over the concatenated columns / tables
    t_len = np.fromiter((len(arrays.table_cols[t]) for t in all_tables), np.int64, len(all_tables))
    c_ntab = np.fromiter((len(cl) for cl in clusters), np.int64, len(clusters))
    t_start = np.concatenate([[0], np.cumsum(c_ntab)[:-1]])
    col_start_of_table = np.concatenate([[0], np.cumsum(t_len)[:-1]])
    c_start = col_start_of_table[t_start]
    best = np.maximum.reduceat(psi, c_start, axis=1)  # (n_node, K): best ψ per cluster
    node_rows = best.copy()
    if ent.any():
        tcos = _rescale(emb[ent] @ arrays.emb_table[all_tables].T)
        best_tab_col = np.maximum.reduceat(s[ent], col_start_of_table, axis=1)
        ts = np.maximum(tcos, 0.85 * best_tab_col)
        for r, k in enumerate(np.flatnonzero(ent)):
            word = arrays.entity_text[refs[k]]
            for i, t in enumerate(all_tables):
                named = arrays.entity_named[t].get(word)
                if named is not None and named > ts[r, i]:
                    ts[r, i] = named
        tab_best = np.maximum.reduceat(_psi(ts, cfg), t_start, axis=1)
        node_rows[ent] = np.maximum(tab_best, best[ent])
    K = len(clusters)
    R = np.zeros((a, K))
    R[node_idx] = node_rows
    pos = np.full(a, -1)
    pos[node_idx] = np.arange(n_node)
    ha = [(at.index, at.ends[0], at.ends[1]) for at in atoms if at.kind == "has_attribute"]
    hv = [(at.index, at.ends[0], at.ends[1]) for at in atoms if at.kind == "has_value"]
    if ha:
        i, e, x = map(np.asarray, zip(*ha))
        R[i] = R[e] * best[pos[x]]
    if hv:
        i, x, v = map(np.asarray, zip(*hv))
        R[i] = np.maximum.reduceat(psi[pos[x]] * psi[pos[v]], c_start, axis=1)
    # specificity prior and its square root as the row scale
    w = np.ones(a)
    w_node = np.empty(n_node)
    w_node[ent] = arrays.spec_table[refs[ent]]
    w_node[att] = arrays.spec_col[refs[att]]
    w_node[val] = arrays.spec_value[refs[val]]
    w[node_idx] = w_node
    for at in atoms:
        if not at.is_node:
            w[at.index] = math.sqrt(w[at.ends[0]] * w[at.ends[1]])
    scale = np.sqrt(w)
    tree_of_node = {}
    for at in atoms:
        if at.is_node:
            tree_of_node.setdefault(at.tree, []).append(at.index)
    trees = list(tree_of_node)
    # tree support of each cluster: best node support of the tree's atoms (Support.tree_support)
    TS = np.stack([R[tree_of_node[tr]].max(axis=0) for tr in trees]) if trees else np.zeros((0, K))
    tree_pos = {tr: i for i, tr in enumerate(trees)}
    join_trees = [(at.index, tree_pos[atoms[at.ends[0]].tree], tree_pos[atoms[at.ends[1]].tree]) for at in atoms if at.kind == "join"]
    rows, colsets = [], []
    adj: dict[int, list[tuple[int, float]]] = {}
    link_of = {k: (p, sc, keys) for k, p, sc, keys in links}
    for k, cl in enumerate(clusters):
        rows.append(R[:, k] * scale)
        colsets.append(frozenset(arrays.col_norm[c] for t in cl for c in arrays.table_cols[t]))
        if k not in link_of:
            continue
        parent, score, keys = link_of[k]
        adj.setdefault(k, []).append((parent, score))
        adj.setdefault(parent, []).append((k, score))
        if keys is None or not join_trees:
            continue
        dist = {k: (1.0, 0)}
        todo = [k]
        while todo:
            x = todo.pop()
            for y, sc in adj.get(x, ()):
                if y not in dist:
                    dist[y] = (dist[x][0] * sc, dist[x][1] + 1)
                    todo.append(y)
        jrow = np.zeros(a)
        for j, ti, tj in join_trees:
            b = 0.0
            for o, (omega, length) in dist.items():
                if length == 0 or length > cfg.hops:
                    continue
                g = omega ** (1.0 / length)
                b = max(b, TS[ti, o] * g * TS[tj, k], TS[tj, o] * g * TS[ti, k])
            jrow[j] = b
        if jrow.any():
            rows.append(jrow * scale)
            colsets.append(frozenset(arrays.col_norm[c] for c in keys))
    q = len(rows)
    C = np.eye(q) * (1.0 + cfg.sigma0_sq)
    for i in range(q):
        for j in range(i):
            u = colsets[i] | colsets[j]
            C[i, j] = C[j, i] = len(colsets[i] & colsets[j]) / len(u) if u else 0.0
    return logdet_igms(np.asarray(rows), C)
