"""The search service on a real Ray Serve (the ``served`` fixture of conftest.py), over a copy
of the example index: answers, options, errors, batching, reloads, the missing index."""
from __future__ import annotations

import json
import math
import os
import shutil
import threading
import time
import uuid

import pytest
import requests

TOKEN = "test-token-123"
H = {"Authorization": f"Bearer {TOKEN}"}
Q = "which clubs have the most players?"


def _wait(fn, timeout=60.0, every=0.25):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(every)
    return None


@pytest.fixture(scope="module")
def engine(served):
    from raylake.search import Engine

    return Engine(served["index_dir"])


def ask(url, body, headers=H, **kw):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return requests.post(url + "/ask", data=data, headers={**headers, "Content-Type": "application/json"}, timeout=60, **kw)


def _close(a, b) -> bool:
    """Equal, but floats to 1e-4 relative: a batch embeds a replica's atoms in one call, and a
    batched matmul sums in another order than a single one (last-bit differences)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


def test_ask_equals_engine_answer(served, engine):
    r = ask(served["url"], {"question": Q})
    assert r.status_code == 200, r.text
    got = r.json()
    want = json.loads(json.dumps(engine.ask(Q).to_json(), default=str))
    assert set(got) == set(want)
    assert set(got["timings_ms"]) == set(want["timings_ms"])
    for k in want:
        if k != "timings_ms":
            assert _close(got[k], want[k]), k
    assert [t["table"] for t in got["tables"]] == [t["table"] for t in want["tables"]]
    assert got["tables"], "the example lake answers this question"
    assert r.headers["X-Raylake-Replica"]


def test_ask_options_budget_and_fused_preview(served, engine):
    r = ask(served["url"], {"question": Q, "budget": 2, "beam": 2, "fuse": True, "preview": 3})
    assert r.status_code == 200, r.text
    got = r.json()
    want = engine.ask(Q, budget=2, beam=2, fuse=True, preview=3).to_json()
    assert len(got["tables"]) <= 2
    assert [t["table"] for t in got["tables"]] == [t["table"] for t in want["tables"]]
    assert got["fused"] is not None and len(got["fused"]["preview"]) <= 3
    assert got["fused"]["preview"] == json.loads(json.dumps(want["fused"]["preview"], default=str))


def test_ask_parquet_download(served):
    import io

    import pyarrow.parquet as pq

    r = ask(served["url"], {"question": Q, "format": "parquet"})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/vnd.apache.parquet"
    table = pq.read_table(io.BytesIO(r.content))
    assert table.num_rows > 0 and "_provenance" in table.column_names
    assert r.headers["X-Raylake-Tables"].split(",")[0] in {p for p in table.column("_provenance").to_pylist()[0].split(" ⋈ ")}


def test_intent_and_table_profile(served, engine):
    url = served["url"]
    r = requests.post(url + "/intent", json={"question": Q}, headers=H, timeout=60)
    assert r.status_code == 200, r.text
    g, src = engine.intent(Q)
    assert r.json()["intent"] == json.loads(json.dumps(g.to_json(evidence=True), default=str))
    assert r.json()["intent_source"] == src
    path = engine.index.paths[0]
    r = requests.get(f"{url}/tables/{path}", headers=H, timeout=30)
    assert r.status_code == 200, r.text
    assert r.json() == json.loads(json.dumps(engine.index.table_profile(path), default=str))
    r = requests.get(f"{url}/tables/no/such/table.csv", headers=H, timeout=30)
    assert r.status_code == 404 and "no table 'no/such/table.csv'" in r.json()["error"]["message"]


@pytest.mark.parametrize(
    "body,status,reason",
    [
        (b"{not json", 400, "not valid JSON"),
        (b"", 400, "empty request body"),
        (b"[1, 2]", 400, "must be a JSON object"),
        (json.dumps({"question": Q, "limit": 3}), 422, "unknown field 'limit'"),
        (json.dumps({"budget": 3}), 422, "missing field 'question'"),
        (json.dumps({"question": "x" * 301}), 422, "the limit is 300"),
        (json.dumps({"question": "   "}), 422, "blank"),
        (json.dumps({"question": Q, "budget": 0}), 422, "budget"),
        (json.dumps({"question": Q, "budget": 500}), 422, "at most 50 tables"),
        (json.dumps({"question": Q, "format": "xml"}), 422, "format"),
        # strict types: what a buggy client sends is refused, not coerced
        (json.dumps({"question": Q, "budget": "7"}), 422, "'budget': Input should be a valid integer"),
        (json.dumps({"question": Q, "budget": True}), 422, "'budget': Input should be a valid integer"),
        (json.dumps({"question": Q, "beam": 2.0}), 422, "'beam': Input should be a valid integer"),
        (json.dumps({"question": Q, "fuse": 1}), 422, "'fuse': Input should be a valid boolean"),
        (json.dumps({"question": ["x"]}), 422, "'question': Input should be a valid string"),
        (json.dumps({"question": Q, "pad": "y" * 5000}), 413, "the limit is 4,096"),
    ],
)
def test_bad_requests_get_4xx_with_reason(served, body, status, reason):
    r = ask(served["url"], body)
    assert r.status_code == status, r.text
    assert reason in r.json()["error"]["message"]


def test_replica_survives_bad_input(served):
    for body in (b"\xff\xfe", b"null", b'{"question": 5}', b'{"question": "' + b"\\ud800" + b'"}'):
        assert 400 <= ask(served["url"], body).status_code < 500
    assert ask(served["url"], {"question": Q}).status_code == 200
    assert requests.get(served["url"] + "/health", timeout=10).json()["status"] == "ok"


def test_bearer_token(served):
    url = served["url"]
    assert ask(url, {"question": Q}, headers={}).status_code == 401
    r = ask(url, {"question": Q}, headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and "bearer token" in r.json()["error"]["message"]
    assert requests.get(url + "/metrics", timeout=10).status_code == 401
    assert requests.get(url + "/tables/x.csv", timeout=10).status_code == 401
    # /health answers load balancers without a token, but tells them no more than ok/no_index
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        h = requests.get(url + "/health", headers=headers, timeout=10)
        assert h.status_code == 200 and h.json() == {"status": "ok"}
    h = requests.get(url + "/health", headers=H, timeout=10).json()
    assert h["status"] == "ok" and h["index_dir"] == os.path.abspath(served["index_dir"]) and h["pid"] > 0
    spec = requests.get(url + "/openapi.json", timeout=10).json()
    assert {"/ask", "/intent", "/tables/{path}", "/health", "/metrics"} <= set(spec["paths"])
    assert "question" in spec["paths"]["/ask"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]


def test_concurrent_requests_are_batched_and_counted(served):
    url = served["url"]
    questions = [Q, "players of each club", "instructors of universities", "orders and their services", Q, "points of players"]
    results = [None] * len(questions)

    def go(i):
        results[i] = ask(url, {"question": questions[i]})

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(questions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in results] == [200] * len(questions)
    assert results[0].json()["tables"] == results[4].json()["tables"]

    def scrape():
        text = requests.get(url + "/metrics", headers=H, timeout=10).text
        vals = {ln.split(" ")[0]: float(ln.split(" ")[1]) for ln in text.splitlines() if ln and not ln.startswith("#")}
        return vals if vals.get('raylake_serve_requests_total{endpoint="ask",status="200"}', 0) >= len(questions) else None

    m = _wait(scrape, timeout=20)
    assert m, "metrics never counted the answered requests"
    # 6 requests inside one 0.2 s batch window: some batch held more than one
    assert m["raylake_serve_batch_size_sum"] > m["raylake_serve_batch_size_count"]
    assert m['raylake_serve_errors_total{endpoint="ask",status="422"}'] >= 1
    for stage in ("queue", "intent", "anchors", "search", "engine", "request"):
        assert m[f'raylake_serve_stage_seconds_count{{stage="{stage}"}}'] >= 1, stage
    assert "raylake_serve_queue_depth" in m and m["raylake_serve_replicas"] >= 1


def test_reload_without_downtime(served):
    from raylake.index.store import CURRENT, current_build

    url, index_dir = served["url"], served["index_dir"]
    old = os.path.basename(current_build(index_dir))
    new = f"build-29990101T000000-{uuid.uuid4().hex[:8]}"
    statuses: list[int] = []
    stop = threading.Event()

    def load():
        while not stop.is_set():
            statuses.append(ask(url, {"question": Q}).status_code)

    t = threading.Thread(target=load)
    t.start()
    try:
        time.sleep(0.5)
        # A new build appears and CURRENT is replaced atomically, as `raylake index` does.
        shutil.copytree(os.path.join(index_dir, old), os.path.join(index_dir, new))
        tmp = os.path.join(index_dir, f".{CURRENT}.test")
        with open(tmp, "w") as fh:
            fh.write(new + "\n")
        os.replace(tmp, os.path.join(index_dir, CURRENT))
        health = _wait(lambda: (h := requests.get(url + "/health", headers=H, timeout=10).json())["build"] == new and h, timeout=60)
        assert health, "the replica never switched to the new build"
        assert health["reloads"] >= 1
        n_before = len(statuses)
        _wait(lambda: len(statuses) >= n_before + 2, timeout=30)
    finally:
        stop.set()
        t.join()
    assert len(statuses) >= 3 and set(statuses) == {200}, statuses


def test_missing_index_then_index_appears(served):
    url = served["url"] + "/empty"
    r = requests.post(url + "/ask", json={"question": Q}, timeout=30)
    assert r.status_code == 404 and "no index in" in r.json()["error"]["message"]
    assert requests.get(url + "/tables/x.csv", timeout=30).status_code == 404
    r = requests.get(url + "/examples", timeout=30)  # the web page's examples too
    assert r.status_code == 404 and "no index" in r.json()["error"]["message"]
    h = requests.get(url + "/health", timeout=30)
    assert h.status_code == 503 and h.json()["status"] == "no_index"
    # the index shows up (copied in, pointer last): the replica loads it without a restart
    src, dst = served["source_index"], served["empty_dir"]
    from raylake.index.store import CURRENT, current_build

    name = os.path.basename(current_build(src))
    shutil.copytree(os.path.join(src, name), os.path.join(dst, name))
    shutil.copy(os.path.join(src, CURRENT), os.path.join(dst, CURRENT))
    assert _wait(lambda: requests.get(url + "/health", timeout=10).status_code == 200, timeout=60)
    r = requests.post(url + "/ask", json={"question": Q}, timeout=60)
    assert r.status_code == 200 and r.json()["tables"]


def test_run_batch_drops_expired_and_shares_intents(served):
    """The batch body without Serve: expired requests get 503, duplicates reuse one intent."""
    from raylake.serve.batch import Item, load_engine, run_batch
    from raylake.serve.schema import AskRequest

    eng = load_engine(served["index_dir"], warm=False)
    calls = []
    extract = eng.offline.extract

    def counting(q):  # a spy on the real extractor
        calls.append(q)
        return extract(q)

    eng.offline.extract = counting
    now = time.monotonic()
    items = [Item(AskRequest(question=Q), now + 60), Item(AskRequest(question=Q), now + 60), Item(AskRequest(question="clubs"), now - 1)]
    out = run_batch(eng, items)
    assert [o.status for o in out] == [200, 200, 503]
    assert calls == [Q]  # one extraction for the two identical questions; none for the expired one
    assert out[0].body["tables"] == out[1].body["tables"] == eng.ask(Q).to_json()["tables"]
    assert {"queue", "intent", "search", "engine"} <= set(out[0].stages_ms)


def test_cli_refuses_missing_index(tmp_path, capsys):
    from raylake.cli import main

    assert main(["serve", "--index-dir", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("raylake: error: no index in")
