"""'not' as a set difference and 'both' as an intersection (:mod:`raylake.fuse.setops`), on the example lake."""
from __future__ import annotations

from collections import Counter

import duckdb

from raylake.fuse import fuse
from raylake.fuse.answer import answer_query
from tests.fuse.helpers import club_players, graph, rows


def test_two_attributes_equal_on_one_column_are_either(example_lake):
    """'clubs from France or UK' read as two attributes that land on one column: either value,
    not an AND no row can satisfy; with 'both', the intersection of the two."""
    fused = fuse([{"op": "start", "new": "sports/club.csv", "anchor": None}], example_lake)
    clubs = rows(example_lake, "sports/club.csv")
    region = {"columns": [["sports/club.csv", "Region", 1.0]]}
    g = graph([{"tree_id": "t1", "entity": "club", "attributes": [
        {"attribute_id": "a1", "name": "club name", "values": [], "evidence": {"columns": [["sports/club.csv", "Club_Name", 1.0]]}},
        {"attribute_id": "a2", "name": "region", "values": ["France"], "evidence": dict(region)},
        {"attribute_id": "a3", "name": "country", "values": ["UK"], "evidence": dict(region)}]}])
    ans = answer_query("Which clubs are from France or UK?", g, fused)
    assert sorted(r[0] for r in ans.rows) == sorted(c["Club_Name"] for c in clubs if c["Region"] in ("France", "UK"))
    both = answer_query("Which club names are both in France and in UK?", g, fused)
    assert "INTERSECT" in both.sql and both.rows == []


def club_graph(values=(), region=None):
    """Clubs (asked: name) and players (position = each of ``values``); ``region`` filters the clubs."""
    club = [{"attribute_id": "a1", "name": "club name", "values": [], "evidence": {"columns": [["sports/club.csv", "Club_Name", 1.0]]}}]
    if region:
        club.append({"attribute_id": "a3", "name": "region", "values": [region],
                     "evidence": {"columns": [["sports/club.csv", "Region", 1.0]]}})
    g = graph([{"tree_id": "t1", "entity": "clubs", "attributes": club},
               {"tree_id": "t2", "entity": "player", "attributes": [
                   {"attribute_id": "a2", "name": "position", "values": list(values),
                    "evidence": {"columns": [["sports/player.csv", "Position", 1.0]]}}] if values else []}])
    g.trees[0].evidence["tables"] = ["sports/club.csv"]
    g.trees[1].evidence["tables"] = ["sports/player.csv"]
    return g


def test_negation_is_a_set_difference_over_the_asked_table(example_lake):
    """'not' / 'no' / "n't": the asked table's rows that the negated join and filters do not reach,
    read from the table's own part (the fusion's inner join dropped them), with a filter said
    before the cue kept outside the negation."""
    players, clubs = rows(example_lake, "sports/player.csv"), rows(example_lake, "sports/club.csv")
    fused = fuse(club_players(example_lake), example_lake)
    guards = {p["Club_ID"] for p in players if p["Position"] == "Guard"}

    ans = answer_query("Which clubs have no player in position Guard?", club_graph(["Guard"]), fused)
    assert ans.reason is None and "NOT EXISTS" in ans.sql
    assert sorted(r[0] for r in ans.rows) == sorted(c["Club_Name"] for c in clubs if c["Club_ID"] not in guards)
    # the printed SQL is self-contained and gives the same rows
    assert sorted(duckdb.connect().sql(ans.sql).fetchall()) == sorted(map(tuple, ans.rows))

    ans = answer_query("Which clubs in region USA have no player in position Guard?", club_graph(["Guard"], "USA"), fused)
    assert sorted(r[0] for r in ans.rows) == sorted(c["Club_Name"] for c in clubs if c["Club_ID"] not in guards and c["Region"] == "USA")

    # the rows no join reaches: players with no points row in 2019 (fusion's inner join dropped them)
    g = graph([{"tree_id": "t1", "entity": "players", "attributes": [
        {"attribute_id": "a1", "name": "name", "values": [], "evidence": {"columns": [["sports/player.csv", "Name", 1.0]]}}]},
        {"tree_id": "t2", "entity": "points", "attributes": []}])
    g.trees[0].evidence["tables"] = ["sports/player.csv"]
    steps = [{"op": "start", "new": "sports/player.csv", "anchor": None},
             {"op": "join", "new": "sports/points_2019.csv", "anchor": "sports/player.csv",
              "keys": {"anchor_column": "Player_ID", "new_column": "Player_ID"}}]
    scored = {r["Player_ID"] for r in rows(example_lake, "sports/points_2019.csv")}
    want = Counter(p["Name"] for p in players if p["Player_ID"] not in scored)
    assert want and len(want) < len(players)
    ans = answer_query("Which players did not score points in 2019?", g, fuse(steps, example_lake))
    assert Counter(r[0] for r in ans.rows) == want


def test_count_of_a_negation_and_both_as_an_intersection(example_lake):
    players, clubs = rows(example_lake, "sports/player.csv"), rows(example_lake, "sports/club.csv")
    fused = fuse(club_players(example_lake), example_lake)
    guards = {p["Club_ID"] for p in players if p["Position"] == "Guard"}
    g = club_graph(["Guard"])
    g.trees[0].attributes = []
    ans = answer_query("How many clubs don't have a player in position Guard?", g, fused)
    assert ans.rows == [[sum(c["Club_ID"] not in guards for c in clubs)]]

    both = answer_query("Which clubs have both a player in position Guard and one in position Center?",
                        club_graph(["Guard", "Center"]), fused)
    centers = {p["Club_ID"] for p in players if p["Position"] == "Center"}
    assert "INTERSECT" in both.sql
    assert sorted(r[0] for r in both.rows) == sorted(c["Club_Name"] for c in clubs if c["Club_ID"] in guards & centers)
    assert sorted(duckdb.connect().sql(both.sql).fetchall()) == sorted(map(tuple, both.rows))
    # without the cue, two values of one attribute are either one
    either = answer_query("Which clubs have a player in position Guard or Center?", club_graph(["Guard", "Center"]), fused)
    assert sorted(set(r[0] for r in either.rows)) == sorted(c["Club_Name"] for c in clubs if c["Club_ID"] in guards | centers)
