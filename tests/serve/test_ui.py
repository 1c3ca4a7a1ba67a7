"""The web page of ``raylake serve`` without a browser: what ``/`` serves, that every asset it
names is served and nothing comes from another host, and ``/examples`` behind the token."""
from __future__ import annotations

import os
import re

import requests

TOKEN = "test-token-123"
H = {"Authorization": f"Bearer {TOKEN}"}
UI_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "raylake", "serve", "ui")


def _assets(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(ui/[^"]+)"', html)


def test_page_is_html_without_token_and_knows_the_token_is_needed(served):
    r = requests.get(served["url"] + "/", timeout=30)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in r.headers["content-security-policy"]
    assert '<textarea id="question"' in r.text and 'data-token="required"' in r.text
    r = requests.get(served["url"] + "/empty/", timeout=30)  # a service without a token says so
    assert r.status_code == 200 and 'data-token="none"' in r.text


def test_every_asset_the_page_names_is_served(served):
    html = requests.get(served["url"] + "/", timeout=30).text
    assets = _assets(html)
    assert {"ui/app.js", "ui/app.css"} <= set(assets)
    for a in assets:
        r = requests.get(f"{served['url']}/{a}", timeout=30)
        assert r.status_code == 200, a
        want = "text/javascript" if a.endswith(".js") else "text/css"
        assert r.headers["content-type"].startswith(want), a
        assert r.content == open(os.path.join(UI_DIR, os.path.basename(a)), "rb").read()


def test_unknown_or_escaping_asset_is_404(served):
    for name in ("nope.js", "..%2Fapp.py", "__init__.py", ".hidden.css"):
        r = requests.get(f"{served['url']}/ui/{name}", timeout=30)
        assert r.status_code == 404, name  # ours, or the router's for a path that is not /ui/<file>


def test_no_asset_loads_from_another_host():
    for name in os.listdir(UI_DIR):
        if name.endswith((".html", ".js", ".css")):
            text = open(os.path.join(UI_DIR, name), encoding="utf-8").read()
            # The SVG namespace is a name, not a URL the browser fetches.
            urls = [u for u in re.findall(r"https?://[^\s\"'`)]+", text) if u != "http://www.w3.org/2000/svg"]
            assert not urls, (name, urls)


def test_examples_need_the_token_and_come_from_the_lake(served):
    r = requests.get(served["url"] + "/examples", timeout=30)
    assert r.status_code == 401 and r.headers["WWW-Authenticate"] == "Bearer"
    r = requests.get(served["url"] + "/examples", headers={"Authorization": "Bearer wrong"}, timeout=30)
    assert r.status_code == 401
    r = requests.get(served["url"] + "/examples", headers=H, timeout=30)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["tables"] == 27 and body["max_budget"] >= 1
    assert 1 <= len(body["examples"]) <= 4
    assert all(q.endswith("?") for q in body["examples"])
    # drawn from the lake: each names a table of the example lake
    assert any("universities" in q or "departments" in q for q in body["examples"]), body["examples"]


def test_examples_answer_and_ask_answers_sql(served):
    """An example question is answerable, and ``answer: true`` adds the answer's SQL and rows (what the page shows)."""
    q = requests.get(served["url"] + "/examples", headers=H, timeout=30).json()["examples"][0]
    r = requests.post(served["url"] + "/ask", json={"question": q, "fuse": True, "preview": 5, "answer": True}, headers=H, timeout=60)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["tables"] and got["fused"]["preview"]
    assert "sql" in got and "answer_reason" in got


def test_ask_csv_is_the_fused_table_the_page_downloads(served):
    import io

    import pyarrow.csv as pacsv

    q = "which clubs have the most players?"
    want = requests.post(served["url"] + "/ask", json={"question": q, "fuse": True}, headers=H, timeout=60).json()
    r = requests.post(served["url"] + "/ask", json={"question": q, "format": "csv"}, headers=H, timeout=60)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/csv")
    assert r.headers["content-disposition"] == 'attachment; filename="fused.csv"'
    table = pacsv.read_csv(io.BytesIO(r.content))
    assert table.num_rows == want["fused"]["rows"] == int(r.headers["X-Raylake-Rows"])
    assert table.column_names == want["fused"]["columns"]
    assert r.headers["X-Raylake-Tables"].split(",") == [t["table"] for t in want["tables"]]
    # the token guards the download as it guards the answer
    assert requests.post(served["url"] + "/ask", json={"question": q, "format": "csv"}, timeout=60).status_code == 401


def test_table_search_by_name_or_column(served):
    url = served["url"] + "/tables"
    assert requests.get(url, params={"q": "club"}, timeout=30).status_code == 401
    got = requests.get(url, params={"q": "club"}, headers=H, timeout=30).json()
    names = [t["table"] for t in got["tables"]]
    assert names[0] == "sports/club.csv" and got["tables"][0]["name_match"]  # a name match ranks first
    assert "sports/player.csv" in names  # through its Club_ID column
    player = next(t for t in got["tables"] if t["table"] == "sports/player.csv")
    assert player["matched_columns"] == ["Club_ID"] and not player["name_match"] and player["join"] > 0
    assert got["total"] == len(names)
    # spelling-free: "club name" finds Club_Name
    assert "sports/club.csv" in [t["table"] for t in requests.get(url, params={"q": "club name"}, headers=H, timeout=30).json()["tables"]]
    every = requests.get(url, params={"limit": 5}, headers=H, timeout=30).json()
    assert every["total"] == 27 and len(every["tables"]) == 5
    assert requests.get(url, params={"q": "no-such-thing-xyz"}, headers=H, timeout=30).json() == {
        "query": "no-such-thing-xyz", "total": 0, "tables": []}
    for params, word in (({"limit": "0"}, "limit"), ({"limit": "x"}, "limit"), ({"limit": "100000"}, "limit"),
                         ({"q": "x" * 301}, "'q'"), ({"where": "1"}, "unknown parameter")):
        r = requests.get(url, params=params, headers=H, timeout=30)
        assert r.status_code == 422 and word in r.json()["error"]["message"], (params, r.text)


def test_answer_lists_the_rejected_tables(served):
    got = requests.post(served["url"] + "/ask", json={"question": "which clubs have the most players?"}, headers=H, timeout=60).json()
    plan = {t["table"] for t in got["tables"]}
    assert got["rejected"] and not {r["table"] for r in got["rejected"]} & plan
