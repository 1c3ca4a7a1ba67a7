"""The offline answer query on the example lake, against answers computed by hand from its CSVs."""
from __future__ import annotations

import json
from collections import Counter

import duckdb
import pytest

from raylake.fuse import fuse
from raylake.fuse.answer import answer_query
from tests.fuse.helpers import club_players, graph, rows


@pytest.fixture(scope="module")
def engine(example_index):
    from raylake.search.engine import Engine

    return Engine(example_index, relevance="off")


def test_group_by_count_with_value_filter(example_lake):
    """'How many players does each club in region USA have?': a count per club, a value filter."""
    g = graph([
        {"tree_id": "t1", "entity": "players", "attributes": []},
        {"tree_id": "t2", "entity": "club", "attributes": [
            {"attribute_id": "a1", "name": "region", "values": ["USA"],
             "evidence": {"columns": [["sports/club.csv", "Region", 1.0]]}}]},
    ])
    g.trees[0].evidence["tables"] = ["sports/player.csv"]
    g.trees[1].evidence["tables"] = ["sports/club.csv"]
    fused = fuse(club_players(example_lake), example_lake)
    ans = answer_query("How many players does each club in region USA have?", g, fused)
    clubs = {c["Club_ID"]: c for c in rows(example_lake, "sports/club.csv")}
    want = Counter(clubs[p["Club_ID"]]["Club_Name"] for p in rows(example_lake, "sports/player.csv")
                   if clubs[p["Club_ID"]]["Region"] == "USA")
    assert ans.reason is None
    assert ans.columns[1] == "count_star()"
    assert sorted(map(tuple, ans.rows)) == sorted(want.items())
    # the printed SQL is self-contained: DuckDB runs it over the lake files with the same rows
    assert sorted(duckdb.connect().sql(ans.sql).fetchall()) == sorted(want.items())


def test_superlative_and_negation_decline(example_lake):
    g = graph([{"tree_id": "t1", "entity": "club", "attributes": [
        {"attribute_id": "a1", "name": "club name", "values": [], "evidence": {"columns": [["sports/club.csv", "Club_Name", 1.0]]}},
        {"attribute_id": "a2", "name": "start year", "values": [],
         "evidence": {"columns": [["sports/club.csv", "Start_year", 1.0]], "aggregate": "min"}}]}])
    fused = fuse([{"op": "start", "new": "sports/club.csv", "anchor": None}], example_lake)
    ans = answer_query("What is the name of the club with the smallest start year?", g, fused)
    clubs = rows(example_lake, "sports/club.csv")
    assert ans.rows == [[min(clubs, key=lambda c: int(c["Start_year"]))["Club_Name"]]]
    # 'not' with no != in the graph: the grammar cannot say it, so no answer rather than a wrong one
    declined = answer_query("Which clubs did not start in 1978?", g, fused)
    assert declined.rows is None and declined.sql is None and "not" in declined.reason
    assert declined.to_json() is None


def test_engine_count_and_filtered_average(engine, example_lake):
    players = rows(example_lake, "sports/player.csv")
    ans = engine.ask("How many players are there?", answer=True).query()
    assert ans.rows == [[len(players)]]

    ans = engine.ask("What is the average points of players from the club with name 'AIB'?", answer=True).query()
    aib = {c["Club_ID"] for c in rows(example_lake, "sports/club.csv") if c["Club_Name"] == "AIB"}
    ids = {p["Player_ID"] for p in players if p["Club_ID"] in aib}
    pts = [int(r["Points"]) for r in rows(example_lake, "sports/points_2019.csv") if r["Player_ID"] in ids]
    pts += [int(r["POINTS"]) for r in rows(example_lake, "sports/points_2020.csv") if r["PlayerId"] in ids]
    assert ans.reason is None and len(ans.rows) == 1
    assert ans.rows[0][0] == pytest.approx(sum(pts) / len(pts))
    assert "'aib'" in ans.sql and "avg(" in ans.sql


