"""GRAFT's worked examples (Fig. 1 and Fig. 4) as IGMS plans on the example lake.

The full plan — bridge and every shard — must score above each plan that drops the bridge
or one shard, and above each plan that swaps one of them for any other table of the lake,
and Algorithm 3 must return it. The intent graphs are the paper's (Fig. 2 and the last
Appendix A example), written by hand so the test measures the reward, not the extractor.

One claim of the paper does not hold for Eq. 6 as specified and is pinned as a strict xfail:
Fig. 1's second shard (lecturers) does not raise U. Its re-spelled columns support the atoms
barely more than professors' already do, and with Jaccard-correlated noise U is not monotone
(see :mod:`raylake.reward.igms`), so U falls by 0.005 when it joins the cluster. The search
still returns it: a shard cluster enters a plan whole, as one logical table (Sec. 3.1).
"""
from __future__ import annotations

import pytest

from raylake.config import IGMSConfig, SearchConfig
from raylake.index.reader import LakeIndex
from raylake.intent.lexicon import Lexicon
from raylake.intent.model import IntentGraph
from raylake.search.beam import BeamSearch
from raylake.search.plan import Step
from raylake.search.support import Support

FIG2 = {  # Fig. 1 query: universities (name, state) with Computer Science instructors
    "trees": [
        {"tree_id": "t1", "entity": "university", "attributes": [
            {"attribute_id": "a1", "name": "university name", "values": []},
            {"attribute_id": "a2", "name": "state", "values": []}]},
        {"tree_id": "t2", "entity": "instructor", "attributes": [
            {"attribute_id": "a3", "name": "department name", "values": ["Computer Science"]}]},
    ],
    "joins": [{"from_tree": "t1", "from_attribute": "a1", "to_tree": "t2", "to_attribute": "a3"}],
}
FIG4 = {  # "What is the average points of players from the club with name 'AIB'?"
    "trees": [
        {"tree_id": "t1", "entity": "club", "attributes": [
            {"attribute_id": "a1", "name": "club name", "values": ["AIB"]},
            {"attribute_id": "a2", "name": "club id", "values": []}]},
        {"tree_id": "t2", "entity": "player", "attributes": [
            {"attribute_id": "a3", "name": "player id", "values": []},
            {"attribute_id": "a4", "name": "club id", "values": []}]},
        {"tree_id": "t3", "entity": "points", "attributes": [
            {"attribute_id": "a5", "name": "points", "values": []},
            {"attribute_id": "a6", "name": "player id", "values": []}]},
    ],
    "joins": [
        {"from_tree": "t1", "from_attribute": "a2", "to_tree": "t2", "to_attribute": "a4"},
        {"from_tree": "t2", "from_attribute": "a3", "to_tree": "t3", "to_attribute": "a6"},
    ],
}
U = "universities/"
FIG1_PLAN = [U + "universities.csv", U + "professors.csv", U + "lecturers.csv", U + "instructors.csv", U + "departments.csv"]
FIG1_NEEDED = {U + "professors.csv": "shard", U + "instructors.csv": "bridge"}  # lecturers: see the xfail
S = "sports/"
FIG4_PLAN = [S + "club.csv", S + "player.csv", S + "points_2019.csv", S + "points_2020.csv"]
FIG4_NEEDED = {S + "player.csv": "bridge", S + "points_2019.csv": "shard", S + "points_2020.csv": "shard"}


@pytest.fixture(scope="module")
def index(example_index):
    return LakeIndex.load(example_index)


def plan_value(index, intent: dict, paths: list[str]) -> float:
    """U of the plan that adds ``paths`` in order, each table joined to the first plan table it
    has a join edge with (union edges for shards), so join units exist wherever the lake
    connects the plan; a table with no edge to the plan enters as a table unit alone."""
    sup = Support(index, Lexicon(index), IntentGraph.from_json(intent), IGMSConfig())
    bs = BeamSearch(index.graph, sup, SearchConfig(budget=len(paths)), IGMSConfig())
    g, p = index.graph, bs.new_prefix()
    for path in paths:
        t = index.path_id[path]
        link, op, anchor = None, None, None
        for a in p.tables:
            if t in g.union[a]:
                link, op, anchor = g.union[a][t], "union", a
                break
            if t in g.join[a] and link is None:
                link, op, anchor = g.join[a][t][0], "join", a
        if anchor is None:
            bs._attach(p, [t], Step("start", t), None, 0.0)
            continue
        parent = next(k for k, c in enumerate(p.clusters) if anchor in c)
        keys = None
        if op == "join":
            keys = (link.src_column, link.dst_column) if link.src_table == anchor else (link.dst_column, link.src_column)
        bs._attach(p, [t], Step(op, t, anchor, keys, None, link.score), parent, link.score)
    return p.value


@pytest.mark.parametrize("intent, plan, needed", [
    pytest.param(FIG2, FIG1_PLAN, FIG1_NEEDED, id="fig1"),
    pytest.param(FIG4, FIG4_PLAN, FIG4_NEEDED, id="fig4"),
])
def test_full_plan_beats_dropping_or_swapping_the_bridge_or_a_shard(index, intent, plan, needed):
    full = plan_value(index, intent, plan)
    assert full > 0
    others = [p for p in index.paths if p not in plan]
    for table, role in needed.items():
        dropped = [p for p in plan if p != table]
        assert plan_value(index, intent, dropped) < full, f"dropping the {role} {table}"
        for other in others:
            swapped = [other if p == table else p for p in plan]
            assert plan_value(index, intent, swapped) < full, f"swapping the {role} {table} for {other}"


@pytest.mark.parametrize("intent, plan", [(FIG2, FIG1_PLAN), (FIG4, FIG4_PLAN)], ids=["fig1", "fig4"])
def test_algorithm3_returns_the_full_plan(index, intent, plan):
    sup = Support(index, Lexicon(index), IntentGraph.from_json(intent), IGMSConfig())
    found = BeamSearch(index.graph, sup, SearchConfig(), IGMSConfig()).run()
    assert set(plan) <= {index.paths[t] for t in found.tables}


@pytest.mark.xfail(strict=True, reason="Eq. 6 is not monotone under correlated noise: lecturers adds almost no "
                   "atom support beyond professors, and U falls when it joins the cluster (module docstring)")
def test_fig1_second_shard_raises_u(index):
    full = plan_value(index, FIG2, FIG1_PLAN)
    assert plan_value(index, FIG2, [p for p in FIG1_PLAN if p != U + "lecturers.csv"]) < full
