"""Which fused column an attribute is read from (:mod:`raylake.fuse.plan_columns`), on the example lake."""
from __future__ import annotations

import pytest

from raylake.fuse import fuse
from raylake.fuse.answer import answer_query
from raylake.fuse.plan_columns import PlanColumns
from tests.fuse.helpers import graph, rows


@pytest.fixture(scope="module")
def engine(example_index):
    from raylake.search.engine import Engine

    return Engine(example_index, relevance="off")


def test_an_attribute_without_planned_evidence_reads_its_own_tables_header_first(example_lake):
    """Evidence naming no plan column: the header sharing its words, the tree's own table first."""
    steps = [{"op": "start", "new": "sports/player.csv", "anchor": None},
             {"op": "join", "new": "sports/club.csv", "anchor": "sports/player.csv",
              "keys": {"anchor_column": "Club_ID", "new_column": "Club_ID"}}]
    g = graph([{"tree_id": "t1", "entity": "club", "attributes": [
        {"attribute_id": "a1", "name": "names", "values": [], "evidence": {"columns": [["other/x.csv", "name", 1.0]]}},
        {"attribute_id": "a2", "name": "club id", "values": [], "evidence": {}}]}])
    g.trees[0].evidence["tables"] = ["sports/club.csv"]
    cols = PlanColumns("Which clubs?", g, fuse(steps, example_lake))
    assert cols.column(g.trees[0], g.trees[0].attributes[0]) == cols.names["sports/club.csv"]["Club_Name"]
    assert cols.column(g.trees[0], g.trees[0].attributes[1]) == cols.names["sports/club.csv"]["Club_ID"]
    assert cols.numeric(cols.names["sports/club.csv"]["Start_year"]) and not cols.numeric(cols.names["sports/club.csv"]["Region"])
    assert cols.holds(cols.names["sports/club.csv"]["Region"], " usa ")


def test_a_value_is_read_from_the_plan_column_that_holds_it(example_lake):
    """Evidence naming a column that cannot hold the value (no club is named 'USA'; a year is no
    name) gives way to the plan column that can: the one holding the text, the numeric one its words match."""
    fused = fuse([{"op": "start", "new": "sports/club.csv", "anchor": None}], example_lake)
    clubs = rows(example_lake, "sports/club.csv")
    wrong = {"columns": [["sports/club.csv", "Club_Name", 1.0]]}
    for name, value, want in (("name", "USA", [c for c in clubs if c["Region"] == "USA"]),
                              ("year", "1978", [c for c in clubs if c["Start_year"] == "1978"])):
        g = graph([{"tree_id": "t1", "entity": "club", "attributes": [
            {"attribute_id": "a1", "name": "club name", "values": [], "evidence": dict(wrong)},
            {"attribute_id": "a2", "name": name, "values": [value], "evidence": dict(wrong)}]}])
        ans = answer_query(f"Which clubs have {name} {value}?", g, fused)
        assert want and sorted(r[0] for r in ans.rows) == sorted(c["Club_Name"] for c in want), (name, ans.sql)



def test_the_engine_reads_abbreviated_and_respelled_headers(engine):
    """An attribute's words find the plan's own header where the lake-wide match kept others:
    an abbreviation (``UnivID``), another spelling (``enrollment_year``), nothing for unrelated words."""
    assert engine.plan_columns("university", ["universities/professors.csv"])[0][:2] == ("universities/professors.csv", "UnivID")
    assert engine.plan_columns("enrolment year", ["misc/students.csv"])[0][:2] == ("misc/students.csv", "enrollment_year")
    assert engine.plan_columns("last names", ["misc/students.csv"])[0][1] == "last_name"
    assert engine.plan_columns("price", ["misc/students.csv"]) == []
