"""Candidate features (:mod:`raylake.relevance.features`): the folder a candidate lies in."""
from __future__ import annotations

import numpy as np
import pytest

from raylake.relevance.features import FEATURES, CandidateFeatures, folder_ids

FOLDER = [FEATURES.index(f) for f in ("folder_gap", "folder_log_rank", "folder_cover", "folder_cover_gap", "folder_top2_gap")]


def test_folder_ids_name_each_folder_once_and_a_single_folder_says_nothing():
    ids = folder_ids(["a/x.csv", "b/y.csv", "a/z.csv", "c/d/w.csv"])
    assert ids.tolist() == [0, 1, 0, 2]
    assert folder_ids(["t1.csv", "t2.csv"]) is None
    assert folder_ids(["x/t1.csv", "x/t2.csv"]) is None


@pytest.fixture(scope="module")
def feats(example_index):
    from raylake.index.reader import LakeIndex

    index = LakeIndex.load(example_index)
    return index, CandidateFeatures(index, index.graph)


def test_a_table_in_the_folder_that_covers_the_question_reads_so(feats):
    index, cf = feats
    pid = index.path_id
    player, club, movies, hospitals = (pid[p] for p in ("sports/player.csv", "sports/club.csv", "misc/movies.csv",
                                                         "misc/hospitals.csv"))
    score = np.zeros(index.n_tables, np.float32)
    # a look-alike elsewhere scores as high as the player table: only the folder tells them apart
    score[[movies, player, club, hospitals]] = [0.9, 0.9, 0.5, 0.4]
    cand = np.array([movies, player, club, hospitals])
    X = cf.describe("How many players does each club have?", cand, score)[:, FOLDER]
    gap, rank, cover, cover_gap, top2_gap = X.T
    assert gap.tolist() == [0.0, 0.0, 0.0, 0.0]  # each folder's best is the top score
    assert rank[1] == rank[2] and rank[0] == rank[3]  # folder-mates share their folder's rank
    # sports' candidates hold 'players' and 'club'; misc's neither
    assert cover[1] == cover[2] > cover[0] == cover[3] == 0.0
    assert cover_gap[1] == 0.0 < cover_gap[0]
    assert top2_gap[1] == 0.0 < top2_gap[0]  # sports: 0.9 + 0.5 against misc 0.9 + 0.4


def test_a_lake_of_one_folder_has_zero_folder_features(feats):
    index, cf = feats
    flat = CandidateFeatures.__new__(CandidateFeatures)
    flat.__dict__.update(cf.__dict__, folder=None)
    score = np.linspace(0.0, 1.0, index.n_tables).astype(np.float32)
    cand = np.arange(index.n_tables)
    q = "How many players does each club have?"
    assert not flat.describe(q, cand, score)[:, FOLDER].any()
    assert cf.describe(q, cand, score)[:, FOLDER].any()
