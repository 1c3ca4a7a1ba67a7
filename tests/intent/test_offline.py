"""OfflineExtractor on example-lake questions: entities, values (quoted, not possessive), joins and bridges, with evidence; 'ids' as the plural of id; an attribute no tree holds dropped unless its header is close; counted number words; verbs and plurals no values; the joint choice's runners-up; the neighbourhood cosine; a column named twice; a bare year; what an attribute is of, and the word that only modifies it; a value goes to the attribute of the tree whose table holds it."""
from __future__ import annotations

import pytest

from raylake.intent.model import IntentGraph


@pytest.fixture(scope="module")
def extractor(example_index):
    from raylake.index.reader import LakeIndex
    from raylake.intent.offline import OfflineExtractor

    return OfflineExtractor(LakeIndex.load(example_index))


def _tree_for(graph: IntentGraph, table: str):
    return [t for t in graph.trees if t.evidence.get("tables") and t.evidence["tables"][0] == table]


def test_entities_values_and_join_with_evidence(extractor):
    g = extractor.extract("What are the total points of players of each club in the region 'Leinster'?")
    g.validate()
    players, clubs = _tree_for(g, "sports/player.csv"), _tree_for(g, "sports/club.csv")
    assert players and clubs
    assert players[0].evidence["words"] == ["players"] and clubs[0].evidence["words"] == ["club"]
    region = next(a for a in clubs[0].attributes if "Leinster" in a.values)
    assert region.evidence["columns"][0][:2] == ["sports/club.csv", "Region"]
    # no named table has a Points header; the points shards, joined to player, do
    (scores,) = [t for t in g.trees if t.evidence.get("implied") == "attribute held by a table joined to the named ones"]
    assert scores.evidence["tables"][0].startswith("sports/points_")
    points = next(a for a in scores.attributes if a.name == "points")
    assert points.evidence["aggregate"] == "sum"
    by_pair = {frozenset((j.from_tree, j.to_tree)): j for j in g.joins}
    assert set(by_pair) == {frozenset((players[0].tree_id, clubs[0].tree_id)), frozenset((players[0].tree_id, scores.tree_id))}
    club_join = by_pair[frozenset((players[0].tree_id, clubs[0].tree_id))]
    assert club_join.evidence["lake"][1] == club_join.evidence["lake"][3] == "Club_ID"


def test_numeric_value_and_comparison(extractor):
    g = extractor.extract("List the names of patients older than 60 and the hospital they stay in.")
    patients = _tree_for(g, "misc/patients.csv")[0]
    age = next(a for a in patients.attributes if "60" in a.values)
    assert age.evidence["columns"][0][:2] == ["misc/patients.csv", "age"]
    assert age.evidence["compare"] == {"60": ">"}
    names = next(a for a in patients.attributes if a.name == "names")
    assert names.evidence["columns"][0][0] == "misc/patients.csv"  # its entity's 'name', not any 'name'
    assert _tree_for(g, "misc/hospitals.csv")


def test_plural_possessives_quote_nothing(extractor):
    g = extractor.extract("Show the players' names and their clubs' regions, for the region 'Leinster'.")
    assert sorted(v for t in g.trees for a in t.attributes for v in a.values) == ["Leinster"]


def test_bridge_entity_for_an_unnamed_table(extractor):
    g = extractor.extract("For each club, show the points of every match.")
    bridge = [t for t in g.trees if str(t.evidence.get("implied", "")).startswith("bridge")]
    assert [t.evidence["tables"] for t in bridge] == [["sports/player.csv"]]
    b = bridge[0].tree_id
    assert sum(b in (j.from_tree, j.to_tree) for j in g.joins) == 2
    assert all(j.evidence["reason"] == "bridge" for j in g.joins)


def test_deterministic_and_atoms_for_search(extractor):
    q = "Which instructors teach at universities in the state 'California'?"
    a, b = extractor.extract(q), extractor.extract(q)
    assert a.to_json(evidence=True) == b.to_json(evidence=True)
    kinds = {at.kind for at in a.atoms()}
    assert {"entity", "attribute", "value", "has_value"} <= kinds
    assert IntentGraph.from_json(a.to_json(evidence=True)).to_json() == a.to_json()


def test_question_matching_nothing_still_gives_a_valid_graph(extractor):
    g = extractor.extract("zzzz qqqq")
    g.validate()
    assert len(g.trees) == 1


