"""The numba reward kernel equals the numpy reference and raylake.reward.igms_value on sampled trajectories."""
from __future__ import annotations

import numpy as np
import pytest

from raylake.learn.pseudo_reward import RewardBatch, pseudo_reward, pseudo_reward_reference, pseudo_units_reference
from raylake.learn.trajectories import TrajectoryConfig, sample_trajectory
from raylake.reward import igms_value

ATOM_CODE = {"entity": 0, "attribute": 1, "value": 2, "has_attribute": 3, "has_value": 4, "join": 5}


def _sampled(arrays, sampler, n, seed):
    cfg = TrajectoryConfig(sampler=sampler, min_tables=1, max_tables=5, beta=0.5)
    rng = np.random.default_rng(seed)
    seeds = [t for t in range(arrays.n_tables) if arrays.degree(t) > 0]
    return cfg, [sample_trajectory(arrays, int(seeds[rng.integers(len(seeds))]), cfg, rng) for _ in range(n)]


@pytest.mark.parametrize("sampler", ["centrality", "uniform", "anchor_only"])
def test_kernel_equals_reference_and_igms_value(fig1, fig4, sampler):
    for arrays, seed in ((fig1, 5), (fig4, 6)):
        cfg, trs = _sampled(arrays, sampler, 40, seed)
        batch = RewardBatch(arrays, cfg.igms)
        for tr in trs:
            batch.add(tr["comp"], tr["comp"].clusters, tr["links"])
        fast = batch.compute()
        assert len(batch) == 0 and fast.shape == (len(trs),)
        for r, tr in zip(fast, trs):
            comp = tr["comp"]
            ref = pseudo_reward_reference(arrays, comp, comp.clusters, tr["links"], cfg.igms)
            M, C = pseudo_units_reference(arrays, comp, comp.clusters, tr["links"], cfg.igms)
            assert r > 0
            assert r == pytest.approx(ref, rel=1e-9)
            assert r == pytest.approx(igms_value(M, C), rel=1e-9)
            assert pseudo_reward(arrays, comp, comp.clusters, tr["links"], cfg.igms) == pytest.approx(r, rel=1e-12)


def test_kernel_on_other_evidence_and_join_units(fig4):
    """Evidence other than H⁺ (the reward of a mismatched pair) and a plan with join units."""
    t = {p: i for i, p in enumerate(fig4.paths)}
    cfg, trs = _sampled(fig4, "centrality", 30, 9)
    cfg_igms = cfg.igms
    with_joins = [tr for tr in trs if tr["comp"].intent.joins]
    assert with_joins, "the sample should hold a trajectory whose intent has a cross-tree join"
    for tr in trs:
        comp = tr["comp"]
        for clusters, links in (([[t["club"]]], []), ([[t["club"]], [t["player"]]], [(1, 0, 0.9, None)])):
            ref = pseudo_reward_reference(fig4, comp, clusters, links, cfg_igms)
            assert pseudo_reward(fig4, comp, clusters, links, cfg_igms) == pytest.approx(ref, rel=1e-9)


def test_atom_arrays_follow_intent_atoms(fig1, fig4):
    for arrays in (fig1, fig4):
        _, trs = _sampled(arrays, "centrality", 30, 2)
        for tr in trs:
            comp = tr["comp"]
            atoms = comp.intent.atoms()
            assert comp.atom_code == [ATOM_CODE[at.kind] for at in atoms]
            assert comp.atom_e0 == [at.ends[0] if not at.is_node else -1 for at in atoms]
            assert comp.atom_e1 == [at.ends[1] if not at.is_node else -1 for at in atoms]
            tree_ids = [tr_.tree_id for tr_ in comp.intent.trees]
            assert comp.atom_tree == [tree_ids.index(at.tree) for at in atoms]
            nodes = [i for i, at in enumerate(atoms) if at.is_node]
            assert comp.atom_kind == [comp.atom_code[i] for i in nodes]
            assert comp.atom_ref == [comp.atom_lake[i] for i in nodes]
            assert all(comp.atom_lake[i] == -1 for i, at in enumerate(atoms) if not at.is_node)


@pytest.mark.parametrize("alpha", [0.7, 0.0, 1.0])
def test_expansion_kernel_equals_dict_walk(fig1, fig4, alpha):
    """Same actions and the generator left in the same state (α = 0 or 1 exercise the zero-mass fallback)."""
    from raylake.learn.expand import expand_centrality, expand_centrality_reference

    for arrays in (fig1, fig4):
        r1, r2 = np.random.default_rng(8), np.random.default_rng(8)
        for _ in range(60):
            seed, size = int(r2.integers(arrays.n_tables)), int(r2.integers(1, arrays.n_tables + 2))
            r1.integers(arrays.n_tables), r1.integers(1, arrays.n_tables + 2)
            assert expand_centrality(arrays, seed, size, alpha, r1) == expand_centrality_reference(arrays, seed, size, alpha, r2)
            assert r1.random() == r2.random()


def test_pairwise_sum_is_numpys():
    from raylake.learn.expand import _pairwise_sum

    rng = np.random.default_rng(0)
    for n in [*range(1, 300), 1000, 9000]:
        x = rng.random(n) * rng.choice([1e-3, 1.0, 1e3], n)
        assert _pairwise_sum(x, 0, n) == x.sum()
