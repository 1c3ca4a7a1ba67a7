"""The cross-validation split of ``bench.retrieval.cv``: no database in two folds."""
from __future__ import annotations

import pytest

from bench.retrieval.cv import db_folds


def test_no_database_has_questions_in_two_folds():
    dbs = [f"db{i % 23}" for i in range(400)]
    fold = db_folds(dbs, 5, seed=0)
    seen: dict[str, int] = {}
    for d, f in zip(dbs, fold):
        assert seen.setdefault(d, f) == f, d
    assert sorted(set(fold)) == [0, 1, 2, 3, 4]
    assert db_folds(dbs, 5, seed=0) == fold  # deterministic for a seed
    assert db_folds(dbs, 5, seed=1) != fold


def test_too_few_databases_or_folds_is_an_error():
    with pytest.raises(ValueError):
        db_folds(["a", "b"], 5)
    with pytest.raises(ValueError):
        db_folds(["a", "b", "c"], 1)


def test_compare_scores_every_run_on_the_questions_all_of_them_answered(tmp_path):
    import json

    from bench.retrieval.compare import main

    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps({"id": i, "question": i, "gold_tables": ["a.csv", "b.csv"]}) + "\n" for i in "xyz"))
    full = {"predictions": {"m": {"10": {"x": ["a.csv", "b.csv"], "y": ["a.csv"], "z": ["c.csv"]}}},
            "latencies_ms": {"m": {"10": {"x": 1.0, "y": 1.0, "z": 1.0}}}}
    partial = {"predictions": {"m": {"10": {"x": ["a.csv"], "y": ["a.csv", "b.csv"]}}},  # z not scored (a stopped run)
               "latencies_ms": {"m": {"10": {"x": 1.0, "y": 1.0}}}}
    (tmp_path / "full.json").write_text(json.dumps(full))
    (tmp_path / "partial.json").write_text(json.dumps(partial))
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--questions", str(q), f"before={tmp_path / 'full.json'}", f"new={tmp_path / 'partial.json'}"]) == 0
    lines = {line.split()[1]: line for line in out.getvalue().splitlines()}
    # both on x and y only: each run is sufficient on one of the two
    assert "n    2" in lines["before:m"] and "Sufficiency 0.500" in lines["before:m"]
    assert "n    2" in lines["new:m"] and "Sufficiency 0.500" in lines["new:m"]
    assert main(["--questions", str(q), "no-equals-sign"]) == 2


def test_a_fold_model_is_scored_as_saved_and_read_back(tmp_path):
    import numpy as np

    from bench.retrieval.cv import _round_trip
    from raylake.relevance.complete import Calibration
    from raylake.relevance.model import RelevanceModel

    model = RelevanceModel.fresh(heads=1)
    model.calibration = Calibration([1e-21, 1e-12, 1.0], [0.0, 0.05, 0.9])
    for path in (str(tmp_path / "fold0"), None):
        back = _round_trip(model, path)
        assert back is not model and isinstance(back, RelevanceModel)
        assert list(back.calibration.xs) == list(model.calibration.xs)
        x = np.array([1e-30, 1e-15, 0.5])
        np.testing.assert_array_equal(back.calibration(x), model.calibration(x))
    assert (tmp_path / "fold0" / "relevance.json").is_file()
