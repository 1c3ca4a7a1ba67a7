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
