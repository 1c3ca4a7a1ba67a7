"""bench.retrieval: metric arithmetic, every method on the example index, JSON schema, CLI slice."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:  # bench/ is a folder of the repository, not an installed package
    sys.path.insert(0, ROOT)

from bench.retrieval import harness  # noqa: E402
from bench.retrieval.hybrid import rrf  # noqa: E402
from bench.retrieval.metrics import aggregate, score  # noqa: E402

QUESTIONS = os.path.join(ROOT, "examples", "questions.jsonl")
METRIC_KEYS = {"recall", "precision", "f1", "sufficiency", "latency_p50_ms", "latency_p95_ms", "n"}


# ---------------------------------------------------------------------- metrics by hand


def test_score_hand_computed():
    s = score(["a", "b", "c"], ["a", "b", "d", "e"])
    assert s["recall"] == pytest.approx(2 / 3)
    assert s["precision"] == pytest.approx(0.5)
    assert s["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))  # 4/7
    assert s["f1"] == pytest.approx(4 / 7)
    assert s["sufficiency"] == 0.0
    assert score(["a", "b"], ["b", "a", "x"]) == pytest.approx({"recall": 1.0, "precision": 2 / 3, "f1": 0.8, "sufficiency": 1.0})
    assert score(["a"], []) == {"recall": 0.0, "precision": 0.0, "f1": 0.0, "sufficiency": 0.0}
    assert score(["a"], ["b"])["f1"] == 0.0
    with pytest.raises(ValueError):
        score([], ["a"])


def test_aggregate_is_a_macro_average_with_percentiles():
    golds = [["a", "b", "c"], ["a", "b"], ["a"]]
    preds = [["a", "b", "d", "e"], ["b", "a", "x"], []]
    r = aggregate(golds, preds, [10.0, 20.0, 30.0])
    assert r["recall"] == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert r["precision"] == pytest.approx((0.5 + 2 / 3 + 0) / 3)
    assert r["f1"] == pytest.approx((4 / 7 + 0.8 + 0) / 3)
    assert r["sufficiency"] == pytest.approx(1 / 3)
    assert r["latency_p50_ms"] == pytest.approx(20.0)
    assert r["latency_p95_ms"] == pytest.approx(29.0)  # 10 + 0.95·2·10, linear interpolation
    assert r["n"] == 3
    assert set(r) == METRIC_KEYS


def test_rrf_hand_computed():
    sparse = np.array([3.0, 2.0, 1.0])  # ranks 1, 2, 3
    dense = np.array([0.1, 0.9, 0.5])  # ranks 3, 1, 2
    out = rrf(sparse, dense, k=60)
    assert out == pytest.approx([1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62])


# ---------------------------------------------------------------------- questions file


def test_example_questions_gold_exists_and_reads_only_three_fields(tmp_path):
    lake = os.path.join(ROOT, "examples", "lake")
    qs = harness.load_questions(QUESTIONS, lake)
    assert 20 <= len(qs) <= 50
    assert all(set(q) == {"id", "question", "gold_tables"} for q in qs)
    bad = tmp_path / "q.jsonl"
    bad.write_text(json.dumps({"id": "x", "question": "q?", "gold_tables": ["nope.csv"]}) + "\n")
    with pytest.raises(harness.RaylakeError, match="not in lake"):
        harness.load_questions(str(bad), lake)
    bad.write_text(json.dumps({"id": "x", "question": "q?"}) + "\n")
    with pytest.raises(harness.RaylakeError, match="gold_tables"):
        harness.load_questions(str(bad), lake)


# ---------------------------------------------------------------------- every method on the example index


@pytest.fixture(scope="module")
def slice_result(example_index, example_lake):
    qs = harness.load_questions(QUESTIONS, example_lake)[::9]  # 4 questions with 4, 2, 1 and 2 gold tables
    params = {"exact": {"max_expansions": 150}, "jar": {"node_limit": 200}}
    return qs, harness.run(example_index, qs, [2, 5], list(harness.METHODS), params=params, progress=False)


def test_every_method_returns_at_most_L_existing_tables(slice_result, example_index):
    from raylake.index.reader import LakeIndex

    qs, res = slice_result
    paths = set(LakeIndex.load(example_index).paths)
    assert list(res["methods"]) == list(harness.METHODS)
    for m in harness.METHODS:
        for b in (2, 5):
            preds = res["predictions"][m][str(b)]
            assert set(preds) == {q["id"] for q in qs}
            for qid, tables in preds.items():
                assert len(tables) <= b and len(set(tables)) == len(tables)
                assert set(tables) <= paths, (m, qid, tables)
        # the point-wise and greedy baselines always fill the budget on a 27-table lake
        if m in ("dense", "bm25", "hybrid", "greedy", "jar"):
            assert all(len(t) == 5 for t in res["predictions"][m]["5"].values())


def test_results_schema_and_metrics_match_predictions(slice_result):
    qs, res = slice_result
    gold = {q["id"]: q["gold_tables"] for q in qs}
    for m, entry in res["methods"].items():
        assert set(entry) == {"L"} and set(entry["L"]) == {"2", "5"}
        for b, r in entry["L"].items():
            assert set(r) == METRIC_KEYS and r["n"] == len(qs)
            preds = res["predictions"][m][b]
            again = aggregate([gold[i] for i in gold], [preds[i] for i in gold], [res["latencies_ms"][m][b][i] for i in gold])
            assert again == pytest.approx(r)
            assert 0.0 <= r["sufficiency"] <= r["recall"] <= 1.0
    json.dumps(res)  # serialisable as is
    assert res["meta"]["method"]["exact"]["params"]["max_expansions"] == 150


def test_deterministic_given_the_index(slice_result, example_index):
    qs, res = slice_result
    params = {"exact": {"max_expansions": 150}, "jar": {"node_limit": 200}}
    again = harness.run(example_index, qs, [2, 5], ["jar", "exact"], params=params, progress=False)
    for m in again["predictions"]:
        assert again["predictions"][m] == res["predictions"][m]


def test_exact_scores_at_least_raylakes_plan_when_complete(example_index):
    """Exact maximises raylake's own objective U − λ·|Φ| over the region: when the
    enumeration completes, its best plan scores at least the beam's plan."""
    from raylake.config import RaylakeContext
    from raylake.search import Engine

    from bench.retrieval.base import BenchContext
    from bench.retrieval.exact import Exact

    ctx = BenchContext(example_index)
    ex = Exact(ctx, max_expansions=200_000, time_cap_s=120)
    engine = Engine(example_index)
    lam = RaylakeContext.get_current().search.min_gain
    for q in ("Which clubs started before 1980?", "Which players play for the club Honved?"):
        got = ex.select(ex.prepare(q), 2)
        assert ex.stats["complete"] >= 1 and got
        ans = engine.ask(q, budget=2)
        clusters = sum(1 for st in ans.plan.steps if st.role != "union shard")  # λ is paid per shard cluster
        assert ex.last_score >= ans.plan.value - lam * clusters - 1e-9, (q, got, ans.paths)
        ex.stats["complete"] = 0


