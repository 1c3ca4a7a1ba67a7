"""Stage 4 of the search (``BeamSearch._complete``): the extractor's chosen tables join the plan.

The beam stops where no table pays λ; a table the extractor chose for one of the intent's
trees then still joins the plan when one join link attaches it — through the strongest link
(the table it is keyed to, not a chance overlap), with its shards, within the budget L.
The last test runs Algorithm 3 with λ at the best first table's gain, so that the beam stops
after it. The intent is Fig. 4's ("the average points of players from the club with name
'AIB'"), its trees naming the example lake's sports tables as the offline extractor's
evidence does.
"""
from __future__ import annotations

import copy

import pytest

from raylake.config import IGMSConfig, SearchConfig
from raylake.index.reader import LakeIndex
from raylake.intent.lexicon import Lexicon
from raylake.intent.model import IntentGraph
from raylake.search.beam import BeamSearch
from raylake.search.support import Support
from test_worked_examples import FIG4  # the same directory: pytest puts it on the path

S = "sports/"


@pytest.fixture(scope="module")
def index(example_index):
    return LakeIndex.load(example_index)


def search(index, chosen: list[str], budget: int = 10, min_gain: float = SearchConfig.min_gain) -> BeamSearch:
    intent = copy.deepcopy(FIG4)
    for tree, path in zip(intent["trees"], chosen):
        tree["evidence"] = {"tables": [path]}
    sup = Support(index, Lexicon(index), IntentGraph.from_json(intent), IGMSConfig())
    return BeamSearch(index.graph, sup, SearchConfig(budget=budget, min_gain=min_gain), IGMSConfig())


def started(index, bs: BeamSearch, path: str):
    """A prefix holding ``path`` and its shards, as the beam's first action leaves it."""
    prefix, _, _ = bs.apply(bs.new_prefix(), ((None, index.path_id[path], "start", None),))
    return prefix


def steps(index, prefix) -> list[tuple[str, str, str | None]]:
    return [(index.paths[s.new], s.role, index.paths[s.anchor] if s.anchor is not None else None) for s in prefix.steps]


def test_chosen_tables_join_through_their_strongest_links(index):
    bs = search(index, [S + "club.csv", S + "player.csv", S + "points_2019.csv"])
    g = index.graph
    club, player, points = (index.path_id[S + n] for n in ("club.csv", "player.csv", "points_2019.csv"))
    assert club in g.join[points] and g.join[points][club][0].score < g.join[player][club][0].score  # a chance link exists
    done = bs._complete(started(index, bs, S + "points_2019.csv"))
    assert steps(index, done) == [
        (S + "points_2019.csv", "anchor", None),
        (S + "points_2020.csv", "union shard", S + "points_2019.csv"),
        (S + "player.csv", "intent", S + "points_2019.csv"),
        (S + "club.csv", "intent", S + "player.csv"),  # keyed to player, not the weaker points link
    ]
    assert done.value > started(index, bs, S + "points_2019.csv").value


def test_a_chosen_table_no_link_attaches_stays_out(index):
    bs = search(index, ["universities/departments.csv", S + "player.csv"])
    departments = index.graph.join[index.path_id["universities/departments.csv"]]
    assert not any(index.path_id[S + n] in departments for n in ("club.csv", "player.csv"))
    done = bs._complete(started(index, bs, S + "club.csv"))
    assert [p for p, _, _ in steps(index, done)] == [S + "club.csv", S + "player.csv"]


def test_completion_keeps_to_the_budget(index):
    bs = search(index, [S + "club.csv", S + "player.csv", S + "points_2019.csv"], budget=3)
    done = bs._complete(started(index, bs, S + "points_2019.csv"))
    assert [p for p, _, _ in steps(index, done)] == [S + "points_2019.csv", S + "points_2020.csv", S + "player.csv"]
    # a cluster whose shards would pass L does not enter
    bs = search(index, [S + "club.csv", S + "player.csv", S + "points_2019.csv"], budget=3)
    done = bs._complete(started(index, bs, S + "club.csv"))
    assert [p for p, _, _ in steps(index, done)] == [S + "club.csv", S + "player.csv"]


@pytest.mark.parametrize("chosen, start", [
    ([], S + "club.csv"),  # the extractor chose no table
    ([S + "club.csv"], S + "club.csv"),  # the one it chose is the plan
    ([S + "points_2020.csv"], S + "points_2019.csv"),  # the plan holds it as the start's union shard
])
def test_no_missing_chosen_table_no_completion(index, chosen, start):
    bs = search(index, chosen)
    before = started(index, bs, start)
    done = bs._complete(before)
    assert steps(index, done) == steps(index, before) and done.value == before.value


def test_algorithm3_completes_the_plan_the_beam_stops_short_of(index):
    chosen = [S + "club.csv", S + "player.csv", S + "points_2019.csv"]
    bs = search(index, chosen)
    root = bs.new_prefix()
    lam = max(bs.apply(root, action)[1] for action in bs.actions(root))  # the best first table's gain
    plan = search(index, chosen, min_gain=lam).run()
    roles = {index.paths[s.new]: s.role for s in plan.steps}
    assert set(chosen) <= set(roles)  # only the first table paid λ; the others joined in Stage 4
    assert [p for p, r in roles.items() if r == "intent"] == [S + "player.csv", S + "club.csv"]


def test_connect_takes_only_the_chosen_shards_and_always_starts_the_plan(index):
    """``connect`` (the learned completion's join step): a shard comes with its table only when it
    was chosen too, and the first table starts the plan even when its cluster alone passes the budget."""
    bs = search(index, [S + "club.csv", S + "player.csv", S + "points_2019.csv"])
    ids = [index.path_id[S + n] for n in ("points_2019.csv", "player.csv")]
    assert sorted(index.paths[t] for t in bs.connect(ids).tables) == [S + "player.csv", S + "points_2019.csv"]
    both = [index.path_id[S + "points_2019.csv"], index.path_id[S + "points_2020.csv"], ids[1]]
    plan = bs.connect(both)
    assert ("union shard", S + "points_2020.csv") in [(s.role, index.paths[s.new]) for s in plan.steps]
    tight = search(index, [S + "points_2019.csv"], budget=1)
    assert [index.paths[t] for t in tight.connect(both).tables] == [S + "points_2019.csv"]
