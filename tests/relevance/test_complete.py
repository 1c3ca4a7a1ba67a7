"""The extension classifier's states, greedy decode, calibration and stop (raylake.relevance.complete)."""
import json

import numpy as np
import pytest

from raylake.graph import LakeGraph
from raylake.relevance.classifier import CompletionClassifier
from raylake.relevance.complete import STATE_FEATURES, Calibration, Completion, choose_sequence, isotonic, width
from raylake.relevance.features import FEATURES, folder_ids
from raylake.relevance.select import best_prefix

# a bridge: makers -- models -- cars; a lone table elsewhere; a shard pair
PATHS = ["db/makers.csv", "db/models.csv", "db/cars.csv", "other/makers_list.csv", "db/sales_1.csv", "db/sales_2.csv"]


def _shards(graph):
    return [graph.shards(t) for t in range(graph.n_tables)]


def _join(a, b, score=0.9):
    return {"src_table": PATHS[a], "dst_table": PATHS[b], "kind": "join", "src_column": "id", "dst_column": "id",
            "score": score, "mapping": None, "row_overlap": 0.0}


@pytest.fixture
def graph():
    shard = {"src_table": PATHS[4], "dst_table": PATHS[5], "kind": "union", "src_column": None, "dst_column": None,
             "score": 0.95, "mapping": "{}", "row_overlap": 0.0}
    return LakeGraph.from_edges(PATHS, [_join(0, 1), _join(1, 2), _join(2, 4), shard])


def test_states_teacher_force_the_needed_tables_and_end_with_every_rest_a_negative(graph):
    comp = Completion(graph, folder_ids(PATHS), _shards(graph), pool=3)
    cand = np.arange(6)
    X = np.zeros((6, len(FEATURES)), np.float32)
    p = np.array([0.2, 0.9, 0.1, 0.8, 0.05, 0.04])  # models first; makers_list (another folder) beats makers on p
    rows, labels = comp.states(cand, X, p, gold=[0, 1])
    assert rows.shape[1] == width(len(FEATURES)) == len(FEATURES) + 2 + len(STATE_FEATURES)
    # state {models}: pool = the rest of the top 3 by p (makers_list, makers) + models' join neighbours (cars)
    first = rows[: 3]
    s_join, s_folder = len(FEATURES) + 2, len(FEATURES) + 2 + STATE_FEATURES.index("s_folder")
    assert list(labels[:3]) == [0.0, 1.0, 0.0]  # makers needed; makers_list and cars not
    assert first[1, s_join] == pytest.approx(0.9) and first[0, s_join] == 0.0  # makers joins models, makers_list does not
    assert first[1, s_folder] == 1.0 and first[0, s_folder] == 0.0
    assert labels[3:].sum() == 0 and len(labels) > 3  # the final state: nothing more is needed


def test_a_trained_extension_classifier_decodes_the_joined_table_before_a_likelier_loner(graph):
    comp = Completion(graph, folder_ids(PATHS), _shards(graph), pool=3)
    rng = np.random.default_rng(0)
    # training rows: needed exactly when joined to the state (the signal the first stage cannot see)
    n = 600
    R = np.zeros((n, width(len(FEATURES))), np.float32)
    R[:, len(FEATURES)] = rng.uniform(size=n)  # first-stage p: noise
    joined = rng.uniform(size=n) < 0.3
    R[:, len(FEATURES) + 2] = np.where(joined, rng.uniform(0.5, 1.0, n), 0.0)
    clf = CompletionClassifier(width(len(FEATURES)), hidden=8)
    clf.fit(R, joined.astype(np.float32), epochs=200)
    cand = np.arange(6)
    p = np.array([0.2, 0.9, 0.1, 0.8, 0.05, 0.04])
    seq, q, rest = comp.decode(clf, cand, np.zeros((6, len(FEATURES)), np.float32), p, budget=3)
    assert seq[0] == 1  # the first table is the first stage's best
    assert seq[1] in (0, 2) and 3 not in seq  # then what joins the answer, never the likelier table elsewhere
    assert q[0] == pytest.approx(0.9) and q[1] > 0.5 and len(rest) > 0  # the last state's pool, not yet picked
    empty, q0, _ = comp.decode(clf, cand, np.zeros((6, len(FEATURES)), np.float32), p, budget=0)
    assert empty == [] and len(q0) == 0


def test_isotonic_pools_adjacent_violators_into_a_monotone_step_function():
    xs, ys = isotonic(np.array([0.1, 0.2, 0.3, 0.4, 0.9]), np.array([0.0, 1.0, 0.0, 1.0, 1.0]))
    assert list(ys) == sorted(ys)  # monotone
    assert ys[0] == 0.0 and ys[-1] == 1.0
    assert ys[1] == pytest.approx(0.5)  # 0.2 and 0.3 (1 then 0) pooled to their mean
    cal = Calibration(xs, ys)
    assert cal(np.array([0.25]))[0] == pytest.approx(0.5)
    assert Calibration.fit(np.array([0.5]), np.array([1.0]))(np.array([0.3]))[0] == pytest.approx(0.3)  # too few: identity


def test_the_stop_keeps_the_decoded_order_and_reads_calibrated_probabilities():
    # a later pick likelier than an earlier one is not moved ahead of it: its bridge comes first
    assert best_prefix(np.array([0.9, 0.4, 0.95, 0.01]), np.array([0.01])) == 3
    assert best_prefix(np.array([0.9, 0.05, 0.02]), np.array([])) == 1
    assert best_prefix(np.array([]), np.array([0.5])) == 0
    flat = Calibration([0.0, 1.0], [0.0, 0.1])  # held-out picks were rarely needed: the stop believes that
    assert choose_sequence([7, 8], np.array([0.9, 0.9]), np.array([]), flat) == [(7, 0.9)]
    out = choose_sequence([7, 8], np.array([0.9, 0.9]), np.array([]), Calibration())
    assert [t for t, _ in out] == [7, 8]


def test_a_calibration_survives_its_dict_exactly_however_small_its_knots():
    # Raw pick probabilities reach 1e-20. Knots once stored to 6 decimals collapsed onto 0, and a pool table
    # of q = 1e-30 then read the floor of the smallest picks instead of 0 (the saved models' stop differed).
    cal = Calibration([1e-21, 4e-18, 1e-12, 0.5, 1.0], [0.0, 0.05, 0.08, 0.3, 0.9])
    back = Calibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert list(back.xs) == list(cal.xs) and list(back.ys) == list(cal.ys)
    tiny = np.array([1e-30, 1e-19, 1e-14])
    assert list(back(tiny)) == list(cal(tiny)) and back(tiny)[0] == 0.0


def test_the_hop_feature_is_the_graph_distance_from_the_state(graph):
    comp = Completion(graph, folder_ids(PATHS), _shards(graph), pool=6)
    cand, p = np.arange(6), np.linspace(0.9, 0.4, 6)
    X = np.zeros((6, len(FEATURES)), np.float32)
    pos, rank = {t: t for t in range(6)}, {t: t for t in range(6)}
    hop = len(FEATURES) + 2 + STATE_FEATURES.index("s_hop")
    for S in ([0], [3], [0, 4], [5]):
        pool = [t for t in range(6) if t not in S]
        dist = graph.closure(S, 2)
        assert list(comp.rows(S, pool, X, p, pos, rank)[:, hop]) == [dist.get(t, 3) for t in pool], S
