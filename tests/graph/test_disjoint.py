"""raylake.graph.disjoint: union-find against a brute-force closure."""
import random

from raylake.graph import DisjointSets


def _closure(n, pairs):
    comp = {i: {i} for i in range(n)}
    for a, b in pairs:
        if comp[a] is not comp[b]:
            merged = comp[a] | comp[b]
            for x in merged:
                comp[x] = merged
    return comp


def test_sets_match_the_transitive_closure_on_random_pairs():
    rng = random.Random(0)
    for _ in range(50):
        n = rng.randint(1, 40)
        pairs = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 60))]
        ds = DisjointSets()
        for a, b in pairs:
            ds.union(a, b)
        comp = _closure(n, pairs)
        for a in range(n):
            for b in range(n):
                assert (ds.find(a) == ds.find(b)) == (b in comp[a])


def test_union_keeps_the_first_argument_root_and_stores_only_non_roots():
    ds = DisjointSets()
    assert ds.union("a", "b") == "a"
    assert ds.union("c", "b") == "c"  # b's set (rooted at a) joins c's
    assert {ds.find(x) for x in "abc"} == {"c"} and ds.find("z") == "z"
    assert set(ds.parent) == {"a", "b"}  # c is a root, z was never merged