def test_a_lower_case_word_no_plan_column_holds_is_no_filter(example_lake):
    """'belong' found in some other table's cells is no filter on this plan (it would empty the
    answer), and the answer says so; a value the question quotes is kept, even if it empties it."""
    fused = fuse([{"op": "start", "new": "sports/club.csv", "anchor": None}], example_lake)
    clubs = rows(example_lake, "sports/club.csv")

    def g(value):
        return graph([{"tree_id": "t1", "entity": "club", "attributes": [
            {"attribute_id": "a1", "name": "club name", "values": [], "evidence": {"columns": [["sports/club.csv", "Club_Name", 1.0]]}},
            {"attribute_id": "a2", "name": "region", "values": ["USA"], "evidence": {"columns": [["sports/club.csv", "Region", 1.0]]}},
            {"attribute_id": "a3", "name": "name", "values": [value], "evidence": {"columns": [["sports/club.csv", "Club_Name", 1.0]]}}]}])

    ans = answer_query("Which clubs in region USA do the players belong to?", g("belong"), fused)
    assert sorted(r[0] for r in ans.rows) == sorted(c["Club_Name"] for c in clubs if c["Region"] == "USA")
    assert any("'belong'" in x for x in ans.warnings) and "belong" not in ans.sql.rsplit("\n)\n", 1)[-1]
    kept = answer_query("Which clubs in region USA are named 'Zebra'?", g("Zebra"), fused)
    assert kept.rows == [] and "'zebra'" in kept.sql
    # an attribute whose only value is dropped still names a column: it is asked
    asked = graph([{"tree_id": "t1", "entity": "club", "attributes": [
        {"attribute_id": "a1", "name": "region", "values": ["elsewhere"], "evidence": {"columns": [["sports/club.csv", "Region", 1.0]]}}]}])
    ans = answer_query("List the region of clubs elsewhere.", asked, fused)
    assert sorted(r[0] for r in ans.rows) == sorted(c["Region"] for c in clubs)


def test_a_how_many_question_is_one_count(example_lake):
    """'How many players has the club whose region is USA?' is one number, not one per asked column;
    with 'each' it is one per club."""
    g = graph([
        {"tree_id": "t1", "entity": "players", "attributes": []},
        {"tree_id": "t2", "entity": "club", "attributes": [
            {"attribute_id": "a1", "name": "club name", "values": [], "evidence": {"columns": [["sports/club.csv", "Club_Name", 1.0]]}},
            {"attribute_id": "a2", "name": "region", "values": ["USA"], "evidence": {"columns": [["sports/club.csv", "Region", 1.0]]}}]},
    ])
    g.trees[0].evidence["tables"] = ["sports/player.csv"]
    g.trees[1].evidence["tables"] = ["sports/club.csv"]
    fused = fuse(club_players(example_lake), example_lake)
    usa = {c["Club_ID"] for c in rows(example_lake, "sports/club.csv") if c["Region"] == "USA"}
    players = [p for p in rows(example_lake, "sports/player.csv") if p["Club_ID"] in usa]
    assert answer_query("How many players do the club names in region USA have?", g, fused).rows == [[len(players)]]
    each = answer_query("How many players does each club name in region USA have?", g, fused)
    assert len(each.rows) == len({p["Club_ID"] for p in players}) > 1


def test_join_that_multiplies_is_reported(example_lake):
    """Points rows repeat each player: a count of players per club must not count matches."""
    g = graph([{"tree_id": "t1", "entity": "players", "attributes": []},
               {"tree_id": "t2", "entity": "club", "attributes": []}])
    g.trees[0].evidence["tables"] = ["sports/player.csv"]
    g.trees[1].evidence["tables"] = ["sports/club.csv"]
    steps = club_players(example_lake) + [{"op": "join", "new": "sports/points_2019.csv", "anchor": "sports/player.csv",
                                           "keys": {"anchor_column": "Player_ID", "new_column": "Player_ID"}}]
    fused = fuse(steps, example_lake)
    ans = answer_query("How many players play in each club?", g, fused)
    assert any("repeat rows" in w for w in ans.warnings)
    scored = {r["Player_ID"] for r in rows(example_lake, "sports/points_2019.csv")}
    clubs = {c["Club_ID"]: c["Club_Name"] for c in rows(example_lake, "sports/club.csv")}
    want = Counter(clubs[p["Club_ID"]] for p in rows(example_lake, "sports/player.csv") if p["Player_ID"] in scored)
    assert sorted(map(tuple, ans.rows)) == sorted(want.items())


