"""Answer benchmark: the offline answer query (:mod:`raylake.fuse.answer`) against gold answers.

    python -m bench.answers --index-dir IDX --questions Q.jsonl --answers A.jsonl --limit 150 --out R.json

For a seeded sample of questions it scores two settings:

- ``gold_tables``: the plan over the question's gold tables (``Engine.plan_over``, the lake
  graph's joins), so the SQL layer alone is measured;
- ``raylake``: raylake's own plan (``Engine.ask``).

With ``--llm`` (an endpoint configured, ``RAYLAKE_LLM_BASE_URL``), the NL2SQL agent
(:mod:`raylake.fuse.nl2sql`) answers the same two plans too: ``llm_gold_tables`` and
``llm_raylake``. The intent stays offline in every setting, so the plans are the same and only
the SQL writer differs; an answer the agent could not give falls back to the grammar, as in
``raylake ask``, and ``fallback`` is the share of those (``turns``: the agent's mean turns).

Answers compare as the Spider lake's README says: multisets of rows (lists when the gold
answer is ``ordered``), numbers by value, text trimmed and case-folded. Per question: record
precision / recall / F1 over the rows, and exact (1 when the row multisets are equal); an
answer the grammar declines (``answer: null``) scores 0 and is counted. Question types come
from the gold SQL (analysis only; the engine never reads it).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import time
from collections import Counter, defaultdict
from dataclasses import replace


def _cell(x):
    if x is None:
        return None
    try:
        return round(float(x), 4)
    except (TypeError, ValueError):
        return str(x).strip().lower()


def score(pred: list[list] | None, gold: list[list], ordered: bool) -> dict:
    """Record P/R/F1 and exact match of ``pred`` against ``gold`` (README comparison)."""
    if pred is None:
        return {"p": 0.0, "r": 0.0, "f1": 0.0, "exact": 0, "declined": 1}
    p_rows = [tuple(_cell(x) for x in r) for r in pred]
    g_rows = [tuple(_cell(x) for x in r) for r in gold]
    if not p_rows and not g_rows:
        return {"p": 1.0, "r": 1.0, "f1": 1.0, "exact": 1, "declined": 0}
    inter = sum((Counter(p_rows) & Counter(g_rows)).values())
    p = inter / len(p_rows) if p_rows else 0.0
    r = inter / len(g_rows) if g_rows else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    exact = int(p_rows == g_rows if ordered else Counter(p_rows) == Counter(g_rows))
    return {"p": p, "r": r, "f1": f1, "exact": exact, "declined": 0}


def question_type(sql: str) -> str:
    s = sql.upper()
    if re.search(r"\b(INTERSECT|EXCEPT|UNION)\b|\bNOT IN\b|\(\s*SELECT", s):
        return "nested/set"
    if "GROUP BY" in s:
        return "group"
    if re.search(r"\b(COUNT|AVG|SUM|MAX|MIN)\s*\(", s):
        return "aggregate"
    if "ORDER BY" in s:
        return "order"
    if "WHERE" in s:
        return "filter"
    return "project"


def _mean(rows: list[dict], key: str) -> float:
    return round(sum(r[key] for r in rows) / len(rows), 4) if rows else 0.0


def summarize(rows: list[dict]) -> dict:
    keys = ("p", "r", "f1", "exact", "declined") + (("fallback", "turns") if rows and "turns" in rows[0] else ())
    out = {"n": len(rows), **{k: _mean(rows, k) for k in keys}}
    by = defaultdict(list)
    for r in rows:
        by[r["type"]].append(r)
    out["by_type"] = {t: {"n": len(v), **{k: _mean(v, k) for k in keys if k not in ("p", "r")}} for t, v in sorted(by.items())}
    return out


def _answer(res, agent):
    """``res``'s answer query (``agent``: the NL2SQL agent's, on a copy, so the offline answer
    already kept on ``res`` is not overwritten)."""
    if not res.steps:
        return None
    if agent is not None:
        res = replace(res, agent=agent, _query=None)
    return res.query()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index-dir", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--answers", required=True)
    ap.add_argument("--limit", type=int, default=150, help="a seeded sample of this many questions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--relevance", default="default", help="as raylake ask --relevance")
    ap.add_argument("--llm", action="store_true", help="also score the NL2SQL agent (needs RAYLAKE_LLM_BASE_URL)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    from raylake.search.engine import Engine

    agent = None
    if args.llm:
        from raylake.fuse.nl2sql import NL2SQLAgent
        from raylake.llm import LLMClient
        from raylake.tools.base import Toolbox

        client = LLMClient()
        if not client.available:
            ap.error("--llm: no LLM endpoint configured; set RAYLAKE_LLM_BASE_URL (e.g. http://localhost:8000/v1)")

    questions = [json.loads(x) for x in open(args.questions, encoding="utf-8") if x.strip()]
    gold = {a["id"]: a for a in (json.loads(x) for x in open(args.answers, encoding="utf-8") if x.strip())}
    questions = [q for q in questions if q["id"] in gold and not gold[q["id"]].get("error")]
    if args.limit and args.limit < len(questions):
        questions = random.Random(args.seed).sample(questions, args.limit)
    eng = Engine(args.index_dir, relevance=args.relevance)
    if args.llm:
        agent = NL2SQLAgent(client, Toolbox(eng.index, eng.ctx), eng.ctx.nl2sql)
    per = {"gold_tables": [], "raylake": []} | ({"llm_gold_tables": [], "llm_raylake": []} if agent else {})
    t0 = time.time()
    for i, q in enumerate(questions, 1):
        g = gold[q["id"]]
        plans = {}
        for setting in per:
            plan = setting.removeprefix("llm_")
            try:
                if plan not in plans:
                    plans[plan] = (eng.plan_over(q["question"], q["gold_tables"], budget=len(q["gold_tables"]) + 4)
                                   if plan == "gold_tables" else eng.ask(q["question"]))
                res = plans[plan]
                qa = _answer(res, agent if setting.startswith("llm_") else None)
                rows, reason, sql = (qa.rows, qa.reason, qa.sql) if qa else (None, res.reason, None)
            except Exception as exc:  # one failing question is scored as declined, and its error kept
                rows, reason, sql, qa = None, f"{type(exc).__name__}: {exc}", None, None
            s = score(rows, g["rows"], bool(g.get("ordered")))
            row = {"id": q["id"], "type": question_type(q["gold_sql"]), **s, "reason": reason,
                   "sql": sql.split("\n)\n", 1)[-1] if sql and not (qa and qa.source == "llm") else sql}
            if setting.startswith("llm_"):
                row |= {"source": qa.source if qa else None, "fallback": int(not qa or qa.source != "llm"),
                        "turns": len(qa.turns) if qa else 0}
            per[setting].append(row)
        if i % 25 == 0:
            print(f"{i}/{len(questions)} questions, {time.time() - t0:.0f} s", flush=True)
    result = {"questions": args.questions, "n": len(questions), "seed": args.seed, "relevance": args.relevance,
              "llm": {"base_url": agent.client.base_url, "model": agent.client.model} if agent else None,
              "settings": {k: summarize(v) for k, v in per.items()}, "per_question": per}
    print(json.dumps(result["settings"], indent=1))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