# ---------------------------------------------------------------------- the CI slice: the CLI over the example questions at L = 10


def test_cli_slice_all_methods_at_L10(example_index, example_lake, tmp_path):
    out = tmp_path / "ci.json"
    env = dict(os.environ, PYTHONPATH=ROOT)
    cmd = [sys.executable, "-m", "bench.retrieval", "--lake", example_lake, "--index-dir", example_index,
           "--questions", QUESTIONS, "--budgets", "10", "--methods", "all", "--out", str(out),
           "--exact-max-expansions", "200", "--report-dir", str(tmp_path), "--quiet"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(out.read_text())
    n = sum(1 for line in open(QUESTIONS) if line.strip())
    assert set(res["methods"]) == set(harness.METHODS)
    for m, entry in res["methods"].items():
        r = entry["L"]["10"]
        assert r["n"] == n and set(r) == METRIC_KEYS
        assert r["recall"] > 0.3, m  # gold and predicted paths are both relative to the lake root
    # 27 tables: dense top-10 covers nearly every gold set
    assert res["methods"]["dense"]["L"]["10"]["recall"] >= 0.9
    # one table row per method at L = 10 (the L column, not any cell: a p50 of 10 ms is one too)
    rows = [line.split("|") for line in (tmp_path / "ci.md").read_text().splitlines() if line.startswith("| ")]
    assert sorted(r[1].strip() for r in rows if len(r) > 3 and r[2].strip() == "10") == sorted(harness.METHODS)
    assert (tmp_path / "ci.png").stat().st_size > 10_000


def test_cli_bad_input_is_one_line(tmp_path, example_lake, example_index):
    env = dict(os.environ, PYTHONPATH=ROOT)

    def cli(index_dir, questions, *extra):
        cmd = [sys.executable, "-m", "bench.retrieval", "--lake", example_lake, "--index-dir", index_dir,
               "--questions", questions, "--out", str(tmp_path / "x.json"), "--report-dir", str(tmp_path), *extra]
        return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    proc = cli(str(tmp_path / "none"), QUESTIONS)
    assert proc.returncode == 2 and "raylake index" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    proc = cli(example_index, str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli(example_index, QUESTIONS, "--methods", "raylake_q", "--limit", "2")
    assert proc.returncode == 2 and "--model-dir" in proc.stderr and "Traceback" not in proc.stderr
