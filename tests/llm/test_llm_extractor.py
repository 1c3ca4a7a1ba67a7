"""LLMExtractor: the Appendix A prompt, validation, one repair round, and the fallback."""
from __future__ import annotations

import json
import logging
import re

import pytest
from test_client import ChatServer, make_client  # the local chat-completions server

from raylake.errors import IntentError, LLMError
from raylake.intent.llm import LLMExtractor, prompt_template, render_prompt
from raylake.intent.model import IntentGraph, IntentTree

QUESTION = "What is the average points of players from the club with name 'AIB'?"
CLUB = {
    "trees": [
        {"tree_id": "t1", "entity": "Club", "attributes": [
            {"attribute_id": "a1", "name": "id", "values": []},
            {"attribute_id": "a2", "name": "name", "values": ["AIB"]}]},
        {"tree_id": "t2", "entity": "Player", "attributes": [
            {"attribute_id": "a3", "name": "club_id", "values": []},
            {"attribute_id": "a4", "name": "points", "values": []}]},
    ],
    "joins": [{"from_tree": "t1", "from_attribute": "a1", "to_tree": "t2", "to_attribute": "a3"}],
}


@pytest.fixture
def server():
    s = ChatServer(models=["qwen-test"])
    yield s
    s.close()


class Offline:
    """A stand-in for the offline extractor that records its calls."""

    def __init__(self):
        self.questions: list[str] = []

    def __call__(self, question: str) -> IntentGraph:
        self.questions.append(question)
        return IntentGraph([IntentTree("t1", "offline", evidence={"source": "offline"})])


# --------------------------------------------------------------------------- the prompt


def test_prompt_is_appendix_a():
    text = prompt_template()
    assert text.startswith("You are an expert at decomposing analytical questions into a structured intent graph")
    sections = re.findall(r"^# (.+)$", text, re.MULTILINE)
    assert sections == ["OUTPUT SCHEMA", "RULES", "EXAMPLES", "QUERY", "OUTPUT"]
    rules = text.split("# RULES\n")[1].split("\n\n# EXAMPLES")[0].splitlines()
    assert [r.split(".")[0] for r in rules] == [str(i) for i in range(1, 8)]
    assert "introduce a bridge tree for it" in rules[2] and "markdown fences" in rules[6]
    schema = json.loads(text.split("# OUTPUT SCHEMA\n")[1].split("\n\n# RULES")[0])
    assert set(schema) == {"trees", "joins"}
    examples = re.findall(r'^## Example (\d) \((.+?)\)\.\nQUERY: "(.+?)"\nOUTPUT:\n(\{.*?\n\})\n', text, re.MULTILINE | re.DOTALL)
    assert [e[0] for e in examples] == ["1", "2", "3"]
    graphs = [IntentGraph.from_json(e[3]) for e in examples]  # each demonstration is a valid intent graph
    assert [(len(g.trees), len(g.joins)) for g in graphs] == [(1, 0), (2, 1), (3, 2)]
    assert text.count("{query}") == 1 and text.endswith("# QUERY\n{query}\n# OUTPUT\n")


def test_render_fills_the_query_and_keeps_the_json_braces():
    q = "Which {weird} players scored over 30 in 2020?"
    text = render_prompt(f"  {q}\n")
    assert "{query}" not in text
    assert text.endswith(f"# QUERY\n{q}\n# OUTPUT\n")
    assert text.count('"tree_id"') == prompt_template().count('"tree_id"')


# --------------------------------------------------------------------------- extraction


def test_good_reply_becomes_an_llm_graph(server):
    server.script = [json.dumps(CLUB)]
    offline = Offline()
    graph = LLMExtractor(make_client(server.url, model=None), offline).extract(QUESTION)
    assert graph.to_json() == CLUB
    assert all(t.evidence == {"source": "llm", "model": "qwen-test"} for t in graph.trees)
    (request,) = server.chats
    assert request["messages"] == [{"role": "user", "content": render_prompt(QUESTION)}]
    assert request["temperature"] == 0.0 and request["model"] == "qwen-test"
    assert offline.questions == []


