"""The learned relevance model: texts, the training loop, save/load, the engine's use of it."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from raylake.relevance import choose, name_words, table_text

QUESTIONS = [
    ("What is the average points of players from the club with name 'AIB'?", ["sports/club.csv", "sports/player.csv", "sports/points_2019.csv", "sports/points_2020.csv"]),
    ("How many players does each club have?", ["sports/club.csv", "sports/player.csv"]),
    ("List the names of clubs founded before 1900.", ["sports/club.csv"]),
    ("Which professors teach at which universities?", ["universities/professors.csv", "universities/universities.csv"]),
    ("How many lecturers does each university have?", ["universities/lecturers.csv", "universities/universities.csv"]),
    ("Show the orders with their service type.", ["commerce/orders.csv", "commerce/service_types.csv"]),
    ("What is the price of each service type?", ["commerce/service_pricing.csv", "commerce/service_types.csv"]),
    ("Which movies were released after 2000?", ["misc/movies.csv"]),
    ("List the flights departing from Boston.", ["misc/flights.csv"]),
    ("Which hospitals have more than 100 beds?", ["misc/hospitals.csv"]),
    ("Show the students and the courses they take.", ["misc/students.csv", "misc/courses.csv"]),
    ("What were the sales of each store?", ["misc/sales.csv", "misc/stores.csv"]),
]


def test_a_meaningful_name_is_evidence_and_a_neutral_one_is_not():
    assert name_words("sales/Order_Items_2.csv") == "sales order items"
    assert name_words("chinook_1/InvoiceLine.csv") == "chinook invoice line"
    for neutral in ("t0321.csv", "7f3a9c.parquet", "x/t12.csv"):
        assert name_words(neutral) == "", neutral
    assert table_text("t0321.csv", "id, name") == "id, name"
    assert table_text("sports/club.csv", "id, name") == "sports club: id, name"


def test_the_chosen_set_stops_where_expected_f1_plus_completeness_peaks():
    tables = np.arange(6)
    # two likely tables, then unlikely ones: the set stops after two
    assert choose(tables, np.array([0.95, 0.9, 0.1, 0.05, 0.02, 0.01]), 10) == [0, 1]
    # a third table more likely needed than not joins; the budget caps the size
    assert choose(tables, np.array([0.95, 0.9, 0.6, 0.05, 0.02, 0.01]), 10) == [0, 1, 2]
    assert choose(tables, np.array([0.95, 0.9, 0.6, 0.05, 0.02, 0.01]), 2) == [0, 1]
    # a doubtful third table: F1 alone leaves it out; the chance of a complete answer (0.65 -> 0.92) takes it,
    # as does leaning towards recall
    p = np.array([0.95, 0.9, 0.3, 0.05, 0.02, 0.01])
    assert choose(tables, p, 10, completeness=0.0) == [0, 1]
    assert choose(tables, p, 10) == [0, 1, 2]
    assert choose(tables, p, 10, recall_weight=3.0, completeness=0.0) == [0, 1, 2]


def test_a_feature_constant_in_training_is_ignored_not_saturated():
    from raylake.relevance.classifier import CompletionClassifier

    rng = np.random.default_rng(0)
    X = np.zeros((400, 3), np.float32)
    X[:, 0] = rng.normal(size=400)
    X[:, 1] = rng.normal(size=400)  # noise; column 2 is 0 in every training row (names of a neutral-name lake)
    y = (X[:, 0] > 0).astype(np.float32)
    clf = CompletionClassifier(3, hidden=8)
    clf.fit(X, y, epochs=300)
    probe = np.array([[2.0, 0.0, 0.0], [-2.0, 0.0, 0.0]], np.float32)
    shifted = probe.copy()
    shifted[:, 2] = 0.7  # a value the training never saw in that column
    assert clf.predict(probe)[0] > 0.8 and clf.predict(probe)[1] < 0.2
    np.testing.assert_allclose(clf.predict(shifted), clf.predict(probe), atol=1e-6)


def test_tables_of_similar_probability_are_taken_together_and_unlikely_ones_never_ride_along():
    # the classifier gives two shards of one source 0.8 and 0.7: both are taken
    assert choose(np.arange(4), np.array([0.9, 0.8, 0.7, 0.05]), 10) == [0, 1, 2]
    # a table it gives ~0 is never added to fill a group (shard clusters are not units)
    assert choose(np.arange(4), np.array([0.9, 1e-6, 1e-7, 0.8]), 10) == [0, 3]
    # the budget caps; ties break by table id; an empty candidate list gives an empty answer
    assert choose(np.array([5, 3, 4]), np.array([0.9, 0.9, 0.9]), 2) == [3, 4]
    assert choose(np.array([], np.int64), np.array([]), 10) == []


@pytest.fixture(scope="module")
def trained(example_index, tmp_path_factory):
    """A model trained on the example lake's questions (in process: the Ray task is tested by the CLI test)."""
    from raylake.config import RelevanceConfig
    from raylake.index.reader import LakeIndex
    from raylake.relevance.train import Source, fit

    index = LakeIndex.load(example_index)
    examples = [(q, [index.path_id[t] for t in ts]) for q, ts in QUESTIONS]
    cfg = RelevanceConfig(epochs=10, batch_size=4, lr=2e-4, classifier_epochs=60, completion_epochs=60)
    model, summary = fit([Source(index, examples)], cfg)
    out = str(tmp_path_factory.mktemp("model") / "relevance")
    model.save(out)
    return index, out, summary


