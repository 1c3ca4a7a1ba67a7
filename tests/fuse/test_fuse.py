"""Fusion of plans: unions through re-spelled, reordered headers; joins on keys; the guard."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from raylake.errors import FusionError, RaylakeError
from raylake.fuse import fuse

CLUB = pa.table({"Club_ID": [1, 2, 3], "Club_Name": ["AIB", "BK Slide", "Comet"]})
PLAYER = pa.table({"Player_ID": [10, 11, 12, 13], "Name": ["Ann", "Bo", "Cy", "Di"], "Club_ID": [1, 1, 2, 3]})
P2019 = pa.table({"Player_ID": [10, 11, 12], "Match_ID": [1, 1, 2], "Points": [15, 7, 9]})
# the 2020 shard: headers re-spelled and reordered, an extra column, ids as text with noise
P2020 = pa.table({"MatchId": [3, 4], "POINTS": [21, 4], "PlayerId": ["13 ", "10"], "Venue": ["Home", "Away"]})

SHARD_MAP = {"MatchId": "Match_ID", "POINTS": "Points", "PlayerId": "Player_ID"}


def reader(tables):
    return lambda root, path: tables[path]


def plan_fig4():
    return [
        {"op": "start", "new": "points_2019.csv", "anchor": None},
        {"op": "union", "new": "points_2020.csv", "anchor": "points_2019.csv", "mapping": SHARD_MAP},
        {"op": "join", "new": "player.csv", "anchor": "points_2019.csv", "keys": {"anchor_column": "Player_ID", "new_column": "Player_ID"}},
        {"op": "join", "new": "club.csv", "anchor": "player.csv", "keys": {"anchor_column": "Club_ID", "new_column": "Club_ID"}},
    ]


TABLES = {"club.csv": CLUB, "player.csv": PLAYER, "points_2019.csv": P2019, "points_2020.csv": P2020}


def expected_rows():
    """The same join, computed by hand in Python: one row per points row of either shard."""
    shard_rows = [dict(zip(P2019.column_names, r), _src="points_2019.csv") for r in zip(*P2019.to_pydict().values())]
    for r in P2020.to_pylist():
        shard_rows.append({"Player_ID": r["PlayerId"].strip(), "Match_ID": r["MatchId"], "Points": r["POINTS"], "_src": "points_2020.csv"})
    players = {str(p["Player_ID"]): p for p in PLAYER.to_pylist()}
    clubs = {c["Club_ID"]: c for c in CLUB.to_pylist()}
    out = []
    for s in shard_rows:
        p = players[str(s["Player_ID"])]
        out.append((s["Match_ID"], s["Points"], p["Name"], clubs[p["Club_ID"]]["Club_Name"], s["_src"]))
    return sorted(out)


def test_union_of_renamed_shards_then_joins_row_for_row():
    f = fuse(plan_fig4(), "/lake", reader=reader(TABLES))
    rows = f.table.to_pylist()
    got = sorted(
        (r["points_2019.Match_ID"], r["points_2019.Points"], r["player.Name"], r["club.Club_Name"], r["_provenance"].split(" ⋈ ")[0])
        for r in rows
    )
    assert got == expected_rows()
    assert f.table.num_rows == P2019.num_rows + P2020.num_rows
    # the shard's unmapped extra column survives, null on the other shard's rows
    venue = {r["points_2019.Match_ID"]: r["points_2019.Venue"] for r in rows}
    assert venue[3] == "Home" and venue[1] is None
    assert rows[0]["_provenance"].count(" ⋈ ") == 2  # one source file per part
    assert f.parts[0]["tables"] == ["points_2019.csv", "points_2020.csv"] and f.parts[0]["rows"] == 5
    assert not f.truncated and f.warnings == []


def test_union_chain_maps_through_the_intermediate_shard():
    # a third shard aligned to the second one (not to the first) lands on the first's columns
    p2021 = pa.table({"match": [5], "pid": [12], "pts": [30]})
    tables = dict(TABLES, **{"points_2021.csv": p2021})
    steps = plan_fig4()[:2] + [{"op": "union", "new": "points_2021.csv", "anchor": "points_2020.csv",
                                "mapping": {"match": "MatchId", "pid": "PlayerId", "pts": "POINTS"}}]
    t = fuse(steps, "/lake", reader=reader(tables)).table
    assert t.num_rows == 6
    last = [r for r in t.to_pylist() if r["_provenance"] == "points_2021.csv"][0]
    assert (last["points_2019.Match_ID"], str(last["points_2019.Player_ID"]), last["points_2019.Points"]) == (5, "12", 30)


def test_join_explosion_is_capped_and_reported():
    many = pa.table({"k": [1] * 300})
    other = pa.table({"k": [1] * 300, "v": list(range(300))})
    steps = [{"op": "start", "new": "a.csv"},
             {"op": "join", "new": "b.csv", "anchor": "a.csv", "keys": {"anchor_column": "k", "new_column": "k"}}]
    f = fuse(steps, "/lake", max_rows=1000, reader=reader({"a.csv": many, "b.csv": other}))
    assert f.truncated and f.table.num_rows == 1000
    assert "90,000 rows" in f.warnings[0]


def test_a_join_that_matches_nothing_is_left_out_not_an_error():
    # club names never equal match ids: the inner join would empty the answer, so the
    # points part is left out (reported), the player join onto club still runs, and a step
    # joined onto the left-out part is left out with it
    steps = [{"op": "start", "new": "club.csv"},
             {"op": "join", "new": "points_2019.csv", "anchor": "club.csv", "keys": {"anchor_column": "Club_Name", "new_column": "Match_ID"}},
             {"op": "join", "new": "player.csv", "anchor": "club.csv", "keys": {"anchor_column": "Club_ID", "new_column": "Club_ID"}},
             {"op": "join", "new": "again.csv", "anchor": "points_2019.csv", "keys": {"anchor_column": "Player_ID", "new_column": "Player_ID"}}]
    tables = {**TABLES, "again.csv": P2019}
    f = fuse(steps, "/lake", reader=reader(tables))
    assert f.table.num_rows == 4  # the four players with their clubs
    assert not any(c.startswith(("points_2019.", "again.")) for c in f.table.column_names)
    assert "matched no rows" in f.warnings[0] and "left out" in f.warnings[0]
    assert "again.csv joins points_2019.csv" in f.warnings[1]
    assert [(s["new"], s.get("left_out", False)) for s in f.steps] == [
        ("points_2019.csv", True), ("player.csv", False), ("again.csv", True)]
    assert set(f.table.column("_provenance").to_pylist()) == {"club.csv ⋈ player.csv"}


def test_a_plan_empty_before_any_join_stays_empty():
    steps = [{"op": "start", "new": "none.csv"},
             {"op": "join", "new": "club.csv", "anchor": "none.csv", "keys": {"anchor_column": "Club_ID", "new_column": "Club_ID"}}]
    f = fuse(steps, "/lake", reader=reader({**TABLES, "none.csv": CLUB.slice(0, 0)}))
    assert f.table.num_rows == 0 and f.warnings == ["join none.csv.Club_ID = club.csv.Club_ID matched no rows"]
    assert "club.Club_Name" in f.table.column_names


@pytest.mark.parametrize("steps, message", [
    ([], "plan is empty"),
    ([{"op": "join", "new": "club.csv", "anchor": "player.csv", "keys": {"anchor_column": "Club_ID", "new_column": "Club_ID"}}], "no earlier step"),
    ([{"op": "start", "new": "club.csv"}, {"op": "join", "new": "player.csv", "anchor": "club.csv",
                                            "keys": {"anchor_column": "nope", "new_column": "Club_ID"}}], "column missing"),
    ([{"op": "teleport", "new": "club.csv"}], "unknown plan step"),
])
def test_bad_plans_raise_one_line_errors(steps, message):
    with pytest.raises(FusionError, match=message):
        fuse(steps, "/lake", reader=reader(TABLES))


def test_files_on_disk_and_write(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    pacsv.write_csv(P2019, lake / "points_2019.csv")
    pq.write_table(P2020, lake / "points_2020.parquet")
    steps = [{"op": "start", "new": "points_2019.csv"},
             {"op": "union", "new": "points_2020.parquet", "anchor": "points_2019.csv", "mapping": SHARD_MAP}]
    f = fuse(steps, str(lake))
    assert f.table.num_rows == 5
    for name in ("out.parquet", "out.csv"):
        path = f.write(str(tmp_path / name))
        back = pq.read_table(path) if name.endswith("parquet") else pacsv.read_csv(path)
        assert back.num_rows == 5 and back.column_names == f.table.column_names
    with pytest.raises(RaylakeError, match="parquet or .csv"):
        f.write(str(tmp_path / "out.xlsx"))
    with pytest.raises(RaylakeError, match="does not exist"):
        f.write(str(tmp_path / "missing" / "out.csv"))
    os.remove(lake / "points_2019.csv")
    with pytest.raises(FusionError, match="no longer in the lake"):
        fuse(steps, str(lake))


def test_lake_columns_named_like_the_provenance_keep_their_values():
    """A lake column "_src" once overwrote the provenance, and a file named _src*.csv lost its columns."""
    a = pa.table({"_src": ["mine", "also"], "id": [1, 2]})
    b = pa.table({"id": [1, 2], "_src0": ["x", "y"], "_provenance": ["p", "q"]})
    steps = [
        {"op": "start", "new": "_src_a.csv"},
        {"op": "union", "new": "_src_b.csv", "anchor": "_src_a.csv", "mapping": {"id": "id", "_src": "_src"}},
        {"op": "join", "new": "b.csv", "anchor": "_src_a.csv", "keys": {"anchor_column": "id", "new_column": "id"}},
    ]
    f = fuse(steps, "/lake", reader=reader({"_src_a.csv": a, "_src_b.csv": a, "b.csv": b}))
    rows = sorted(f.table.to_pylist(), key=lambda r: (r["_provenance"], r["_src_a.id"]))
    assert [r["_src_a._src"] for r in rows] == ["mine", "also", "mine", "also"]
    assert [r["_provenance"] for r in rows] == ["_src_a.csv ⋈ b.csv"] * 2 + ["_src_b.csv ⋈ b.csv"] * 2
    assert [r["b._src0"] for r in rows] == ["x", "y", "x", "y"] and [r["b._provenance"] for r in rows] == ["p", "q", "p", "q"]


def test_names_that_differ_only_in_case_stay_apart():
    """DuckDB names are case-blind: a shard's unmapped "NAME" must not land in the anchor's "name",
    and parts labelled "T" and "t" (or t.csv and t.parquet) must not share column names."""
    anchor = pa.table({"id": [1], "name": ["anchor"]})
    shard = pa.table({"id": [2], "NAME": ["shard"]})
    other = pa.table({"id": [1], "name": ["other"]})
    steps = [
        {"op": "start", "new": "t.csv"},
        {"op": "union", "new": "s.csv", "anchor": "t.csv", "mapping": {"id": "id"}},
        {"op": "join", "new": "T.parquet", "anchor": "t.csv", "keys": {"anchor_column": "id", "new_column": "id"}},
    ]
    f = fuse(steps, "/lake", reader=reader({"t.csv": anchor, "s.csv": shard, "T.parquet": other}))
    rows = f.table.to_pylist()
    assert len(rows) == 1 and rows[0]["t.name"] == "anchor" and rows[0]["T.parquet.name"] == "other"
    assert "t.NAME__s" in f.table.column_names and rows[0]["t.NAME__s"] is None


def test_a_plan_path_outside_the_lake_is_refused(tmp_path):
    (tmp_path / "secret.csv").write_text("id,pw\n1,hunter2\n")
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "a.csv").write_text("id\n1\n")
    for path in ("../secret.csv", str(tmp_path / "secret.csv"), "./../secret.csv", ""):
        with pytest.raises(RaylakeError, match="not a path inside the lake"):
            fuse([{"op": "start", "new": path}], str(tmp_path / "lake"))
    assert fuse([{"op": "start", "new": "./a.csv"}], str(tmp_path / "lake")).table.num_rows == 1