def test_closeness_follows_join_paths(extractor):
    idx = extractor.index
    player, club = idx.paths.index("sports/player.csv"), idx.paths.index("sports/club.csv")
    near = extractor.ranker.near(player)
    assert near[player] == 1.0
    assert 0.0 < near[club] < 1.0  # one Club_ID join link away
    assert near[idx.paths.index("misc/weather.csv")] < near[club]  # no key in common


def test_joint_choice_prefers_a_connected_set(extractor):
    idx = extractor.index
    player, club, weather = (idx.paths.index(p) for p in ("sports/player.csv", "sports/club.csv", "misc/weather.csv"))
    # entity 0 is torn between an unrelated table and the club; entity 1 is the player
    for first in (weather, club):
        ranked = [sorted([(weather, 1.0), (club, 1.0)], key=lambda x: x[0] != first), [(player, 1.0)]]
        assert extractor.chooser.choose(ranked)[0] == {0: club, 1: player}


def test_a_runner_up_is_the_table_of_the_next_coherent_set(extractor):
    idx = extractor.index
    player, club, weather, points = (idx.paths.index(p) for p in (
        "sports/player.csv", "sports/club.csv", "misc/weather.csv", "sports/points_2019.csv"))
    # on its own score the weather table is entity 0's second table; with the player beside
    # it, the points table (joined to player) reads the question better
    ranked = [[(club, 1.0), (weather, 0.99), (points, 0.9)], [(player, 1.0)]]
    chosen, runners_up = extractor.chooser.choose(ranked)
    assert chosen == {0: club, 1: player}
    assert runners_up[0][:2] == [points, weather]


def test_neighbourhood_cosine_reads_the_tables_around_a_table(extractor):
    import numpy as np

    idx = extractor.index
    player, club, weather = (idx.paths.index(p) for p in ("sports/player.csv", "sports/club.csv", "misc/weather.csv"))
    like_club = np.zeros(idx.n_tables)
    like_club[club] = 1.0
    near_club, near_player, near_weather = extractor.ranker.neighbourhood_cos(np.asarray([club, player, weather]), like_club)
    assert near_player > 2 * near_weather  # player joins club by its key; weather shares no key with it
    assert near_club == 0.0  # a table's own cosine is the question term's, not its neighbourhood's
    # where every table reads like the question, the mean would be 1: shrunk by one table's weight
    (everywhere,) = extractor.ranker.neighbourhood_cos(np.asarray([player]), np.ones(idx.n_tables))
    assert 0.0 < everywhere < 1.0


def test_ids_is_the_plural_of_id(extractor):
    from raylake.intent.lexicon import lemma

    assert lemma("ids") == lemma("IDs") == "id"
    assert lemma("movies") == "movie" and lemma("cities") == "city"
    g = extractor.extract("Show the player ids of players from the club 'AIB'.")
    (ids,) = [a for t in g.trees for a in t.attributes if a.name == "player ids"]
    assert ids.evidence["columns"][0][:2] == ["sports/player.csv", "Player_ID"]


def test_an_attribute_no_tree_holds_needs_a_close_header(extractor):
    from raylake.intent.model import Attribute, IntentTree, Join
    from raylake.intent.offline.forest import drop_strays

    def attr(aid, path, col, score, **kw):
        return Attribute(aid, col.lower(), kw.pop("values", []), {"columns": [[path, col, score]], **kw})

    club = IntentTree("t1", "club", [
        attr("a1", "sports/club.csv", "Region", 0.7),  # its own table's header, however weak
        attr("a2", "misc/stores.csv", "city", 0.8),  # a table no tree chose, a header that only resembles the words
        attr("a3", "misc/stores.csv", "name", 1.0),  # ... a header that spells them
        attr("a4", "misc/stores.csv", "region", 0.6, values=["Leinster"]),  # ... constraining a value
        attr("a5", "misc/stores.csv", "store_id", 0.5),  # ... used by a join
        attr("a6", "misc/stores.csv", "id", 0.5, role="key"),
    ], {"tables": ["sports/club.csv", "sports/player.csv"]})
    player = IntentTree("t2", "player", [attr("a7", "sports/player.csv", "Club_ID", 1.0)], {"tables": ["sports/player.csv"]})
    drop_strays([club, player], [Join("t1", "a5", "t2", "a7")], extractor.settings.stray_match)
    assert [a.attribute_id for a in club.attributes] == ["a1", "a3", "a4", "a5", "a6"]
    assert [a.attribute_id for a in player.attributes] == ["a7"]


