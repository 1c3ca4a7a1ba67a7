"""``bench.synth``: exact size, determinism, and ground truth that matches the files written."""
from __future__ import annotations

import csv
import filecmp
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:  # bench/ is a folder of the repository, not an installed package
    sys.path.insert(0, ROOT)

from bench.synth import generate, respell  # noqa: E402


def _header(lake: str, f: str) -> list[str]:
    with open(os.path.join(lake, f), newline="", encoding="utf-8") as fh:
        return next(csv.reader(fh))


def test_lake_size_determinism_and_ground_truth(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    truth = generate(a, 150, seed=5, questions=60)
    generate(b, 150, seed=5, questions=60)
    lake = os.path.join(a, "lake")
    files = sorted(os.listdir(lake))
    assert len(files) == 150 and set(truth["source_tables"]) == set(files)
    cmp = filecmp.dircmp(lake, os.path.join(b, "lake"))
    assert not cmp.diff_files and not cmp.left_only and not cmp.right_only
    assert filecmp.cmp(os.path.join(a, "ground_truth.json"), os.path.join(b, "ground_truth.json"), shallow=False)

    headers = {f: _header(lake, f) for f in files}
    assert truth["join_pairs"] and truth["union_groups"]
    for fa, ca, fb, cb, kind in truth["join_pairs"]:
        assert ca in headers[fa] and cb in headers[fb] and kind in ("pk-pk", "fk-pk")
        assert truth["source_tables"][fa]["family"] == truth["source_tables"][fb]["family"]
    for g in truth["union_groups"]:
        assert len(g["files"]) >= 2
        canon = [sorted(g["columns"][f].values()) for f in g["files"]]
        assert all(c == canon[0] for c in canon)  # same columns up to spelling and order
        for f in g["files"]:
            assert sorted(headers[f]) == sorted(g["columns"][f])

    with open(os.path.join(a, "questions.jsonl"), encoding="utf-8") as fh:
        questions = [json.loads(line) for line in fh]
    assert len(questions) == 60 and len({q["question"] for q in questions}) == 60
    for q in questions:
        assert set(q) >= {"id", "question", "gold_tables", "gold_sql", "db_id", "n_tables", "n_gold_files", "has_union_shards"}
        assert len(q["gold_tables"]) == q["n_gold_files"] >= 2 and set(q["gold_tables"]) <= set(files)
        assert len({truth["source_tables"][f]["family"] for f in q["gold_tables"]}) == 1


def test_respell():
    assert [respell("complaint_type", s) for s in ("snake", "title", "upper", "camel", "nosep")] == [
        "complaint_type", "Complaint Type", "COMPLAINT_TYPE", "ComplaintType", "complainttype"]
