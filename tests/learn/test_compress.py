"""Algorithm 2 on the paper's figures: union clusters merge, bridges become joins with the right keys."""
from __future__ import annotations

import numpy as np
import pytest

from raylake.learn.compress import Subgraph, compress, realises
from raylake.learn.trajectories import sample_columns


def make_h(arrays, keep: dict[str, list[str]]) -> Subgraph:
    """H⁺ over the named tables with exactly the named columns kept (keys must be among them)."""
    tables = [arrays.paths.index(t) for t in keep]
    full = sample_columns(arrays, tables, 1.0, np.random.default_rng(0))
    cols = {}
    for name, names in keep.items():
        t = arrays.paths.index(name)
        cols[t] = [c for c in full.columns[t] if arrays.col_name[c] in names]
        assert full.keys[t] <= set(cols[t]), f"{name}: keys {[arrays.col_name[c] for c in full.keys[t]]} must be kept"
    values = {c: v for c, v in full.values.items() if any(c in cs for cs in cols.values())}
    return Subgraph(full.tables, cols, full.keys, values, full.joins, full.unions)


def names(arrays, ids):
    return sorted(arrays.paths[t] for t in ids)


def test_fig4_union_shards_merge_and_player_bridge_becomes_join(fig4):
    h = make_h(fig4, {
        "club": ["Club_ID", "Club_Name"],
        "player": ["Player_ID", "Club_ID"],  # keys only: a bridge
        "points_2019": ["Player_ID", "Points"],
        "points_2020": ["PlayerId", "POINTS"],
    })
    comp = compress(h, fig4)
    assert [names(fig4, c) for c in comp.clusters] == [["club"], ["player"], ["points_2019", "points_2020"]]
    assert [names(fig4, comp.clusters[m]) for m in comp.bridges] == [["player"]]
    g = comp.intent
    assert [t.entity for t in g.trees] == ["club", "points"]
    points = g.trees[1]
    # Points and POINTS are one attribute of the merged tree; the join key is added to it
    assert [a.name for a in points.attributes] == ["Points", "Player_ID"]
    assert [a.name for a in g.trees[0].attributes] == ["Club_Name", "Club_ID"]
    assert g.trees[0].attributes[0].values == ["AIB"]
    assert len(g.joins) == 1
    j = g.joins[0]
    assert (j.from_tree, j.to_tree) == ("t0", "t1")
    assert j.evidence["keys"] == ["Club_ID", "Player_ID"]  # club.Club_ID ... points_2019.Player_ID (the stronger shard link)
    assert names(fig4, j.evidence["via"]) == ["player"]
    assert not any(t.entity == "player" for t in g.trees)  # the bridge disappeared
    assert realises(h, comp, fig4) == []
    g.validate()


def test_fig1_bridge_cluster_of_two_shards(fig1):
    h = make_h(fig1, {
        "universities": ["UnivID", "UniversityName"],
        "professors": ["UnivID", "InstructorID"],
        "lecturers": ["EmployeeID", "SchoolCode"],
        "instructors": ["InstructorID", "InstructorName"],
    })
    comp = compress(h, fig1)
    assert [names(fig1, comp.clusters[m]) for m in comp.bridges] == [["lecturers", "professors"]]
    g = comp.intent
    assert [t.entity for t in g.trees] == ["universities", "instructors"]
    assert len(g.joins) == 1 and g.joins[0].evidence["keys"] == ["UnivID", "InstructorID"]
    assert names(fig1, g.joins[0].evidence["via"]) == ["professors"]
    assert realises(h, comp, fig1) == []


def test_fig1_payload_keeps_the_shard_cluster_as_a_tree(fig1):
    h = make_h(fig1, {
        "universities": ["UnivID", "UniversityName"],
        "professors": ["UnivID", "InstructorID", "Role"],
        "lecturers": ["EmployeeID", "SchoolCode", "Position"],
        "instructors": ["InstructorID", "InstructorName"],
    })
    comp = compress(h, fig1)
    assert comp.bridges == []
    g = comp.intent
    assert len(g.trees) == 3
    role_tree = g.trees[1]
    assert [a.name for a in role_tree.attributes if not a.evidence.get("key")] == ["Role"]  # Position is its union alias
    assert sorted((j.from_tree, j.to_tree) for j in g.joins) == [("t0", "t1"), ("t1", "t2")]
    assert realises(h, comp, fig1) == []


def test_realises_catches_a_wrong_key(fig4):
    h = make_h(fig4, {"club": ["Club_ID", "Club_Name"], "player": ["Player_ID", "Club_ID"], "points_2019": ["Player_ID", "Points"]})
    comp = compress(h, fig4)
    assert realises(h, comp, fig4) == []
    j = comp.intent.joins[0]
    region = fig4.table_cols[fig4.paths.index("club")][2]
    comp.attr_col[j.from_attribute] = int(region)
    assert any("keys" in p for p in realises(h, comp, fig4))


def test_all_bridges_keeps_one_tree(fig4):
    h = make_h(fig4, {"club": ["Club_ID"], "player": ["Club_ID"]})
    comp = compress(h, fig4)
    assert len(comp.intent.trees) == 1
    comp.intent.validate()
    assert realises(h, comp, fig4) == []


@pytest.mark.parametrize("sampler", ["centrality", "uniform", "anchor_only"])
def test_sampled_subgraphs_realise_their_compression(fig1, fig4, sampler):
    from raylake.learn.trajectories import TrajectoryConfig, trajectory

    cfg = TrajectoryConfig(sampler=sampler, min_tables=2, max_tables=5, beta=0.5)
    rng = np.random.default_rng(7)
    for arrays in (fig1, fig4):
        for _ in range(40):
            seed = int(rng.integers(arrays.n_tables))
            tr = trajectory(arrays, seed, cfg, rng)
            h, comp = tr["h"], tr["comp"]
            assert realises(h, comp, arrays) == []
            comp.intent.validate()
            for t in h.tables:
                assert h.keys[t] <= set(h.columns[t])  # keys always kept
            assert tr["reward"] > 0