def test_a_counted_number_word_is_a_number(extractor):
    g = extractor.extract("Which clubs have more than two players, and which players scored at least once?")
    compared = {v: a.evidence.get("compare", {}).get(v) for t in g.trees for a in t.attributes for v in a.values}
    assert compared == {"2": ">", "1": ">="}
    # without a comparison, 'one' is no value: "the one club"
    g = extractor.extract("Which one club has the most players?")
    assert not [v for t in g.trees for a in t.attributes for v in a.values]


def test_a_verb_or_a_plural_some_cell_holds_is_no_value(extractor):
    def values(q):
        return sorted(v for t in extractor.extract(q).trees for a in t.attributes for v in a.values)

    # player.Position holds 'Guard', products.category 'tools': as a verb and as a plural noun they are no values
    assert values("Which clubs have players who guard the region 'Leinster'?") == ["Leinster"]
    assert values("Show the tools of each store.") == []
    # beside a header word of the column holding it, a plural is that value
    assert values("How many products are in the category tools?") == ["tools"]


def test_a_column_named_twice_is_one_attribute_unless_aggregated_two_ways(extractor):
    g = extractor.extract("List the names of patients older than 60, ordered by their age.")
    patients = _tree_for(g, "misc/patients.csv")[0]
    (age,) = [a for a in patients.attributes if a.evidence["columns"][0][:2] == ["misc/patients.csv", "age"]]
    assert age.values == ["60"] and age.evidence["compare"] == {"60": ">"}
    # named by the words that spell the column, the other kept as evidence
    assert age.name == "age" and age.evidence["also"] == ["older"]
    g = extractor.extract("What is the average age of the patients with the highest age in each hospital?")
    patients = _tree_for(g, "misc/patients.csv")[0]
    ages = [a for a in patients.attributes if a.evidence["columns"][0][:2] == ["misc/patients.csv", "age"]]
    assert sorted(a.evidence["aggregate"] for a in ages) == ["avg", "max"]


@pytest.mark.parametrize("question, table, column, year, op", [
    ("List the titles of movies directed before 2000.", "misc/movies.csv", "year", "2000", "<"),
    ("Which clubs were started after 1990?", "sports/club.csv", "Start_year", "1990", ">"),
])
def test_a_bare_year_constrains_a_year_column_of_the_question_tables(extractor, question, table, column, year, op):
    tree = _tree_for(extractor.extract(question), table)[0]
    (attr,) = [a for a in tree.attributes if year in a.values]
    assert attr.evidence["columns"][0][:2] == [table, column] and attr.evidence["compare"] == {year: op}


def test_what_an_attribute_is_of_is_an_entity_though_no_header_names_it(extractor):
    # no header says 'lecturer': the word after 'positions of' is still the thing asked about,
    # found by its table's text, not the player table whose Position is the lake's other one
    g = extractor.extract("What are the positions of lecturers?")
    assert [t.evidence["words"] for t in g.trees] == [["lecturers"]]
    assert g.trees[0].evidence["tables"][0] == "universities/lecturers.csv"


def test_a_word_right_before_the_thing_an_attribute_is_of_modifies_it(extractor):
    # 'oldest' follows 'names of the' but only describes the patients: no tree of its own
    g = extractor.extract("What are the names of the oldest patients?")
    assert [t.evidence["words"] for t in g.trees] == [["patients"]]
    assert g.trees[0].evidence["tables"][0] == "misc/patients.csv"


def test_a_value_another_table_holds_is_not_the_attribute_of_this_tree(extractor):
    # the store table's name holds 'Store Paris', not the employees' name that the words
    # 'names of employees' ask for: the value goes to the store tree's own column
    g = extractor.extract("Show the names of employees who work in the store Store Paris.")
    employees, stores = _tree_for(g, "misc/employees.csv")[0], _tree_for(g, "misc/stores.csv")[0]
    assert [v for a in employees.attributes for v in a.values] == []
    (held,) = [a for a in stores.attributes if a.values]
    assert held.values == ["Store Paris"] and held.evidence["columns"][0][:2] == ["misc/stores.csv", "store_name"]
