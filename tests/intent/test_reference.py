"""Reference intent graphs from gold SQL (bench/intent_ref.py) on hand-written queries, and the reference written in the SQL's words (bench.intent_bench.gold_words_graph)."""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:  # bench/ is a folder of the repository, not an installed package
    sys.path.insert(0, ROOT)

from bench.intent_ref import norm_value, reference_graph, table_columns  # noqa: E402

HEADERS = {
    "a.csv": ["Department_ID", "Name", "Creation"],
    "b.csv": ["department_ID", "head_ID", "temporary_acting"],
    "c.csv": ["head_ID", "name", "born_state", "age"],
    "c2.csv": ["HEAD_ID", "NAME", "BORN_STATE", "AGE"],  # a shard of c with re-spelled headers
}


def test_three_table_join_with_shards_and_literal():
    sql = ("SELECT DISTINCT T1.creation FROM department AS T1 JOIN management AS T2 ON T1.department_id = T2.department_id "
           "JOIN head AS T3 ON T2.head_id = T3.head_id WHERE T3.born_state = 'Alabama'")
    g = reference_graph(sql, HEADERS)
    ents = dict(zip(g.entity_names, g.entities))
    assert ents == {"department": {"a.csv"}, "management": {"b.csv"}, "head": {"c.csv", "c2.csv"}}
    names = g.entity_names
    assert sorted((names[i], names[j]) for i, j in g.joins) == [("department", "management"), ("head", "management")]
    attrs = {(names[a.entity], a.column): a.roles for a in g.attributes}
    assert attrs == {("department", "creation"): {"select"}, ("head", "bornstate"): {"filter"}}  # join keys excluded
    (v,) = g.values
    assert v.text == "alabama" and g.attributes[v.attribute].column == "bornstate"
    born = next(a for a in g.attributes if a.column == "bornstate")
    assert born.cells == {("c.csv", "bornstate"), ("c2.csv", "bornstate")}


def test_in_subquery_is_a_join_and_hint_breaks_key_only_ties():
    sql = "SELECT count(*) FROM department WHERE department_id NOT IN (SELECT department_id FROM management)"
    hdr = {f: HEADERS[f] for f in ("a.csv", "b.csv")}
    g = reference_graph(sql, hdr, schema_hint={"department": {"name", "creation"}, "management": {"temporaryacting"}})
    assert dict(zip(g.entity_names, g.entities)) == {"department": {"a.csv"}, "management": {"b.csv"}}
    assert g.joins == [(0, 1)] and g.attributes == [] and g.values == []


def test_group_having_order_and_double_quoted_literal():
    sql = ('SELECT name, avg(age) FROM head WHERE born_state = "New York" AND age > 50 '
           "GROUP BY name HAVING count(*) > 1 ORDER BY age DESC LIMIT 3")
    g = reference_graph(sql, {"c.csv": HEADERS["c.csv"]})
    roles = {a.column: a.roles for a in g.attributes}
    assert roles == {"name": {"select", "group"}, "age": {"select", "filter", "order"}, "bornstate": {"filter"}}
    texts = {v.text: (g.attributes[v.attribute].column if v.attribute is not None else None) for v in g.values}
    assert texts == {"new york": "bornstate", "50": "age", "1": None}  # LIMIT 3 is not a value


def test_helpers():
    assert norm_value("'%Smith%'") == "smith" and norm_value("1000.0") == "1000" and norm_value(" Homeland  Security ") == "homeland security"
    assert table_columns("SELECT T1.name FROM head AS T1 JOIN management AS T2 ON T1.head_id = T2.head_id") == {
        "head": {"name", "headid"}, "management": {"headid"}}
    assert reference_graph("SELEC nonsense FROM", HEADERS) is None


def test_gold_words_graph_is_the_reference_in_the_sql_words():
    from bench.intent_bench import gold_words_graph

    sql = ("SELECT DISTINCT T1.creation FROM department AS T1 JOIN management AS T2 ON T1.department_id = T2.department_id "
           "JOIN head AS T3 ON T2.head_id = T3.head_id WHERE T3.born_state = 'Alabama'")
    ref = reference_graph(sql, HEADERS)
    g = gold_words_graph(ref)
    assert sorted(t.entity for t in g.trees) == ["department", "head", "management"]
    attrs = {t.entity: [(a.name, a.values, a.evidence.get("role")) for a in t.attributes] for t in g.trees}
    assert attrs == {"department": [("creation", [], None), ("id", [], "key")], "management": [("id", [], "key")],
                     "head": [("bornstate", ["alabama"], None), ("id", [], "key")]}
    ends = sorted(tuple(sorted((g.tree(j.from_tree).entity, g.tree(j.to_tree).entity))) for j in g.joins)
    assert ends == [("department", "management"), ("head", "management")]