def test_training_lowers_the_loss_and_the_saved_model_ranks_a_known_table_first(trained):
    from raylake.relevance import RelevanceModel

    index, out, summary = trained
    for loss in summary["head_loss"]:  # both cross-fitted heads learn
        assert np.mean(loss[-3:]) < 0.7 * np.mean(loss[:3]), loss
    clf = summary["classifier_loss"]
    assert clf[-1] < clf[0]
    assert sorted(os.listdir(out)) == ["classifier.safetensors", "completion.safetensors", "encoder.safetensors", "relevance.json"]
    lr = RelevanceModel.load(out).for_lake(index, cache=False)
    s = lr.scores("How many players does each club have?")
    assert index.paths[int(np.argmax(s))] in ("sports/player.csv", "sports/club.csv")
    cand, p, _ = lr.rank("Which hospitals have more than 100 beds?")
    assert index.paths[int(cand[np.argmax(p)])] == "misc/hospitals.csv"
    # the extension classifier and its calibration come back as saved
    model = RelevanceModel.load(out)
    assert summary["completion_rows"] > 0
    assert list(model.calibration.xs) == trained_calibration(out)["x"]  # exactly: knots reach 1e-20
    # the candidate classifier's calibration, fitted on probabilities cross-fitted over the halves: monotone
    assert summary["p_calibrated"]
    meta = json.load(open(os.path.join(out, "relevance.json")))
    assert list(model.p_calibration.ys) == meta["p_calibration"]["y"] == sorted(meta["p_calibration"]["y"])
    ranking = lr.rank("Which hospitals have more than 100 beds?")
    np.testing.assert_allclose(ranking.p, model.p_calibration(model.classifier.predict(ranking.features)))


def trained_calibration(out):
    return json.load(open(os.path.join(out, "relevance.json")))["calibration"]


