"""``raylake ask`` end to end on the example lake: the paper's worked examples, the JSON, bad input."""
from __future__ import annotations

import json

import pytest

from raylake.cli import main
from raylake.search import Engine

FIG4 = "What is the average points of players from the club with name 'AIB'?"
FIG1 = "What are the names and states of universities with instructors in the Computer Science department?"


@pytest.fixture(scope="module")
def engine(example_index):
    return Engine(example_index)


def _roles(answer) -> dict[str, str]:
    return {t["table"]: t["role"] for t in answer.to_json()["tables"]}


def test_fig4_plan_has_the_bridge_and_both_shards(engine):
    ans = engine.ask(FIG4, fuse=True, preview=3)
    roles = _roles(ans)
    assert {"sports/club.csv", "sports/player.csv", "sports/points_2019.csv", "sports/points_2020.csv"} <= set(roles)
    assert len(roles) <= 5, roles
    assert "union shard" in roles.values()
    plan = ans.to_json()["plan"]
    union = [s for s in plan if s["op"] == "union"]
    assert union and {union[0]["new"], union[0]["anchor"]} == {"sports/points_2019.csv", "sports/points_2020.csv"}
    # the 2020 shard's re-spelled headers map onto the 2019 ones
    m = union[0]["mapping"]
    assert {k.lower().replace("_", ""): v.lower().replace("_", "") for k, v in m.items()} == {
        "playerid": "playerid", "matchid": "matchid", "points": "points"}
    joins = {(s["anchor"], s["new"]) for s in plan if s["op"] == "join"}
    assert any("sports/player.csv" in pair for pair in joins)
    # fused: every points row of both shards whose player exists, with its club
    fused = ans.fused
    assert fused["rows"] > 0 and not fused["truncated"]
    assert any(c.endswith("Club_Name") for c in fused["columns"]) and "_provenance" in fused["columns"]


def test_fig1_plan_has_the_bridge_and_both_shards(engine):
    roles = _roles(engine.ask(FIG1))
    assert {"universities/universities.csv", "universities/professors.csv", "universities/lecturers.csv",
            "universities/instructors.csv", "universities/departments.csv"} <= set(roles), roles


def test_fusion_of_the_fig4_plan_counts_every_shard_row(engine, example_lake):
    import pyarrow.csv as pacsv

    ans = engine.ask(FIG4, fuse=True)
    rows_2019 = pacsv.read_csv(f"{example_lake}/sports/points_2019.csv").num_rows
    rows_2020 = pacsv.read_csv(f"{example_lake}/sports/points_2020.csv").num_rows
    parts = {tuple(p["tables"]): p["rows"] for p in ans.fused["parts"]}
    shard_part = next(k for k in parts if "sports/points_2020.csv" in k)
    assert parts[shard_part] == rows_2019 + rows_2020


