"""Every tool through the Python API on the example lake, checked against the lake's files."""
from __future__ import annotations

import json
import re

import pytest

from raylake.tools import (
    TOOLS, ToolError, column_search, find_column, inspect_table, joinable_columns, schema_correspondence, sql,
    value_overlap, value_search,
)


def test_column_search_finds_the_header_and_honours_threshold_and_limit(toolbox):
    out = column_search(toolbox, "club name", threshold=0.3, limit=3)
    assert len(out["columns"]) <= 3
    top = out["columns"][0]
    assert top["column"] == "Club_Name" and "sports/club.csv" in top["tables"]
    assert all(c["score"] >= 0.3 for c in out["columns"])
    assert [c["score"] for c in out["columns"]] == sorted((c["score"] for c in out["columns"]), reverse=True)
    assert len({c["column"] for c in out["columns"]}) == len(out["columns"])  # distinct names
    strict = column_search(toolbox, "club name", threshold=0.99, limit=3)
    assert all(c["score"] >= 0.99 for c in strict["columns"]) and len(strict["columns"]) < 3
    json.dumps(out)


def test_find_column_ignores_case_and_underscores(toolbox):
    out = find_column(toolbox, "club id")
    assert {(m["table"], m["column"]) for m in out["matches"]} >= {("sports/club.csv", "Club_ID"), ("sports/player.csv", "Club_ID")}


def test_value_search_exact_and_substring(toolbox, read_rows):
    out = value_search(toolbox, "  aib ")
    assert {"table": "sports/club.csv", "column": "Club_Name", "value": "aib"} in out["matches"]
    part = value_search(toolbox, "mariehamn", exact=False)
    names = {r["Club_Name"].lower() for r in read_rows("sports/club.csv") if "mariehamn" in r["Club_Name"].lower()}
    assert names and names <= {m["value"] for m in part["matches"]}
    assert value_search(toolbox, "no such value anywhere")["matches"] == []


def test_inspect_table_schema_profile_and_rows(toolbox, read_rows):
    rows = read_rows("sports/player.csv")
    out = inspect_table(toolbox, "sports/player.csv", rows=3)
    assert out["n_rows"] == len(rows)
    assert [c["name"] for c in out["columns"]] == list(rows[0])
    assert out["rows"]["columns"] == list(rows[0]) and len(out["rows"]["rows"]) == 3
    assert [str(v) for v in out["rows"]["rows"][0]] == list(rows[0].values())
    assert any(j["dst_table"] == "sports/club.csv" or j["src_table"] == "sports/club.csv" for j in out["joins"])
    json.dumps(out)


def test_sql_answers_and_caps_rows(toolbox, read_rows):
    players, clubs = read_rows("sports/player.csv"), read_rows("sports/club.csv")
    aib = {c["Club_ID"] for c in clubs if c["Club_Name"] == "AIB"}
    out = sql(toolbox, 'WITH p AS (SELECT * FROM "sports/player.csv") SELECT count(*) AS n FROM p JOIN "sports/club.csv" c '
                       "ON p.Club_ID = c.Club_ID WHERE c.Club_Name = 'AIB'")
    assert out["rows"] == [[sum(p["Club_ID"] in aib for p in players)]] and not out["truncated"]
    capped = sql(toolbox, 'SELECT * FROM "sports/player.csv"', max_rows=4)
    assert len(capped["rows"]) == 4 and capped["truncated"]
    huge = sql(toolbox, 'SELECT * FROM "sports/player.csv"', max_rows=10**9)  # cut to the configured ceiling
    assert len(huge["rows"]) == len(players)


def test_schema_correspondence_names_and_values(toolbox, read_rows):
    out = schema_correspondence(toolbox, "sports/player.csv", "sports/club.csv")
    pair = next(p for p in out["pairs"] if p["column_a"] == "Club_ID")
    assert pair["column_b"] == "Club_ID" and "name" in pair["match"]
    a = {r["Club_ID"] for r in read_rows("sports/player.csv")}
    b = {r["Club_ID"] for r in read_rows("sports/club.csv")}
    assert pair["common"] == len(a & b) and pair["distinct_a"] == len(a)
    # the two seasons spell their headers differently; the same letters and digits still correspond
    h19, h20 = list(read_rows("sports/points_2019.csv")[0]), list(read_rows("sports/points_2020.csv")[0])
    same = {(a, b) for a in h19 for b in h20 if re.sub(r"[^0-9a-z]", "", a.lower()) == re.sub(r"[^0-9a-z]", "", b.lower())}
    assert same and any(a != b for a, b in same)
    y = schema_correspondence(toolbox, "sports/points_2019.csv", "sports/points_2020.csv")
    assert {(p["column_a"], p["column_b"]) for p in y["pairs"] if "name" in p["match"]} == same


def test_value_overlap_is_exact(toolbox, read_rows):
    a = {r["DepartmentID"].lower() for r in read_rows("universities/instructors.csv")}
    b = {r["DepartmentID"].lower() for r in read_rows("universities/departments.csv")}
    out = value_overlap(toolbox, "universities/instructors.csv", "DepartmentID", "universities/departments.csv", "DepartmentID")
    assert (out["distinct_a"], out["distinct_b"], out["common"]) == (len(a), len(b), len(a & b))
    assert out["containment_a_in_b"] == round(len(a & b) / len(a), 4)
    assert set(out["examples"]) <= a & b


def test_joinable_columns_finds_the_foreign_key_by_minhash(toolbox):
    out = joinable_columns(toolbox, "universities/instructors.csv", "DepartmentID", threshold=0.5, limit=20)
    found = {(c["table"], c["column"]) for c in out["columns"]}
    assert ("universities/departments.csv", "DepartmentID") in found
    assert all(c["table"] != "universities/instructors.csv" for c in out["columns"])
    assert all(max(c["containment_query_in_column"], c["containment_column_in_query"]) >= 0.5 for c in out["columns"])


@pytest.mark.parametrize("name, args, needle", [
    ("inspect_table", {"table": "../etc/passwd"}, "no table"),
    ("inspect_table", {"table": "/etc/passwd"}, "no table"),
    ("inspect_table", {"table": "sports/player.csv", "rows": 0}, "positive integer"),
    ("value_overlap", {"table_a": "sports/player.csv", "column_a": "Nope", "table_b": "sports/club.csv", "column_b": "Club_ID"}, "no column"),
    ("column_search", {"phrase": ""}, "non-empty"),
    ("column_search", {"phrase": "x", "threshold": 2.0}, "between"),
    ("column_search", {"phrase": "x", "limit": "5"}, "must be int"),
    ("sql", {"query": "SELECT 1", "bogus": 1}, "no argument"),
    ("value_search", {}, "needs argument"),
    ("schema_correspondence", {"table_a": "sports/club.csv", "table_b": "sports/club.csv"}, "two different"),
    ("nope", {}, "no tool"),
])
def test_bad_arguments_are_one_line_errors(toolbox, name, args, needle):
    with pytest.raises(ToolError) as e:
        toolbox.call(name, **args)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_ask_returns_raylake_plan(toolbox):
    out = toolbox.call("ask", question="What is the average points of players from the club with name 'AIB'?", budget=4)
    paths = [t["table"] for t in out["tables"]]
    assert "sports/club.csv" in paths and len(paths) <= 4
    json.dumps(out)


def test_every_tool_has_a_description_and_typed_parameters():
    for spec in TOOLS.values():
        assert spec.description and all(p.kind in (int, float, str, bool) for p in spec.params)
