"""``Engine.ask`` latency and retrieval quality on long analyst requests (issue 35, "Long questions blow up").

    python -m bench.ecotable_latency --index-dir IDX --questions Q.jsonl [--limit N] [--timeout S] [--out F.json]

Over the EcoTable Ad lake's requests (``../shared/data/ecotable_ad/questions.jsonl``: 126
briefs of 29–59 words, 3–6 gold tables each), one :class:`~raylake.search.Engine` answers each
request at budget L (10) as ``raylake ask`` does (offline extractor, packaged relevance model),
after one untimed warm-up. A request that runs past ``--timeout`` seconds is stopped
(``SIGALRM``) and recorded as timed out: its latency is the timeout (a lower bound) and it has no
tables. Per request it records the wall time and the process CPU time (on a shared machine the
CPU time is the steadier of the two), the engine's own stage timings, and the offline
extractor's joint choice (:meth:`~raylake.intent.offline.joint.JointChooser.choose`): its time
summed over the calls of the request and the objective evaluations it made.

Quality against ``gold_tables`` and ``gold_edges``: macro Recall / Precision / F1 / Sufficiency
of the returned tables (:mod:`bench.retrieval.metrics`, GRAFT Sec. 5.2) and join-path edge F1
(the plan's join steps as unordered table pairs against the gold edges' pairs; EcoTable's
join-path score, without the join condition). Writes one JSON (summary, then per request) to
``--out``; prints the summary.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict

import numpy as np

from bench import missing_path

WARMUP = "daily report of campaign spend and clicks by account"


def edge_f1(gold_edges, steps) -> float:
    """F1 of the plan's join steps (unordered table pairs) against the gold edges' table pairs,
    as :mod:`bench.integrate_ecotable` scores trees; 1 when both are empty."""
    from bench.integrate_ecotable import prf

    gold = {frozenset(e[:2]) for e in gold_edges if e[0] != e[1]}
    pred = {frozenset((s["anchor"], s["new"])) for s in steps if s.get("op") == "join" and s.get("anchor")}
    return 1.0 if not gold and not pred else prf(pred, gold)[2]


def percentiles(xs) -> dict[str, float]:
    a = np.asarray(xs, dtype=np.float64)
    if not len(a):
        return {}
    return {"p50": float(np.percentile(a, 50)), "p95": float(np.percentile(a, 95)), "max": float(a.max()),
            "mean": float(a.mean())}


def run(index_dir: str, questions: list[dict], budget: int, timeout_s: float) -> dict:
    from bench.retrieval.metrics import score
    from raylake.integrate.identify import QuestionTimeout, time_limit
    from raylake.search import Engine

    engine = Engine(index_dir)
    chooser = engine.offline.chooser
    spent = {"ms": 0.0, "calls": 0}
    choose = chooser.choose

    def timed_choose(*a, **kw):
        t = time.perf_counter()
        try:
            return choose(*a, **kw)
        finally:
            spent["ms"] += (time.perf_counter() - t) * 1e3
            spent["calls"] += 1

    chooser.choose = timed_choose  # an instance attribute: the engine's extractor calls it through self.chooser
    engine.ask(WARMUP, budget=budget)
    rows = []
    for q in questions:
        spent.update(ms=0.0, calls=0)
        evals0 = chooser.evaluations
        engine.index.embedder.clear_cache()
        t, c = time.perf_counter(), time.process_time()
        try:
            with time_limit(timeout_s):
                ans, timed_out = engine.ask(q["question"], budget=budget), False
        except QuestionTimeout:
            ans, timed_out = None, True
        wall, cpu = (time.perf_counter() - t) * 1e3, (time.process_time() - c) * 1e3
        paths, steps = (list(ans.paths), ans.steps) if ans is not None else ([], [])
        row = {"id": q["id"], "words": len(q["question"].split()), "timed_out": timed_out,
               "wall_ms": round(timeout_s * 1e3 if timed_out else wall, 1), "cpu_ms": round(cpu, 1),
               "joint_ms": round(spent["ms"], 1), "joint_calls": spent["calls"],
               "joint_evaluations": chooser.evaluations - evals0,
               "stages_ms": {k: round(v, 1) for k, v in ans.timings_ms.items()} if ans is not None else {},
               "tables": paths, **score(q["gold_tables"], paths), "edge_f1": edge_f1(q.get("gold_edges", []), steps)}
        rows.append(row)
        print(f"{q['id']:<40} {row['wall_ms']:>9.0f} ms wall {row['cpu_ms']:>8.0f} ms cpu  joint {row['joint_ms']:>8.0f} ms"
              f"  F1 {row['f1']:.2f}{'  TIMEOUT' if timed_out else ''}", file=sys.stderr, flush=True)
    done = [r for r in rows if not r["timed_out"]]
    summary = {
        "n": len(rows), "timed_out": len(rows) - len(done), "budget": budget, "timeout_s": timeout_s,
        "wall_ms": percentiles([r["wall_ms"] for r in rows]),
        "cpu_ms": percentiles([r["cpu_ms"] for r in rows]),
        "joint_ms": percentiles([r["joint_ms"] for r in rows]),
        "intent_ms": percentiles([r["stages_ms"].get("intent", 0.0) for r in done]),
    }
    for k in ("recall", "precision", "f1", "sufficiency", "edge_f1"):
        summary[k] = float(np.mean([r[k] for r in rows])) if rows else 0.0
        summary[k + "_completed"] = float(np.mean([r[k] for r in done])) if done else 0.0
    return {"summary": summary, "settings": {"intent": asdict(engine.offline.settings)}, "requests": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ecotable_latency", description=__doc__.splitlines()[0])
    ap.add_argument("--index-dir", required=True, help="a finished raylake index of the questions' lake")
    ap.add_argument("--questions", required=True, help="questions JSONL (id, question, gold_tables[, gold_edges])")
    ap.add_argument("--limit", type=int, default=None, help="the first N requests only")
    ap.add_argument("--budget", type=int, default=10, help="tables per answer, L (default 10)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds after which a request is stopped (default 30)")
    ap.add_argument("--out", default=None, help="JSON to write (e.g. bench/results/latency_ecotable_ad.json)")
    args = ap.parse_args(argv)
    if missing_path("ecotable_latency", __index_dir=args.index_dir, __questions=args.questions):
        return 2
    with open(args.questions, encoding="utf-8") as fh:
        questions = [json.loads(line) for line in fh if line.strip()]
    questions = questions[: args.limit] if args.limit else questions
    result = run(args.index_dir, questions, args.budget, args.timeout)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    print(json.dumps(result["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
