"""Algorithm 1 with the global cache and the offline DuckDB judge, on real lake files and indexes."""
from __future__ import annotations

import os

import pytest

from raylake.graph import LakeGraph
from raylake.index.reader import LakeIndex
from raylake.integrate import EdgeCache, OfflineJudge, edge_key, validate, validate_each


def _counting_judge(index, graph):
    judge, calls = OfflineJudge(index), {}

    def judged(a, b):
        calls[(a, b)] = calls.get((a, b), 0) + 1
        return judge.judge(a, b, graph.join[a].get(b, []))

    return judged, calls


def test_shared_edge_is_validated_once(example_index):
    idx = LakeIndex.load(example_index)
    g = idx.graph
    sales, products, stores = (idx.path_id[p] for p in ("misc/sales.csv", "misc/products.csv", "misc/stores.csv"))
    terminals = {"q1": [sales, products], "q2": [sales, products, stores]}
    judged, calls = _counting_judge(idx, g)
    run = validate(g, terminals, EdgeCache(judged))
    shared = edge_key(sales, products)
    assert run.trees["q1"].edges == [shared]
    assert run.trees["q2"].edges == sorted([shared, edge_key(sales, stores)])
    assert calls[shared] == 1 and run.validations == 2 == len(calls)
    # alone, each question judges its own edges: the shared one twice
    assert validate_each(g, terminals, judged) == 3
    assert run.iterations == 1 and run.trees["q2"].unreached == []


def _write(path, header, rows):
    with open(path, "w") as fh:
        fh.write(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")


@pytest.fixture(scope="module")
def bridge_index(ray_session, tmp_path_factory):
    from raylake.index.build import build_index

    lake = tmp_path_factory.mktemp("bridge_lake")
    _write(lake / "customers.csv", "customer_id,name", [(i, f"Customer {i}") for i in range(1, 21)])
    _write(lake / "orders.csv", "order_id,customer_id,product_id", [(100 + i, 1 + i % 20, 501 + i % 10) for i in range(40)])
    _write(lake / "products.csv", "product_id,title", [(501 + i, f"Title {i}") for i in range(10)])
    index_dir = str(tmp_path_factory.mktemp("bridge_index") / ".raylake")
    build_index(str(lake), index_dir, progress=False)
    return index_dir


def test_rejected_edge_is_replaced_by_a_bridge_path(bridge_index):
    idx = LakeIndex.load(bridge_index)
    cust, orders, prods = (idx.path_id[p] for p in ("customers.csv", "orders.csv", "products.csv"))
    # the candidate graph: a likely-looking direct link customers.customer_id – products.product_id (their
    # values 1..20 and 501..510 never meet) and the true path through orders at lower p
    edges = [
        {"kind": "join", "src_table": "customers.csv", "dst_table": "products.csv", "src_column": "customer_id",
         "dst_column": "product_id", "score": 0.9, "mapping": None, "row_overlap": None},
        {"kind": "join", "src_table": "orders.csv", "dst_table": "customers.csv", "src_column": "customer_id",
         "dst_column": "customer_id", "score": 0.6, "mapping": None, "row_overlap": None},
        {"kind": "join", "src_table": "orders.csv", "dst_table": "products.csv", "src_column": "product_id",
         "dst_column": "product_id", "score": 0.6, "mapping": None, "row_overlap": None},
    ]
    g = LakeGraph.from_edges(idx.paths, edges)
    judged, _ = _counting_judge(idx, g)
    cache = EdgeCache(judged)
    run = validate(g, {"q": [cust, prods]}, cache)
    direct = cache.verdicts[edge_key(cust, prods)]
    assert not direct.valid and "containment 0.00" in direct.reason
    assert run.trees["q"].edges == sorted([edge_key(cust, orders), edge_key(orders, prods)])
    assert run.trees["q"].nodes == [cust, prods, orders] and run.trees["q"].unreached == []
    assert run.iterations == 2 and run.per_round == [1, 2] and run.validations == 3
    v = cache.verdicts[edge_key(orders, prods)]
    assert v.valid and v.containment == 1.0 and os.path.basename(idx.paths[orders]) == "orders.csv"
