"""The joint choice stays bounded: many entities with many candidate tables cost a number of objective
evaluations linear in the entities (the beam), and a beam wide enough to hold every set chooses as the
exact enumeration does."""
from __future__ import annotations

import dataclasses

import pytest


@pytest.fixture(scope="module")
def extractor(example_index):
    from raylake.index.reader import LakeIndex
    from raylake.intent.offline import OfflineExtractor

    return OfflineExtractor(LakeIndex.load(example_index))


def _chooser(extractor, **settings):
    from raylake.intent.offline.joint import JointChooser

    return JointChooser(extractor.index, dataclasses.replace(extractor.settings, **settings), extractor.matcher, extractor.ranker)


def _ranked(n_tables: int, entities: int) -> list[list[tuple[int, float]]]:
    # entity k ranks every table, each a little differently (no two entities alike)
    return [sorted(((t, 1.0 - ((t * 7 + k * 3) % n_tables) / n_tables) for t in range(n_tables)), key=lambda x: -x[1])
            for k in range(entities)]


def test_many_entities_cost_evaluations_linear_in_the_entities(extractor):
    n_tables = len(extractor.index.paths)
    assert n_tables >= 8
    chooser = _chooser(extractor)
    cfg = chooser.settings
    width = cfg.joint_width + cfg.joint_near  # at most this many candidates per entity
    for entities in (12, 24):
        chooser.evaluations = 0
        chosen, runners_up = chooser.choose(_ranked(n_tables, entities))
        assert sorted(chosen) == list(range(entities))
        assert all(0 <= t < n_tables for t in chosen.values())
        # the exact choice would try ≥ 2^entities sets; the beam (B + 1) · n · W at most
        assert 0 < chooser.evaluations <= (cfg.joint_beam + 1) * entities * width
        assert chooser.evaluations < 2 ** entities
        assert all(chosen[k] not in runners_up[k] for k in runners_up)


def test_a_beam_holding_every_set_chooses_as_the_exact_enumeration(extractor):
    n_tables = len(extractor.index.paths)
    ranked = _ranked(n_tables, 3)
    exact = _chooser(extractor).choose(ranked)
    beam = _chooser(extractor, max_joint=0, joint_beam=10 ** 6)
    assert beam.choose(ranked)[0] == exact[0]
    assert beam.evaluations > 0
