"""Terminal reward of a self-generated trajectory: U_IGMS(C(H⁺), H⁺) (GRAFT Alg. 1 line 30, Eq. 6).

M and C are built exactly the way search builds them (:class:`raylake.search.support.Support`
and :class:`raylake.search.beam.BeamSearch`), restricted to what a pseudo-intent needs:

- ψ(u, x) and the similarity s of :mod:`raylake.reward.psi` (rescaled cosines of header /
  header+sample / table embeddings), plus the exact signals: 1 for an identical header (the
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

import numba
import numpy as np

from raylake.config import IGMSConfig
from raylake.learn.compress import ATTRIBUTE, ENTITY, Compressed
from raylake.learn.lake_arrays import LakeArrays, norm_value
from raylake.reward import psi as psi_
from raylake.reward.psi import W_SAMPLE, W_TABLE, W_VALUE, psi_scalar, rescale_scalar


def logdet_igms(M: np.ndarray, C: np.ndarray) -> float:
    """U = (1/a)·logdet(I_a + MᵀC⁻¹M) through Sylvester's identity, in q×q instead of a×a:
    logdet(I_a + MᵀC⁻¹M) = logdet(C + MMᵀ) − logdet(C). Equal to :func:`raylake.reward.igms_value`
    (pinned by a test); cheaper when a unit count q is below the atom count a, as here."""
    a = M.shape[1]
    l1 = np.linalg.cholesky(C + M @ M.T)
    l0 = np.linalg.cholesky(C)
    return 2.0 * float(np.log(np.diag(l1)).sum() - np.log(np.diag(l0)).sum()) / a


def pseudo_reward_reference(arrays: LakeArrays, comp: Compressed, clusters: list[list[int]],
                            links: list[tuple[int, int, float, tuple[int, int] | None]], cfg: IGMSConfig) -> float:
    """U_IGMS of pseudo-intent ``comp.intent`` on the evidence ``clusters``: the numpy reference.

    What :func:`pseudo_reward` computes with one numba kernel, written as array operations
    (the tests pin the two to 1e-9 relative). Arguments as :func:`pseudo_reward`.
    """
    return logdet_igms(*pseudo_units_reference(arrays, comp, clusters, links, cfg))


def pseudo_units_reference(arrays: LakeArrays, comp: Compressed, clusters: list[list[int]],
                           links: list[tuple[int, int, float, tuple[int, int] | None]], cfg: IGMSConfig):
    """(M, C) of the reward: evidence-unit rows over the atoms of ``comp.intent`` and their covariance.

    Cosines are taken in float64 from the float32 embeddings, so this and the kernel are
    exact up to summation order.

    Args:
        clusters: the union clusters of H⁺ in the order they entered the plan (tables).
        links: per attached cluster k ≥ 1: (k, parent cluster, join score, (anchor col, new col)
            or None for a union attachment) — the plan tree of the trajectory's actions.
    """
    atoms = comp.intent.atoms()
    a = len(atoms)
    kinds = np.asarray(comp.atom_kind)
    refs = np.asarray(comp.atom_ref)
    node_idx = np.asarray([at.index for at in atoms if at.is_node])
    n_node = len(node_idx)
    ent, att, val = kinds == ENTITY, kinds == ATTRIBUTE, kinds == 2
    emb = np.empty((n_node, arrays.dim), np.float64)
    emb[ent] = arrays.entity_emb[refs[ent]]
    emb[att] = arrays.emb_header[refs[att]]
    emb[val] = arrays.value_emb[refs[val]]
    all_tables = [t for cl in clusters for t in cl]
    cols = np.concatenate([arrays.table_cols[t] for t in all_tables])
    n_cols = len(cols)
    hcos = emb @ arrays.emb_header[cols].T.astype(np.float64)
    scos = emb @ arrays.emb_sample[cols].T.astype(np.float64)
    s = psi_.column_similarity(hcos, scos, cfg)
    names = arrays.name_id[cols]
    s[att] = np.where(names[None, :] == arrays.name_id[refs[att]][:, None], 1.0, s[att])  # identical header: lexical signal
    for k in np.flatnonzero(val):
        row = psi_.value_similarity(scos[k], cfg)
        hits = arrays.value_cols.get(norm_value(arrays.value_text[refs[k]] or ""))
        if hits is not None:
            row[np.isin(cols, hits)] = 1.0
        row[cols == refs[k]] = 1.0
        s[k] = row
    psi = psi_.psi(s, cfg)  # (n_node, n_cols)
    # cluster boundaries over the concatenated columns / tables
    t_len = np.fromiter((len(arrays.table_cols[t]) for t in all_tables), np.int64, len(all_tables))
    c_ntab = np.fromiter((len(cl) for cl in clusters), np.int64, len(clusters))
    t_start = np.concatenate([[0], np.cumsum(c_ntab)[:-1]])
    col_start_of_table = np.concatenate([[0], np.cumsum(t_len)[:-1]])
    c_start = col_start_of_table[t_start]
    best = np.maximum.reduceat(psi, c_start, axis=1)  # (n_node, K): best ψ per cluster
    node_rows = best.copy()
    if ent.any():
        best_tab_col = np.maximum.reduceat(s[ent], col_start_of_table, axis=1)
        ts = psi_.table_similarity(emb[ent] @ arrays.emb_table[all_tables].T.astype(np.float64), best_tab_col, cfg)
        for r, k in enumerate(np.flatnonzero(ent)):
            word = arrays.entity_text[refs[k]]
            for i, t in enumerate(all_tables):
                named = arrays.entity_named[t].get(word)
                if named is not None and named > ts[r, i]:
                    ts[r, i] = named
        tab_best = np.maximum.reduceat(psi_.psi(ts, cfg), t_start, axis=1)
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
    return np.asarray(rows), C


# --------------------------------------------------------------------------- the numba kernel
#
# pseudo_reward_reference makes ~80 small numpy calls per trajectory; at a few µs each they,
# not the arithmetic, were the cost. The kernel below does the same computation in one pass
# over a batch of trajectories: per trajectory the atoms (Compressed.atom_code & co.), the
# union clusters (tables, CSR) and the plan links, all flattened into a few int/float arrays.


@numba.njit(cache=True, fastmath=True)
def _dot(A, i, B, j):
    # exact float32 products summed in float64; fastmath only lets LLVM vectorise the sum
    acc = 0.0
    for d in range(A.shape[1]):
        acc += np.float64(A[i, d]) * np.float64(B[j, d])
    return acc


@numba.njit(cache=True, inline="always")
def _seg_end(starts, i, n):
    # np.maximum.reduceat's segment i: [starts[i], starts[i+1]) or the single element when that is empty
    e = starts[i + 1] if i + 1 < starts.shape[0] else n
    return e if e > starts[i] else starts[i] + 1


@numba.njit(cache=True)
def _name_set(ids):
    u = np.unique(ids)
    return u


@numba.njit(cache=True)
def _jaccard(a, la, b, lb):
    i = j = inter = 0
    while i < la and j < lb:
        if a[i] == b[j]:
            inter += 1
            i += 1
            j += 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    u = la + lb - inter
    return inter / u if u > 0 else 0.0


@numba.njit(cache=True)
def _logdet_chol(A):
    # log det of a small SPD matrix by an in-place Cholesky; NaN when not positive definite
    n = A.shape[0]
    L = A.copy()
    out = 0.0
    for j in range(n):
        d = L[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return np.nan
        d = np.sqrt(d)
        L[j, j] = d
        out += np.log(d)
        for i in range(j + 1, n):
            x = L[i, j]
            for k in range(j):
                x -= L[i, k] * L[j, k]
            L[i, j] = x / d
    return 2.0 * out


@numba.njit(cache=True)
def _reward_one(akind, aref, ae0, ae1, atree, ctab, cptr, lpar, lscore, lkey0, lkey1,
                tc_ptr, tc_idx, E_head, E_samp, E_tab, E_ent, E_val, name_id, spec_table, spec_col, spec_value,
                vh_ptr, vh_idx, ent_word, nm_ptr, nm_word, nm_val, pk, hops, sigma0_sq):
    a = akind.shape[0]
    K = cptr.shape[0] - 1
    nt = ctab.shape[0]
    # the evidence columns: every column of every table of the clusters, table by table
    tstart = np.empty(nt, np.int64)
    n_cols = 0
    for i in range(nt):
        tstart[i] = n_cols
        n_cols += tc_ptr[ctab[i] + 1] - tc_ptr[ctab[i]]
    cols = np.empty(n_cols, np.int64)
    for i in range(nt):
        t = ctab[i]
        for q in range(tc_ptr[t], tc_ptr[t + 1]):
            cols[tstart[i] + q - tc_ptr[t]] = tc_idx[q]
    cstart = np.empty(K, np.int64)
    for k in range(K):
        cstart[k] = tstart[cptr[k]]
    # node atoms: similarity s and ψ to every evidence column, best ψ per cluster
    pos = np.full(a, -1, np.int64)
    n_node = 0
    for i in range(a):
        if akind[i] < 3:
            pos[i] = n_node
            n_node += 1
    S = np.empty((n_node, n_cols))
    P = np.empty((n_node, n_cols))
    best = np.zeros((n_node, K))
    R = np.zeros((a, K))
    for i in range(a):
        r = pos[i]
        if r < 0:
            continue
        kind, ref = akind[i], aref[i]
        for j in range(n_cols):
            c = cols[j]
            if kind == 2:  # value literal: its column and the columns of the value index hold it
                v = pk[W_VALUE] * rescale_scalar(_dot(E_val, ref, E_samp, c), pk)
                if c == ref:
                    v = 1.0
                else:
                    lo, hi = vh_ptr[ref], vh_ptr[ref + 1]
                    if hi > lo:
                        k = lo + np.searchsorted(vh_idx[lo:hi], c)
                        if k < hi and vh_idx[k] == c:
                            v = 1.0
            elif kind == 1 and name_id[c] == name_id[ref]:  # identical header: the lexical signal
                v = 1.0
            elif kind == 1:
                v = max(rescale_scalar(_dot(E_head, ref, E_head, c), pk), pk[W_SAMPLE] * rescale_scalar(_dot(E_head, ref, E_samp, c), pk))
            else:
                v = max(rescale_scalar(_dot(E_ent, ref, E_head, c), pk), pk[W_SAMPLE] * rescale_scalar(_dot(E_ent, ref, E_samp, c), pk))
            S[r, j] = v
            P[r, j] = psi_scalar(v, pk)
        for k in range(K):
            e = _seg_end(cstart, k, n_cols)
            m = P[r, cstart[k]]
            for j in range(cstart[k] + 1, e):
                if P[r, j] > m:
                    m = P[r, j]
            best[r, k] = m
            R[i, k] = m
        if kind == 0:  # entity: also the table text and the naming strength, best table per cluster
            word = ent_word[ref]
            for k in range(K):
                tb = 0.0
                for ti in range(cptr[k], cptr[k + 1]):
                    t = ctab[ti]
                    e = _seg_end(tstart, ti, n_cols)
                    btc = S[r, tstart[ti]]
                    for j in range(tstart[ti] + 1, e):
                        if S[r, j] > btc:
                            btc = S[r, j]
                    ts = max(rescale_scalar(_dot(E_ent, ref, E_tab, t), pk), pk[W_TABLE] * btc)
                    for q in range(nm_ptr[t], nm_ptr[t + 1]):
                        if nm_word[q] == word and nm_val[q] > ts:
                            ts = nm_val[q]
                    p = psi_scalar(ts, pk)
                    if ti == cptr[k] or p > tb:
                        tb = p
                R[i, k] = max(tb, best[r, k])
    # edge atoms: containment products
    for i in range(a):
        if akind[i] == 3:  # has_attribute: entity row × attribute's best ψ
            for k in range(K):
                R[i, k] = R[ae0[i], k] * best[pos[ae1[i]], k]
        elif akind[i] == 4:  # has_value: best joint ψ of attribute and value on one column
            x, y = pos[ae0[i]], pos[ae1[i]]
            for k in range(K):
                e = _seg_end(cstart, k, n_cols)
                m = P[x, cstart[k]] * P[y, cstart[k]]
                for j in range(cstart[k] + 1, e):
                    pj = P[x, j] * P[y, j]
                    if pj > m:
                        m = pj
                R[i, k] = m
    # specificity prior: w of node atoms, geometric mean for edges; rows scaled by √w
    w = np.ones(a)
    for i in range(a):
        kind, ref = akind[i], aref[i]
        if kind == 0:
            w[i] = spec_table[ref]
        elif kind == 1:
            w[i] = spec_col[ref]
        elif kind == 2:
            w[i] = spec_value[ref]
        else:
            w[i] = np.sqrt(w[ae0[i]] * w[ae1[i]])
    scale = np.sqrt(w)
    # tree support per cluster: best node row of the tree
    n_trees = 0
    for i in range(a):
        if atree[i] + 1 > n_trees:
            n_trees = atree[i] + 1
    TS = np.zeros((n_trees, K))
    seen_tree = np.zeros(n_trees, np.bool_)
    for i in range(a):
        if pos[i] < 0:
            continue
        tr = atree[i]
        for k in range(K):
            if not seen_tree[tr] or R[i, k] > TS[tr, k]:
                TS[tr, k] = R[i, k]
        seen_tree[tr] = True
    n_join = 0
    for i in range(a):
        if akind[i] == 5:
            n_join += 1
    # evidence units: one table unit per cluster, one join unit per join action attaching a cluster
    M = np.zeros((2 * K, a))
    sets = np.empty((2 * K, n_cols + 2), np.int64)
    set_len = np.zeros(2 * K, np.int64)
    adj = np.zeros((K, K))
    has = np.zeros((K, K), np.bool_)
    dist_w = np.empty(K)
    dist_l = np.empty(K, np.int64)
    stack = np.empty(K, np.int64)
    q = 0
    for k in range(K):
        for i in range(a):
            M[q, i] = R[i, k] * scale[i]
        lo = tstart[cptr[k]]
        hi = tstart[cptr[k + 1]] if k + 1 < K else n_cols
        u = _name_set(name_id[cols[lo:hi]])
        sets[q, : u.shape[0]] = u
        set_len[q] = u.shape[0]
        q += 1
        p = lpar[k]
        if p < 0:
            continue
        adj[k, p] = adj[p, k] = lscore[k]
        has[k, p] = has[p, k] = True
        if lkey0[k] < 0 or n_join == 0:
            continue
        # plan-tree paths from k: product of join scores ω and length |p|
        dist_l[:] = -1
        dist_w[k], dist_l[k] = 1.0, 0
        stack[0], top = k, 1
        while top > 0:
            top -= 1
            x = stack[top]
            for y in range(K):
                if has[x, y] and dist_l[y] < 0:
                    dist_w[y], dist_l[y] = dist_w[x] * adj[x, y], dist_l[x] + 1
                    stack[top] = y
                    top += 1
        any_b = False
        for j in range(a):
            if akind[j] != 5:
                continue
            ti, tj = atree[ae0[j]], atree[ae1[j]]
            b = 0.0
            for o in range(K):
                L = dist_l[o]
                if L <= 0 or L > hops:
                    continue
                g = dist_w[o] ** (1.0 / L)
                b = max(b, TS[ti, o] * g * TS[tj, k], TS[tj, o] * g * TS[ti, k])
            M[q, j] = b * scale[j]
            if b != 0.0:
                any_b = True
        if any_b:
            ka, kb = name_id[lkey0[k]], name_id[lkey1[k]]
            if ka == kb:
                sets[q, 0], set_len[q] = ka, 1
            else:
                sets[q, 0], sets[q, 1], set_len[q] = min(ka, kb), max(ka, kb), 2
            q += 1
        else:
            M[q, :] = 0.0
    # C = Jaccard of column names + (1 + σ₀²)·I;  U = (logdet(C + MMᵀ) − logdet(C)) / a
    C = np.eye(q) * (1.0 + sigma0_sq)
    for i in range(q):
        for j in range(i):
            C[i, j] = C[j, i] = _jaccard(sets[i], set_len[i], sets[j], set_len[j])
    G = C.copy()
    for i in range(q):
        for j in range(q):
            acc = 0.0
            for x in range(a):
                acc += M[i, x] * M[j, x]
            G[i, j] += acc
    return (_logdet_chol(G) - _logdet_chol(C)) / a


@numba.njit(cache=True)
def _reward_batch(a_ptr, akind, aref, ae0, ae1, atree, k_ptr, t_ptr, ctab, lpar, lscore, lkey0, lkey1,
                  tc_ptr, tc_idx, E_head, E_samp, E_tab, E_ent, E_val, name_id, spec_table, spec_col, spec_value,
                  vh_ptr, vh_idx, ent_word, nm_ptr, nm_word, nm_val, pk, hops, sigma0_sq):
    n = a_ptr.shape[0] - 1
    out = np.empty(n)
    for b in range(n):
        a0, a1 = a_ptr[b], a_ptr[b + 1]
        k0, k1 = k_ptr[b], k_ptr[b + 1]
        cptr = t_ptr[k0:k1 + 1] - t_ptr[k0]
        out[b] = _reward_one(akind[a0:a1], aref[a0:a1], ae0[a0:a1], ae1[a0:a1], atree[a0:a1],
                             ctab[t_ptr[k0]:t_ptr[k1]], cptr, lpar[k0:k1], lscore[k0:k1], lkey0[k0:k1], lkey1[k0:k1],
                             tc_ptr, tc_idx, E_head, E_samp, E_tab, E_ent, E_val, name_id, spec_table, spec_col,
                             spec_value, vh_ptr, vh_idx, ent_word, nm_ptr, nm_word, nm_val, pk, hops, sigma0_sq)
    return out


class RewardBatch:
    """Terminal rewards of many trajectories from one kernel call.

    ``add`` flattens one trajectory (atoms of C(H⁺), its clusters, its plan links) into
    growing lists; ``compute`` runs the kernel over all of them and clears the batch.
    The reward consumes no randomness, so deferring it leaves every random draw in place.
    """

    def __init__(self, arrays: LakeArrays, cfg: IGMSConfig):
        self.arrays, self.cfg = arrays, cfg
        self.flat = arrays.flat
        self._clear()

    def _clear(self) -> None:
        self.a_ptr, self.k_ptr, self.t_ptr = [0], [0], [0]
        self.akind, self.aref, self.ae0, self.ae1, self.atree = [], [], [], [], []
        self.ctab, self.lpar, self.lscore, self.lkey0, self.lkey1 = [], [], [], [], []

    def __len__(self) -> int:
        return len(self.a_ptr) - 1

    def add(self, comp: Compressed, clusters: list[list[int]], links: list[tuple[int, int, float, tuple[int, int] | None]]) -> int:
        """Queue one trajectory (arguments as :func:`pseudo_reward_reference`); returns its position."""
        self.akind += comp.atom_code
        self.aref += comp.atom_lake
        self.ae0 += comp.atom_e0
        self.ae1 += comp.atom_e1
        self.atree += comp.atom_tree
        self.a_ptr.append(len(self.akind))
        K = len(clusters)
        par, score, key0, key1 = [-1] * K, [0.0] * K, [-1] * K, [-1] * K
        for k, p, sc, keys in links:  # a later link of the same cluster wins, as in the reference's dict
            par[k], score[k] = p, sc
            key0[k], key1[k] = keys if keys is not None else (-1, -1)
        self.lpar += par
        self.lscore += score
        self.lkey0 += key0
        self.lkey1 += key1
        tp = self.t_ptr
        for cl in clusters:
            self.ctab += cl
            tp.append(tp[-1] + len(cl))
        self.k_ptr.append(len(tp) - 1)
        return len(self.a_ptr) - 2

    def compute(self) -> np.ndarray:
        """The rewards of every queued trajectory, in order."""
        if not len(self):
            return np.zeros(0)
        i64 = lambda x: np.asarray(x, np.int64)  # noqa: E731
        f, c = self.flat, self.cfg
        out = _reward_batch(i64(self.a_ptr), i64(self.akind), i64(self.aref), i64(self.ae0), i64(self.ae1),
                            i64(self.atree), i64(self.k_ptr), i64(self.t_ptr), i64(self.ctab), i64(self.lpar),
                            np.asarray(self.lscore, np.float64), i64(self.lkey0), i64(self.lkey1),
                            f.tc_ptr, f.tc_idx, f.emb_header, f.emb_sample, f.emb_table, f.entity_emb, f.value_emb,
                            f.name_id, f.spec_table, f.spec_col, f.spec_value, f.vh_ptr, f.vh_idx, f.ent_word,
                            f.nm_ptr, f.nm_word, f.nm_val, psi_.kernel_constants(c), int(c.hops), float(c.sigma0_sq))
        self._clear()
        return out


def pseudo_reward(arrays: LakeArrays, comp: Compressed, clusters: list[list[int]],
                  links: list[tuple[int, int, float, tuple[int, int] | None]], cfg: IGMSConfig) -> float:
    """U_IGMS of pseudo-intent ``comp.intent`` on the evidence ``clusters`` (one trajectory, numba kernel).

    Args:
        clusters: the union clusters of H⁺ in the order they entered the plan (tables).
        links: per attached cluster k ≥ 1: (k, parent cluster, join score, (anchor col, new col)
            or None for a union attachment) — the plan tree of the trajectory's actions.
    """
    batch = RewardBatch(arrays, cfg)
    batch.add(comp, clusters, links)
    return float(batch.compute()[0])
