"""``raylake intent``: tree and JSON output, one-line errors with exit 2."""
from __future__ import annotations

import json

from raylake.cli import main
from raylake.intent.model import IntentGraph


def test_json_is_appendix_a_with_evidence(example_index, capsys, monkeypatch):
    monkeypatch.delenv("RAYLAKE_LLM_BASE_URL", raising=False)
    assert main(["intent", "Show the points of players of each club", "--index-dir", example_index, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"trees", "joins"}
    assert all("evidence" in t and {"tree_id", "entity", "attributes"} <= set(t) for t in out["trees"])
    assert out["joins"] and all({"from_tree", "from_attribute", "to_tree", "to_attribute", "evidence"} <= set(j) for j in out["joins"])
    IntentGraph.from_json(out)  # reads back


def test_tree_output(example_index, capsys, monkeypatch):
    monkeypatch.delenv("RAYLAKE_LLM_BASE_URL", raising=False)
    assert main(["intent", "patients older than 60", "--index-dir", example_index]) == 0
    out = capsys.readouterr().out
    assert out.startswith("intent graph (offline)")
    assert "entity 'patients'" in out and "value '60'  (>)" in out and "misc/patients.csv:age" in out
    # a column the question names twice: one attribute, the other words shown beside its name
    assert main(["intent", "List the names of patients older than 60, ordered by their age.", "--index-dir", example_index]) == 0
    assert "attribute 'age' (also 'older')" in capsys.readouterr().out


def test_empty_question_is_a_one_line_error(example_index, capsys):
    assert main(["intent", "   ", "--index-dir", example_index]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("raylake: error: empty question") and "\n" not in err


def test_missing_index_is_a_one_line_error(tmp_path, capsys):
    assert main(["intent", "which clubs?", "--index-dir", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("raylake: error: no index") and "\n" not in err
