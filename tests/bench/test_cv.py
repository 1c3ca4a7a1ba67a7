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


def test_the_tools_that_reuse_a_run_read_its_databases_and_saved_fold_models_one_way(tmp_path):
    import json

    from bench.retrieval.cv import db_folds, fold_model, held_out, question_dbs, saved_folds
    from raylake.errors import RaylakeError

    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(json.dumps({"id": i, "question": "x", "db_id": d}) for i, d in [(1, "a"), (2, "b")]) + "\n")
    assert question_dbs(str(q), [{"id": "2"}, {"id": "1"}]) == ["b", "a"]
    with pytest.raises(RaylakeError, match="db_id"):
        question_dbs(str(q), [{"id": "3"}])
    for k in (0, 2):
        (tmp_path / "m" / f"raylake-fold{k}").mkdir(parents=True)
        (tmp_path / "m" / f"raylake-fold{k}" / "relevance.json").write_text("{}")
    (tmp_path / "m" / "raylake-fold1").mkdir()  # no relevance.json: an interrupted save is not a model
    assert saved_folds(str(tmp_path / "m"), 5) == [0, 2]
    assert fold_model("M", 3, "raylake_both") == "M/raylake_both-fold3"
    five = tmp_path / "five.jsonl"  # one question per database, five databases: one per fold
    five.write_text("\n".join(json.dumps({"id": str(i), "question": "x", "db_id": "abcde"[i]}) for i in range(5)) + "\n")
    qs = [{"id": str(i)} for i in range(5)]
    fold = db_folds(list("abcde"), 5, 0)
    held = held_out(str(five), qs, str(tmp_path / "m"), 5)  # the run's split, read only for the saved folds 0 and 2
    assert held == {k: [qs[fold.index(k)]] for k in (0, 2)}
    with pytest.raises(RaylakeError, match="holds 2 fold models"):
        held_out(str(five), qs, str(tmp_path / "m"), 5, need=3)


def test_the_stop_study_describes_every_prefix_of_a_decode():
    import numpy as np

    from bench.retrieval.stop import PREFIX_FEATURES, best, prefix_features
    from raylake.relevance.complete import Calibration

    q, rest = np.array([0.9, 0.5, 1e-9]), np.array([0.2, 0.0])
    X = prefix_features(q, rest, [4, 7, 9], Calibration(), np.array([0, 0, 0, 0, 0, 0, 0, 1, 0, 1]))
    assert X.shape == (3, len(PREFIX_FEATURES))
    col = {f: i for i, f in enumerate(PREFIX_FEATURES)}
    assert list(X[:, col["n_folders"]]) == [1, 2, 2]  # tables 4, 7, 9 lie in folders 0, 1, 1
    assert list(X[:, col["next_new_folder"]]) == [1, 0, 0]
    assert X[0, col["p_suff"]] == pytest.approx(0.5 * (1 - 1e-9) * 0.8, rel=1e-6)  # picks 2, 3 and the pool left out
    assert best(np.array([0.1, 0.9, 0.95]), 2) == 2 and best(np.zeros(0), 5) == 0
