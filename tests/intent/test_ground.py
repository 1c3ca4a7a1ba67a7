"""ground: an LLM-style graph (words only) gets the lake tables and columns it means, the
trees' tables chosen jointly, an attribute's columns its own tree's table's first."""
from __future__ import annotations

import pytest

from raylake.intent.model import IntentGraph


@pytest.fixture(scope="module")
def extractor(example_index):
    from raylake.index.reader import LakeIndex
    from raylake.intent.offline import OfflineExtractor

    return OfflineExtractor(LakeIndex.load(example_index))


def _graph(trees, joins=()):
    return IntentGraph.from_json({"trees": trees, "joins": list(joins)})


def test_trees_and_attributes_get_ranked_tables_and_columns(extractor):
    g = _graph([
        {"tree_id": "p", "entity": "Patient", "attributes": [
            {"attribute_id": "a1", "name": "name", "values": []},
            {"attribute_id": "a2", "name": "age", "values": ["60"]}]},
        {"tree_id": "h", "entity": "Hospital", "attributes": [{"attribute_id": "a3", "name": "name", "values": []}]},
    ])
    before = g.to_json()
    extractor.ground(g, "List the names of patients older than 60 and the hospital they stay in.")
    assert g.to_json() == before  # structure and words untouched; only evidence added
    patient, hospital = g.trees
    assert patient.evidence["tables"][0] == "misc/patients.csv" and hospital.evidence["tables"][0] == "misc/hospitals.csv"
    assert patient.evidence["words"] == ["Patient"] and len(patient.evidence["table_scores"]) == len(patient.evidence["tables"])
    assert patient.evidence["why"]["chosen"] == "jointly with the other entities"
    # 'name' is in many tables: each tree reads its own table's
    assert patient.attributes[0].evidence["columns"][0][:2] == ["misc/patients.csv", "name"]
    assert hospital.attributes[0].evidence["columns"][0][:2] == ["misc/hospitals.csv", "name"]
    assert patient.attributes[1].evidence["columns"][0][:2] == ["misc/patients.csv", "age"]


def test_a_value_puts_the_column_of_the_tree_table_holding_it_first(extractor):
    # the LLM's word for the attribute ('title') matches no header of the club table; the
    # column of that table holding its value 'AIB' is the one meant
    g = _graph([{"tree_id": "c", "entity": "club", "attributes": [
        {"attribute_id": "a1", "name": "title", "values": ["AIB"]}]}])
    extractor.ground(g, "Which club has the title AIB?")
    (club,) = g.trees
    assert club.evidence["tables"][0] == "sports/club.csv"
    assert club.attributes[0].evidence["columns"][0][:2] == ["sports/club.csv", "Club_Name"]
    g = _graph([{"tree_id": "c", "entity": "club", "attributes": [{"attribute_id": "a1", "name": "title", "values": []}]}])
    extractor.ground(g, "Which club has the title AIB?")
    assert g.trees[0].attributes[0].evidence["columns"][0][:2] != ["sports/club.csv", "Club_Name"]


def test_a_tree_is_the_table_that_holds_its_attributes(extractor):
    # the service types and the workflow steps both key on service_id, so both are named
    # 'service'; the graph says the service's attribute is a step name, which only the steps hold
    from raylake.intent.ground import ground

    def service(ex=extractor):
        g = _graph([{"tree_id": "s", "entity": "service", "attributes": [{"attribute_id": "a1", "name": "step name", "values": []}]}])
        ground(g, "What are the step names of each service?", ex)
        return g.trees[0]

    tree = service()
    assert tree.evidence["tables"][:2] == ["commerce/workflow_steps.csv", "commerce/service_types.csv"]
    assert tree.evidence["why"]["attributes"] > 0.5
    assert tree.attributes[0].evidence["columns"][0][:2] == ["commerce/workflow_steps.csv", "step_name"]
    # on the entity's words alone the service types table comes first
    assert service(type(extractor)(extractor.index, extractor.lex, ground_holds=0.0)).evidence["tables"][0] == "commerce/service_types.csv"


def test_an_empty_graph_needs_no_lake(extractor):
    g = IntentGraph([])
    assert extractor.ground(g, "anything") is g and g.trees == []
