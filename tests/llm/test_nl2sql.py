"""The NL2SQL agent against the local chat-completions server, over the example lake's real files.

Each test scripts the 'LLM' replies (:class:`test_client.ChatServer`); the SQL runs in DuckDB
through the tool harness's read-only guard, and answers are checked against the CSVs read
with the standard library.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
from collections import Counter

import duckdb
import pytest
from test_client import ChatServer, make_client  # the local chat-completions server

from raylake.config import LLMConfig, NL2SQLConfig, RaylakeContext
from raylake.fuse.nl2sql import NL2SQLAgent, parse_reply, self_contained

TABLES = ["sports/player.csv", "sports/club.csv"]
STEPS = [{"op": "start", "new": "sports/player.csv", "anchor": None},
         {"op": "join", "new": "sports/club.csv", "anchor": "sports/player.csv",
          "keys": {"anchor_column": "Club_ID", "new_column": "Club_ID"}}]
QUESTION = "How many players does each club in region USA have?"
WRONG_SQL = 'SELECT c.Club_Name, count(*) FROM "sports/player.csv" p JOIN "sports/club.csv" c ON p.Club_ID = c.Club_ID WHERE c.Regin = \'USA\' GROUP BY 1'
RIGHT_SQL = WRONG_SQL.replace("c.Regin", "c.Region")
WRONG, RIGHT = json.dumps({"sql": WRONG_SQL}), json.dumps({"sql": RIGHT_SQL})


def reply(sql: str, **extra) -> str:
    return json.dumps({"sql": sql, **extra})


def rows(lake, path):
    with open(os.path.join(lake, path), newline="") as fh:
        return list(csv.DictReader(fh))


def usa_counts(lake) -> Counter:
    clubs = {c["Club_ID"]: c for c in rows(lake, "sports/club.csv")}
    return Counter(clubs[p["Club_ID"]]["Club_Name"] for p in rows(lake, "sports/player.csv") if clubs[p["Club_ID"]]["Region"] == "USA")


def lake_digest(lake) -> dict:
    out = {}
    for root, _dirs, files in os.walk(lake):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                out[os.path.relpath(os.path.join(root, f), lake)] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.fixture
def server():
    s = ChatServer(models=["sql-test"])
    yield s
    s.close()


@pytest.fixture(scope="module")
def toolbox(example_index):
    from raylake.tools import Toolbox

    return Toolbox(example_index)


def agent(server, toolbox, **cfg) -> NL2SQLAgent:
    return NL2SQLAgent(make_client(server.url), toolbox, NL2SQLConfig(**cfg))


def test_error_is_sent_back_and_the_corrected_query_answers(server, toolbox, example_lake):
    server.script = [WRONG, RIGHT]
    ans = agent(server, toolbox).answer(QUESTION, TABLES, STEPS)
    assert ans.source == "llm" and ans.reason is None
    assert {tuple(r) for r in ans.rows} == set(usa_counts(example_lake).items()) and ans.total_rows == len(ans.rows)
    # the loop: two turns, the first failed in DuckDB and its error went back to the model
    assert [("error" in t, t.get("rows")) for t in ans.turns] == [(True, None), (False, len(ans.rows))]
    assert "Regin" in ans.turns[0]["error"]
    fix_request = server.chats[1]["messages"][-1]["content"]
    assert fix_request.startswith("The query did not run") and "Regin" in fix_request
    # the first prompt: the question, every table's schema with DuckDB types, sample rows and the plan's join
    first = server.chats[0]["messages"]
    assert first[0]["role"] == "system" and "JSON" in first[0]["content"]
    prompt = first[1]["content"]
    assert QUESTION in prompt and '"sports/club.csv" (' in prompt and "Region VARCHAR" in prompt
    assert rows(example_lake, "sports/player.csv")[0]["Name"] in prompt
    assert '"sports/player.csv"."Club_ID" = "sports/club.csv"."Club_ID"' in prompt
    # the answer's SQL is self-contained: plain DuckDB runs it over the lake files to the same rows
    assert ans.sql.startswith('WITH "sports/club.csv" AS (SELECT * FROM read_csv(')
    assert sorted(duckdb.connect().sql(ans.sql).fetchall()) == sorted(map(tuple, ans.rows))


def test_writes_and_reads_outside_the_plan_are_refused_by_the_guard(server, toolbox, example_lake, tmp_path):
    before = lake_digest(example_lake)
    target = tmp_path / "stolen.csv"
    server.script = [
        reply(f"COPY (SELECT * FROM \"sports/player.csv\") TO '{target}'"),
        reply('DELETE FROM "sports/player.csv"'),
        reply('CREATE TABLE t AS SELECT 1'),
        reply("SELECT * FROM read_csv('/etc/passwd')"),
        reply('SELECT 1; DROP VIEW "sports/player.csv"'),
        reply('SELECT * FROM "sports/points_2019.csv"'),  # a lake table, but not one of the plan's
        RIGHT,
    ]
    ans = agent(server, toolbox).answer(QUESTION, TABLES, STEPS)
    errors = [t["error"] for t in ans.turns[:-1]]
    assert len(errors) == 6 and all("refused" in e or "not allowed" in e for e in errors), errors
    assert "not one of this query's tables" in errors[-1]
    assert {tuple(r) for r in ans.rows} == set(usa_counts(example_lake).items())
    assert not target.exists() and lake_digest(example_lake) == before


def test_turn_cap_ends_the_loop_without_an_answer(server, toolbox):
    server.script = [WRONG] * 5
    ans = agent(server, toolbox, max_turns=3).answer(QUESTION, TABLES, STEPS)
    assert ans.rows is None and ans.source == "llm" and "3 turns" in ans.reason
    assert len(server.chats) == 3 and len(ans.turns) == 3


def test_empty_result_is_questioned_once_and_a_probe_is_shown(server, toolbox, example_lake):
    empty = RIGHT_SQL.replace("'USA'", "'usa'")  # DuckDB compares text case-sensitively: no rows
    server.script = [reply('SELECT DISTINCT Region FROM "sports/club.csv"', probe=True), empty, empty]
    ans = agent(server, toolbox).answer(QUESTION, TABLES, STEPS)
    regions = {c["Region"] for c in rows(example_lake, "sports/club.csv")}
    probe_result = server.chats[1]["messages"][-1]["content"]
    assert probe_result.startswith("Probe result") and all(r in probe_result for r in regions)
    assert "returned no rows" in server.chats[2]["messages"][-1]["content"]
    # the same query sent again: an empty answer, taken
    assert ans.rows == [] and ans.total_rows == 0 and len(ans.turns) == 3


def test_bad_replies_get_a_format_reminder():
    assert parse_reply('{"sql": "SELECT 1;"}') == ("SELECT 1", False)
    assert parse_reply("Here:\n```sql\nSELECT 2\n```") == ("SELECT 2", False)
    assert parse_reply(" select 4\n") == ("select 4", False)
    assert parse_reply('{"sql": "SELECT 3", "probe": true}') == ("SELECT 3", True)
    for bad in ("no query here", '{"query": "SELECT 1"}', '{"sql": "SELECT 1", "probe": "yes"}'):
        with pytest.raises(ValueError):
            parse_reply(bad)
    assert self_contained("WITH x AS (SELECT 1) SELECT * FROM x", {"a.csv": "read_csv('/l/a.csv')"}) == \
        "WITH \"a.csv\" AS (SELECT * FROM read_csv('/l/a.csv')),\nx AS (SELECT 1) SELECT * FROM x"


def test_engine_falls_back_to_the_grammar_when_the_agent_finds_nothing(server, example_index, example_lake):
    from raylake.search.engine import Engine

    eng = Engine(example_index, relevance="off")
    eng.nl2sql = NL2SQLAgent(make_client(server.url), __import__("raylake.tools", fromlist=["Toolbox"]).Toolbox(eng.index),
                             NL2SQLConfig(max_turns=2))
    server.script = ["not sql", "still not sql"]
    out = eng.ask("How many players are there?", answer=True).to_json()
    assert out["answer_source"] == "offline" and out["answer"]["rows"] == [[len(rows(example_lake, "sports/player.csv"))]]
    assert "found no answer" in out["answer"]["warnings"][0] and len(out["answer_turns"]) == 2


def test_cli_ask_json_with_the_endpoint_configured(server, example_index, example_lake, monkeypatch, capsys):
    """`raylake ask ... --json`: the LLM extracts the intent, then the agent writes, fixes and runs the SQL."""
    from raylake.cli import main

    monkeypatch.setattr(RaylakeContext, "_current", RaylakeContext(llm=LLMConfig(base_url=server.url, model="sql-test")))
    intent = {"trees": [
        {"tree_id": "t1", "entity": "Player", "attributes": [{"attribute_id": "a1", "name": "club id", "values": []}]},
        {"tree_id": "t2", "entity": "Club", "attributes": [{"attribute_id": "a2", "name": "region", "values": ["USA"]},
                                                            {"attribute_id": "a3", "name": "club id", "values": []}]}],
        "joins": [{"from_tree": "t1", "from_attribute": "a1", "to_tree": "t2", "to_attribute": "a3"}]}
    server.script = [json.dumps(intent), WRONG, RIGHT]
    assert main(["ask", QUESTION, "--index-dir", example_index, "--json", "--relevance", "off"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["intent_source"] == "llm" and out["answer_source"] == "llm"
    assert {"sports/player.csv", "sports/club.csv"} <= set(out["plan"][i]["new"] for i in range(len(out["plan"])))
    assert {tuple(r) for r in out["answer"]["rows"]} == set(usa_counts(example_lake).items())
    assert [("error" in t) for t in out["answer_turns"]] == [True, False]
    # the agent's prompt named the plan's tables only: its SQL may read those and no other
    assert all(f'"{s["new"]}" (' in server.chats[1]["messages"][1]["content"] for s in out["plan"])
    assert len(server.chats) == 3


def test_answer_bench_scores_the_agent_against_the_server(server, example_index, example_lake, monkeypatch, tmp_path, capsys):
    """bench.answers --llm: the agent's settings are scored beside the grammar's, by question type."""
    from bench.answers import main as bench_main

    counts = usa_counts(example_lake)
    qs = tmp_path / "q.jsonl"
    qs.write_text(json.dumps({"id": "q1", "question": QUESTION, "gold_tables": TABLES,
                              "gold_sql": "SELECT c.name, count(*) FROM player JOIN club c WHERE region = 'USA' GROUP BY 1"}) + "\n")
    gold = tmp_path / "a.jsonl"
    gold.write_text(json.dumps({"id": "q1", "columns": ["name", "n"], "rows": [list(x) for x in counts.items()], "ordered": False}) + "\n")
    out = tmp_path / "r.json"
    args = ["--index-dir", example_index, "--questions", str(qs), "--answers", str(gold), "--relevance", "off", "--out", str(out)]
    with pytest.raises(SystemExit) as exc:  # no endpoint: one line, exit 2
        monkeypatch.setattr(RaylakeContext, "_current", RaylakeContext(llm=LLMConfig(base_url=None)))
        bench_main(args + ["--llm"])
    assert exc.value.code == 2 and "no LLM endpoint configured" in capsys.readouterr().err

    monkeypatch.setattr(RaylakeContext, "_current", RaylakeContext(llm=LLMConfig(base_url=server.url, model="sql-test")))
    server.script = [WRONG, RIGHT] + [RIGHT] * 8  # the raylake plan's prompt may differ from the gold tables' one
    assert bench_main(args + ["--llm"]) == 0
    res = json.loads(out.read_text())
    assert set(res["settings"]) == {"gold_tables", "raylake", "llm_gold_tables", "llm_raylake"}
    llm = res["settings"]["llm_gold_tables"]
    assert llm["exact"] == 1.0 and llm["fallback"] == 0.0 and llm["turns"] == 2.0
    assert llm["by_type"] == {"group": {"n": 1, "f1": 1.0, "exact": 1.0, "declined": 0.0, "fallback": 0.0, "turns": 2.0}}
    row = res["per_question"]["llm_gold_tables"][0]
    assert row["source"] == "llm" and row["sql"].startswith("WITH ") and res["llm"]["model"] == "sql-test"
    assert "fallback" not in res["settings"]["gold_tables"]