def test_ask_json_is_the_documented_object(example_index, capsys, tmp_path):
    out = tmp_path / "answer.parquet"
    assert main(["ask", FIG4, "--index-dir", example_index, "--json", "--out", str(out), "--offline"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert {"question", "tables", "plan", "score", "timings_ms", "fused", "intent", "intent_source", "reason"} <= set(obj)
    assert obj["question"] == FIG4 and obj["intent_source"] == "offline" and obj["reason"] is None
    for t in obj["tables"]:
        assert {"table", "role", "supports", "rows"} <= set(t) and not t["table"].startswith("/")
        assert t["role"] in {"anchor", "bridge", "joined", "union shard"}
    for s in obj["plan"]:
        assert s["op"] in {"start", "join", "union"} and {"op", "anchor", "new"} <= set(s)
        assert ("keys" in s) == (s["op"] == "join") and ("mapping" in s) == (s["op"] == "union")
    assert [s["new"] for s in obj["plan"]] == [t["table"] for t in obj["tables"]]
    assert obj["score"] > 0 and {"intent", "anchors", "search", "fuse", "total"} <= set(obj["timings_ms"])
    assert obj["fused"]["path"] == str(out) and out.exists() and obj["fused"]["rows"] > 0


def test_questions_file_answers_each_line_with_its_id(example_index, capsys, tmp_path):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("\n".join(json.dumps(q) for q in [
        {"id": "a", "question": FIG4, "gold_tables": ["ignored"]},
        {"id": "b", "question": "   "},
        {"id": 3, "question": "Which flights go to Madrid?"},
    ]) + "\n")
    assert main(["ask", "--questions", str(qfile), "--index-dir", example_index, "--offline"]) == 3  # line b failed
    lines = [json.loads(l) for l in capsys.readouterr().out.splitlines()]
    assert [l["id"] for l in lines] == ["a", "b", 3]
    assert lines[0]["tables"] and "error" in lines[1] and lines[2]["question"] == "Which flights go to Madrid?"


def test_question_matching_nothing_is_an_empty_answer_with_a_reason(engine):
    ans = engine.ask("zzqx vlorp?")
    assert ans.tables == [] and ans.reason


@pytest.mark.parametrize("argv, message", [
    (["ask", "", "--index-dir", "{idx}"], "empty question"),
    (["ask", "--index-dir", "{idx}"], "no question"),
    (["ask", "q", "--index-dir", "{missing}"], "no index"),
    (["ask", "q", "--index-dir", "{idx}", "--budget", "0"], "--budget"),
    (["ask", "--questions", "{missing}/q.jsonl", "--index-dir", "{idx}"], "cannot read questions"),
    (["ask", "q", "--index-dir", "{idx}", "--out", "{missing}/x.parquet"], "does not exist"),
    (["ask", "q", "--index-dir", "{idx}", "--model-dir", "{missing}"], "--model-dir"),
    (["ask", "q", "--index-dir", "{idx}", "--questions", "{missing}/q.jsonl"], "not both"),
])
def test_bad_input_is_one_line_and_exit_2(example_index, tmp_path, capsys, argv, message):
    argv = [a.format(idx=example_index, missing=str(tmp_path / "missing")) for a in argv]
    assert main(argv + ["--offline"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("raylake: error:") and message in err and "\n" not in err


def test_bad_questions_file_names_the_line(example_index, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text('{"id": 1, "question": "ok?"}\nnot json\n')
    assert main(["ask", "--questions", str(qfile), "--index-dir", example_index]) == 3
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and f"{qfile}:2" in json.loads(out[1])["error"]


def test_index_of_an_older_format_is_refused(example_index, tmp_path, capsys):
    import shutil

    old = tmp_path / "old"
    shutil.copytree(example_index, old)
    cur = (old / "CURRENT").read_text().strip()
    manifest = old / cur / "manifest.json"
    m = json.loads(manifest.read_text())
    m["format_version"] = 0
    manifest.write_text(json.dumps(m))
    assert main(["ask", "q", "--index-dir", str(old)]) == 2
    assert "format" in capsys.readouterr().err


def test_preview_labels_keep_the_column_name_not_a_cut_path():
    from raylake.search.cli import short_label

    assert short_label("sports/club.Name", 18) == "sports/club.Name"
    assert short_label("universities/2024/professors.First_Name", 18) == "First_Name"  # not '24/professors.Firs'
    assert short_label("t.a_very_long_column_name_indeed", 12) == "a_very_long…"
    assert len(short_label("x" * 40, 10)) == 10


def test_rejected_tables_are_the_considered_ones_left_out(engine):
    """``rejected``: tables the search looked at (an atom's anchor, a relevance candidate) and left
    out of the plan, each saying why, the most probable first, at most ``search.max_rejected``."""
    obj = engine.ask(FIG4).to_json()
    rejected = obj["rejected"]
    assert 0 < len(rejected) <= engine.ctx.search.max_rejected
    assert not {r["table"] for r in rejected} & {t["table"] for t in obj["tables"]}
    atoms = {at.text for at in engine.prepare(FIG4).support.atoms}
    for r in rejected:
        assert r["anchor_of"] or "relevance" in r, r  # in view for a reason
        assert set(r["anchor_of"]) <= atoms and r["rows"] == int(engine.index.tables["n_rows"][engine.index.path_id[r["table"]]])
    probs = [r["relevance"] for r in rejected if "relevance" in r]
    assert probs == sorted(probs, reverse=True)
