"""Stage-1 closures through METIS part actors equal the in-process lake graph's."""
from __future__ import annotations

import numpy as np
import pytest

from raylake.graph import PartitionedGraph
from raylake.index.reader import LakeIndex


@pytest.fixture(scope="module")
def index(example_index):
    return LakeIndex.load(example_index)


def test_part_actors_answer_closures_like_the_whole_graph(ray_session, index):
    g = index.graph
    # three parts cut by METIS over the real edges, so closures must cross the cut
    from raylake.index.partition import partition_tables

    parts = partition_tables(index.paths, index.edges, 3)
    assert len(set(parts.tolist())) == 3
    pg = PartitionedGraph(g, parts)
    try:
        rng = np.random.default_rng(0)
        crossed = 0
        for _ in range(12):
            seeds = rng.choice(index.n_tables, size=2, replace=False).tolist()
            for hops in (1, 2):
                got = pg.closure(seeds, hops)
                assert got == g.closure(seeds, hops)
                crossed += len({int(parts[t]) for t in got}) > 1
        assert crossed > 0
        assert pg.closure(seeds, 2, min_join=0.8) == g.closure(seeds, 2, min_join=0.8)
    finally:
        pg.close()


def test_engine_with_part_actors_gives_the_same_plan(ray_session, example_index):
    from raylake.search import Engine

    q = "What is the average points of players from the club with name 'AIB'?"
    plain = Engine(example_index).ask(q)
    eng = Engine(example_index, part_actors=True)
    try:
        assert eng.ask(q).paths == plain.paths
    finally:
        eng.region.close()