def test_cli_json_carries_sql_and_answer(example_index, example_lake, capsys):
    from raylake.cli import main

    assert main(["ask", "How many players are there?", "--index-dir", example_index, "--json", "--offline", "--relevance", "off"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sql"].startswith("WITH fused AS (") and "count(*)" in out["sql"]
    assert out["answer"]["columns"] == ["count_star()"] and out["answer"]["rows"] == [[len(rows(example_lake, "sports/player.csv"))]]
    assert main(["ask", "How many players are there?", "--index-dir", example_index, "--sql-only", "--offline", "--relevance", "off"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("WITH fused AS (") and "count(*)" in text


def _clubs_with_players(op, values, words="club name"):
    g = graph([
        {"tree_id": "t1", "entity": "clubs", "attributes": [
            {"attribute_id": "a1", "name": "club name", "values": values,
             "evidence": {"columns": [["sports/club.csv", "Club_Name", 1.0]], "words": words,
                          "compare": {v: op for v in values}}}]},
        {"tree_id": "t2", "entity": "players", "attributes": []},
    ])
    g.trees[0].evidence["tables"] = ["sports/club.csv"]
    g.trees[1].evidence["tables"] = ["sports/player.csv"]
    return g


def test_number_before_an_entity_noun_counts_its_rows(example_lake):
    """'Which clubs have more than 3 players? Show the club name.': HAVING over the players' rows, not a filter
    on the club name the extractor hung the number on."""
    clubs = {c["Club_ID"]: c["Club_Name"] for c in rows(example_lake, "sports/club.csv")}
    per_club = Counter(p["Club_ID"] for p in rows(example_lake, "sports/player.csv"))
    fused = fuse(club_players(example_lake), example_lake)
    ans = answer_query("Which clubs have more than 3 players? Show the club name.", _clubs_with_players(">", ["3"]), fused)
    assert ans.reason is None and "HAVING" in ans.sql
    assert sorted(r[0] for r in ans.rows) == sorted(clubs[c] for c, n in per_club.items() if n > 3)
    assert sorted(duckdb.connect().sql(ans.sql).fetchall()) == sorted((r[0],) for r in ans.rows)
    # 'between one and three' counts too, both bounds inclusive
    ans = answer_query("Which clubs have between 2 and 3 players?", _clubs_with_players("between", ["2", "3"], ""), fused)
    assert sorted(r[0] for r in ans.rows) == sorted(clubs[c] for c, n in per_club.items() if 2 <= n <= 3)
    # a number the attribute's own noun follows is a plain filter: '... whose club name is 3' stays a WHERE
    ans = answer_query("Which players are in clubs with 3 club names?", _clubs_with_players("=", ["3"]), fused)
    assert ans.sql is not None and "HAVING" not in ans.sql and "WHERE" in ans.sql


def test_the_most_of_an_entity_orders_by_its_count(example_lake):
    """'Which club has the most players? Show its name.': the club counting most players, one row."""
    g = graph([
        {"tree_id": "t1", "entity": "club", "attributes": [
            {"attribute_id": "a1", "name": "club name", "values": [],
             "evidence": {"columns": [["sports/club.csv", "Club_Name", 1.0]], "words": "name"}}]},
        {"tree_id": "t2", "entity": "players", "attributes": []},
    ])
    g.trees[0].evidence["tables"] = ["sports/club.csv"]
    g.trees[1].evidence["tables"] = ["sports/player.csv"]
    clubs = {c["Club_ID"]: c["Club_Name"] for c in rows(example_lake, "sports/club.csv")}
    per_club = Counter(p["Club_ID"] for p in rows(example_lake, "sports/player.csv"))
    fused = fuse(club_players(example_lake), example_lake)
    ans = answer_query("Which club has the most players? Show its name.", g, fused)
    top, n = per_club.most_common(1)[0]
    assert n > sorted(per_club.values())[-2]  # the example lake has one such club: the answer is not a tie's pick
    assert ans.rows == [[clubs[top]]] and "LIMIT 1" in ans.sql
    ans = answer_query("Which club has the fewest players? Show its name.", g, fused)
    fewest = min(per_club.values())
    assert [r[0] for r in ans.rows][0] in {clubs[c] for c, k in per_club.items() if k == fewest}


def test_a_sort_key_named_only_after_the_cue_is_not_shown(example_lake):
    """'List the names of players in ascending order of the start year of their club.': sorted by the
    club's start year, and only the names shown (as the question asks)."""
    g = graph([
        {"tree_id": "t1", "entity": "players", "attributes": [
            {"attribute_id": "a1", "name": "name", "values": [],
             "evidence": {"columns": [["sports/player.csv", "Name", 1.0]], "words": "names"}}]},
        {"tree_id": "t2", "entity": "club", "attributes": [
            {"attribute_id": "a2", "name": "start year", "values": [],
             "evidence": {"columns": [["sports/club.csv", "Start_year", 1.0]], "words": "start year"}}]},
    ])
    g.trees[0].evidence["tables"] = ["sports/player.csv"]
    g.trees[1].evidence["tables"] = ["sports/club.csv"]
    year = {c["Club_ID"]: int(c["Start_year"]) for c in rows(example_lake, "sports/club.csv")}
    players = rows(example_lake, "sports/player.csv")
    fused = fuse(club_players(example_lake), example_lake)
    ans = answer_query("List the names of players in ascending order of the start year of their club.", g, fused)
    assert ans.reason is None and len(ans.columns) == 1 and "ORDER BY" in ans.sql
    assert sorted(r[0] for r in ans.rows) == sorted(p["Name"] for p in players)
    by_name = {p["Name"]: year[p["Club_ID"]] for p in players}
    shown = [by_name[r[0]] for r in ans.rows]
    assert shown == sorted(shown)
    # asked before the cue, it is shown: 'the names and start years of ... in order of start year'
    ans = answer_query("List the names and start years of players' clubs in order of start year.", g, fused)
    assert len(ans.columns) == 2