def test_fenced_reply_with_prose_is_accepted(server):
    server.script = ["Sure, here it is:\n```json\n" + json.dumps(CLUB, indent=2) + "\n```"]
    graph = LLMExtractor(make_client(server.url), Offline()).extract(QUESTION)
    assert [t.entity for t in graph.trees] == ["Club", "Player"]


def test_malformed_reply_is_repaired(server):
    server.script = ['{"trees": [{"tree_id": "t1", "entity": "Club",', json.dumps(CLUB)]
    offline = Offline()
    graph = LLMExtractor(make_client(server.url), offline).extract(QUESTION)
    assert graph.to_json() == CLUB and graph.trees[0].evidence["source"] == "llm"
    assert len(server.chats) == 2 and offline.questions == []


def test_schema_violation_is_repaired_with_the_validation_error(server):
    wrong = dict(CLUB, joins=[{"from_tree": "t1", "from_attribute": "a1", "to_tree": "t2", "to_attribute": "a1"}])
    server.script = [json.dumps(wrong), json.dumps(CLUB)]
    graph = LLMExtractor(make_client(server.url), Offline()).extract(QUESTION)
    assert len(graph.joins) == 1
    assert "attribute 'a1', which is not in tree 't2'" in server.chats[1]["messages"][-1]["content"]


def test_two_malformed_replies_fall_back_with_one_warning(server, caplog):
    server.script = ["I think the answer is clubs.", '{"trees": []}']
    offline = Offline()
    with caplog.at_level(logging.WARNING, logger="raylake.intent.llm"):
        graph = LLMExtractor(make_client(server.url), offline).extract(QUESTION)
    assert offline.questions == [QUESTION] and graph.trees[0].evidence == {"source": "offline"}
    (record,) = caplog.records
    message = record.getMessage()
    assert "fell back to Offline" in message and "failed validation" in message and "\n" not in message
    assert len(server.chats) == 2


def test_unreachable_endpoint_falls_back(caplog):
    offline = Offline()
    client = make_client("http://127.0.0.1:9/v1", max_retries=0)  # port 9 (discard): nothing listens
    with caplog.at_level(logging.WARNING, logger="raylake.intent.llm"):
        LLMExtractor(client, offline).extract(QUESTION)
    assert offline.questions == [QUESTION]
    assert "unreachable" in caplog.records[0].getMessage()


def test_without_fallback_the_error_propagates(server):
    server.script = [("status", 500)] * 2
    with pytest.raises(LLMError, match="HTTP 500"):
        LLMExtractor(make_client(server.url, max_retries=1)).extract(QUESTION)


def test_empty_question_is_rejected(server):
    with pytest.raises(IntentError, match="empty"):
        LLMExtractor(make_client(server.url), Offline()).extract("   ")
    assert server.chats == []


def test_same_question_is_answered_from_the_cache(server, tmp_path):
    server.script = [json.dumps(CLUB)]
    extractor = LLMExtractor(make_client(server.url, cache_dir=str(tmp_path)), Offline())
    first, second = extractor.extract(QUESTION), extractor.extract(QUESTION)
    assert first.to_json() == second.to_json() == CLUB
    assert len(server.chats) == 1


def test_a_grounded_reply_names_the_lake_tables_and_columns(server, example_index):
    # the LLM writes 'Club' and 'Player'; grounding gives each tree the table search anchors on
    from raylake.index.reader import LakeIndex
    from raylake.intent.offline import OfflineExtractor

    offline = OfflineExtractor(LakeIndex.load(example_index))
    server.script = [json.dumps(CLUB)]
    graph = LLMExtractor(make_client(server.url), offline.extract, ground=offline.ground).extract(QUESTION)
    assert graph.to_json() == CLUB  # the LLM's graph, unchanged
    club, player = graph.trees
    assert club.evidence["source"] == "llm" and club.evidence["tables"][0] == "sports/club.csv"
    assert player.evidence["tables"][0] == "sports/player.csv"
    name = club.attributes[1]
    assert name.evidence["columns"][0][:2] == ["sports/club.csv", "Club_Name"]
    # the join's attributes are keys (not scored as data needs); 'points' is not
    assert [a.evidence.get("role") for a in club.attributes + player.attributes] == ["key", None, "key", None]
