"""Many-question integration on EcoTable's Ad lake (issue 31): table F1, join-path F1, validations.

``python -m bench.integrate_ecotable --index-dir /work/wt/integrate_idx [--limit N] [--timeout S]``
indexes nothing (build the index once: ``python -m raylake index ../shared/data/ecotable_ad/lake
--index-dir DIR``), runs :func:`raylake.integrate.integrate` over the requests of
``../shared/data/ecotable_ad/questions.jsonl`` as one batch, and scores each request against
its ``gold_tables`` and ``gold_edges``:

- **table P/R/F1**: the tables of the validated tree (terminals and bridges) against
  ``gold_tables``; also the refined terminals alone and the recall of the coarse top-k;
- **join-path F1** (EcoTable Sec. 6): the tree's edges against ``gold_edges``, an edge being an
  unordered pair of files (the join condition is not compared);
- **validations**: judge calls with the global cache (Algorithm 1 over the batch) against
  the sum of each request run alone.

Scores are means over requests (a request with no predicted edge and gold edges scores 0
edge F1), overall and per ``source`` (ad platform). Writes ``bench/results/integrate_ecotable.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.abspath(os.path.join(HERE, "..", "..", "shared", "data", "ecotable_ad"))  # the repository root's ../shared


def prf(pred: set, gold: set) -> tuple[float, float, float]:
    hit = len(pred & gold)
    p = hit / len(pred) if pred else 0.0
    r = hit / len(gold) if gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def score(rows: list[dict], gold: dict) -> dict:
    out = {"n": len(rows)}
    keys = {"table": lambda r: set(r["tables"]), "terminal": lambda r: set(r["terminals"])}
    for name, pred in keys.items():
        s = [prf(pred(r), set(gold[r["id"]]["gold_tables"])) for r in rows]
        out[f"{name}_precision"], out[f"{name}_recall"], out[f"{name}_f1"] = (round(sum(x[i] for x in s) / len(s), 4) for i in range(3))
    out["coarse_recall"] = round(sum(prf({c["table"] for c in r["coarse"]}, set(gold[r["id"]]["gold_tables"]))[1]
                                     for r in rows) / len(rows), 4)
    s = [prf({frozenset((e["a"], e["b"])) for e in r["edges"]},
             {frozenset((a, b)) for a, b, *_ in gold[r["id"]]["gold_edges"]}) for r in rows]
    out["edge_precision"], out["edge_recall"], out["edge_f1"] = (round(sum(x[i] for x in s) / len(s), 4) for i in range(3))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.integrate_ecotable", description=__doc__.split("\n\n")[0])
    p.add_argument("--index-dir", required=True, help="an index of ../shared/data/ecotable_ad/lake")
    p.add_argument("--questions", default=os.path.join(DATA, "questions.jsonl"), help="default ../shared/data/ecotable_ad/questions.jsonl from the repository root")
    p.add_argument("--limit", type=int, default=None, help="the first N requests only")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds of intent extraction per request (then ranked without it)")
    p.add_argument("--out", default=os.path.join(HERE, "results", "integrate_ecotable.json"))
    args = p.parse_args(argv)

    from raylake.config import RaylakeContext
    from raylake.integrate import integrate

    gold = {}
    with open(args.questions, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                q = json.loads(line)
                gold[q["id"]] = q
    items = list(gold.values())[: args.limit]
    ctx = RaylakeContext.get_current()
    ctx = ctx.replace(integrate=type(ctx.integrate)(**{**ctx.integrate.__dict__, "question_timeout_s": args.timeout}))
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        report = integrate([(q["id"], q["question"]) for q in items], args.index_dir, out, ctx=ctx,
                           progress=lambda m: print(m, file=sys.stderr, flush=True))
    rows = report.pop("results")
    by_source: dict[str, list[dict]] = {}
    for r in rows:
        by_source.setdefault(gold[r["id"]]["source"], []).append(r)
    result = {
        "command": "python -m bench.integrate_ecotable " + " ".join(argv if argv is not None else sys.argv[1:]),
        "requests": len(rows),
        "timed_out": report["timed_out"],
        "overall": score(rows, gold),
        "per_source": {s: score(rs, gold) for s, rs in sorted(by_source.items())},
        "validations": report["validations"],
        "validations_naive": report["validations_naive"],
        "iterations": report["iterations"],
        "edges_valid": report["edges_valid"],
        "edges_invalid": report["edges_invalid"],
        "graph_edges": report["graph_edges"],
        "seconds": round(time.perf_counter() - t, 1),
        "timings_s": report["timings_s"],
        "config": ctx.integrate.__dict__,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps({k: result[k] for k in ("requests", "timed_out", "overall", "validations", "validations_naive", "seconds")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