def test_relevance_rank_shows_candidates_and_the_chosen_tables_in_order(trained, example_index, capsys):
    from raylake.cli import main

    _, out, _ = trained
    assert main(["relevance", "rank", "Which hospitals have more than 100 beds?", "--index-dir", example_index,
                 "--model", out, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["chosen"][0]["table"] == "misc/hospitals.csv"
    assert res["candidates"][0]["table"] == "misc/hospitals.csv"
    assert main(["relevance", "rank", "x", "--index-dir", example_index, "--model", out, "--budget", "0"]) == 2
    capsys.readouterr()
    assert main(["relevance", "rank", "Which hospitals have more than 100 beds?", "--index-dir", example_index,
                 "--model", out, "--extend", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["chosen"][0]["table"] == "misc/hospitals.csv"


def test_the_default_choice_is_the_candidates_by_probability_and_extend_decodes_the_plan(trained):
    from raylake.relevance import RelevanceModel

    index, out, _ = trained
    lr = RelevanceModel.load(out).for_lake(index, cache=False)
    ranking = lr.rank("How many players does each club have?")
    p = dict(zip(ranking.cand.tolist(), ranking.p.tolist()))
    by_p = lr.pick(ranking, 10)
    assert [t for t, _ in by_p] == choose(ranking.cand, ranking.p, 10)
    assert all(v == pytest.approx(p[t]) for t, v in by_p)  # each table with its own probability
    assert [t for t, _ in lr.pick(ranking, 1)] == [int(ranking.cand[np.argmax(ranking.p)])]
    extended = lr.pick(ranking, 10, extend=True)
    assert extended[0][0] == int(ranking.cand[np.argmax(ranking.p)])  # the decode starts from the best candidate
    assert len(extended) <= 10 and len({t for t, _ in extended}) == len(extended)


def test_the_engine_joins_the_tables_the_model_chooses(trained, example_index):
    from raylake.search import Engine

    _, out, _ = trained
    eng = Engine(example_index, relevance=out)
    ans = eng.ask("How many players does each club have?", budget=10)
    assert {"sports/club.csv", "sports/player.csv"} <= set(ans.paths)
    # the model's tables joined best first; every table it chose carries its probability
    assert any("relevance" in t for t in ans.tables)
    joins = [s for s in ans.to_json()["plan"] if s["op"] == "join"]
    assert joins and all(s["keys"]["anchor_column"] and s["keys"]["new_column"] for s in joins)
    off = Engine(example_index, relevance="off").ask("How many players does each club have?", budget=10)
    assert "relevance" not in ans.timings_ms or ans.timings_ms["relevance"] >= 0
    assert all("relevance" not in t for t in off.tables)


def test_a_damaged_or_foreign_model_folder_is_a_one_line_error(tmp_path, trained):
    from raylake.errors import RaylakeError
    from raylake.relevance import RelevanceModel

    with pytest.raises(RaylakeError, match="no relevance.json"):
        RelevanceModel.load(str(tmp_path))
    _, out, _ = trained
    meta = json.load(open(os.path.join(out, "relevance.json")))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "relevance.json").write_text(json.dumps({**meta, "features": ["x"]}))
    with pytest.raises(RaylakeError, match="other features"):
        RelevanceModel.load(str(bad))
    (bad / "relevance.json").write_text("{")
    with pytest.raises(RaylakeError, match="not valid JSON"):
        RelevanceModel.load(str(bad))


def test_a_model_trained_before_features_were_added_reads_the_prefix_it_knows(tmp_path, trained):
    from raylake.errors import RaylakeError
    from raylake.relevance import FEATURES, RelevanceModel

    index, _, _ = trained
    old = RelevanceModel.fresh(features=FEATURES[:-5], heads=1)
    old.save(str(tmp_path / "old"))
    lr = RelevanceModel.load(str(tmp_path / "old")).for_lake(index, cache=False)
    ranking = lr.rank("How many players does each club have?")
    assert ranking.features.shape[1] == len(FEATURES) - 5 and len(ranking.p) == len(ranking.cand)
    assert lr.pick(ranking, 3, extend=True)  # the extension classifier reads rows of the old width
    meta = json.load(open(tmp_path / "old" / "relevance.json"))
    del meta["p_calibration"]  # a model saved before the candidate classifier was calibrated reads it uncalibrated
    (tmp_path / "old" / "relevance.json").write_text(json.dumps(meta))
    lr = RelevanceModel.load(str(tmp_path / "old")).for_lake(index, cache=False)
    ranking = lr.rank("How many players does each club have?")
    np.testing.assert_allclose(ranking.p, lr.model.classifier.predict(ranking.features), rtol=1e-6)
    (tmp_path / "old" / "relevance.json").write_text(json.dumps({**meta, "features": FEATURES[1:]}))
    with pytest.raises(RaylakeError, match="other features"):  # not a prefix: features were renamed or reordered
        RelevanceModel.load(str(tmp_path / "old"))


def test_cross_fitting_halves_keep_questions_that_share_a_table_together():
    from raylake.relevance.train import groups, halves

    examples = [("a", [1, 2]), ("b", [2, 3]), ("c", [7]), ("d", [8, 9]), ("e", [9]), ("f", [3])]
    g = groups(examples)
    assert g[0] == g[1] == g[5] and g[3] == g[4] and len({g[0], g[2], g[3]}) == 3
    h = halves(examples, seed=0)
    assert h[0] == h[1] == h[5] and h[3] == h[4]
    assert set(h) == {0, 1}
    # one question asked of two lakes (tables keyed by lake) is one group: no head scores a question it trained on
    two = [("a", [(0, 1)]), ("a", [(1, 40)]), ("b", [(1, 41)]), ("c", [(0, 7)])]
    g = groups(two)
    assert g[0] == g[1] and len({g[0], g[2], g[3]}) == 3


def test_one_model_trains_on_several_lakes_and_a_count_mismatch_is_one_line(ray_session, example_index, tmp_path, capsys):
    from raylake.cli import main

    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps({"question": q, "gold_tables": ts}) + "\n" for q, ts in QUESTIONS))
    out = str(tmp_path / "model")
    assert main(["relevance", "train", "--index-dir", example_index, "--index-dir", example_index,
                 "--questions", str(qfile), "--out", out, "--quiet"]) == 2
    assert "one --questions file per --index-dir" in capsys.readouterr().err and not os.path.exists(out)
    assert main(["relevance", "train", "--index-dir", example_index, "--questions", str(qfile),
                 "--index-dir", example_index, "--questions", str(qfile), "--out", out, "--json", "--quiet"]) == 0
    meta = json.load(open(os.path.join(out, "relevance.json")))
    assert len(meta["training"]["lakes"]) == 2 and meta["training"]["questions"] == 2 * len(QUESTIONS)
    assert meta["heads"] == 1 and meta["context"] is True


def test_relevance_train_command_writes_a_model_the_engine_loads(ray_session, example_index, tmp_path):
    from raylake.cli import main
    from raylake.search import Engine

    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps({"question": q, "gold_tables": ts}) + "\n" for q, ts in QUESTIONS))
    out = str(tmp_path / "model")
    assert main(["relevance", "train", "--index-dir", example_index, "--questions", str(qfile), "--out", out, "--json", "--quiet"]) == 0
    meta = json.load(open(os.path.join(out, "relevance.json")))
    assert meta["context"] is True and meta["training"]["questions"] == len(QUESTIONS)
    ans = Engine(example_index, relevance=out).ask("How many players does each club have?")
    assert ans.paths and "relevance" in ans.timings_ms


def test_relevance_train_refuses_bad_input_with_one_line(example_index, tmp_path, capsys):
    from raylake.cli import main

    out = str(tmp_path / "m")
    assert main(["relevance", "train", "--index-dir", example_index, "--out", out]) == 2
    assert "nothing to train on" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "q", "gold_tables": ["nope.csv"]}) + "\n")
    assert main(["relevance", "train", "--index-dir", example_index, "--questions", str(bad), "--out", out]) == 2
    err = capsys.readouterr().err
    assert "'nope.csv' is not in the index" in err and "Traceback" not in err
    assert main(["relevance", "train", "--index-dir", example_index, "--questions", str(tmp_path / "missing.jsonl"), "--out", out]) == 2
    assert not os.path.exists(out)
