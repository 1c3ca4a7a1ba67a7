"""Combine results files of separate runs (e.g. the cheap baselines over every question,
raylake and exact on a seeded subset later) into one, and redraw the table and plot.

``python -m bench.retrieval.merge --out OUT.json IN1.json IN2.json ...`` — a method present
in several inputs is taken from the last one.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from bench.retrieval.__main__ import RESULTS


def merge(parts: list[dict]) -> dict:
    out = {"methods": {}, "predictions": {}, "latencies_ms": {}, "meta": {}}
    runs = []
    for part in parts:
        meta = part.get("meta", {})
        for m in part["methods"]:
            out["methods"][m] = part["methods"][m]
            out["predictions"][m] = part["predictions"][m]
            if m in part.get("latencies_ms", {}):
                out["latencies_ms"][m] = part["latencies_ms"][m]
            info = dict(meta.get("method", {}).get(m, {}))
            info.update({"git_commit": meta.get("git_commit"), "started": meta.get("started"), "loadavg": meta.get("host", {}).get("loadavg_start")})
            out["meta"].setdefault("method", {})[m] = info
        runs.append({k: meta.get(k) for k in ("started", "wall_s", "git_commit", "n_questions", "questions_file")} | {"methods": list(part["methods"])})
    first = parts[0].get("meta", {})
    for k in ("index_dir", "lake_root", "n_tables", "questions_file", "budgets", "seed", "host"):
        if k in first:
            out["meta"][k] = first[k]
    out["meta"]["n_questions"] = max(p.get("meta", {}).get("n_questions", 0) for p in parts)
    out["meta"]["wall_s"] = round(sum(r["wall_s"] or 0 for r in runs), 2)
    out["meta"]["git_commit"] = "; ".join(sorted({str(r["git_commit"]) for r in runs}))
    out["meta"]["started"] = min(str(r["started"]) for r in runs)
    out["meta"]["runs"] = runs
    return out


def main(argv=None) -> int:
    from bench.retrieval import report

    p = argparse.ArgumentParser(prog="python -m bench.retrieval.merge")
    p.add_argument("inputs", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("--report-dir", default=RESULTS)
    args = p.parse_args(argv)
    parts = []
    for path in args.inputs:
        try:
            with open(path, encoding="utf-8") as fh:
                parts.append(json.load(fh))
        except (OSError, ValueError) as exc:
            print(f"error: cannot read results {path!r}: {exc}", file=sys.stderr)
            return 2
    res = merge(parts)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(res, fh, separators=(",", ":"))  # compact: the predictions of 1,701 questions are large
    md, png = report.write(res, args.report_dir, os.path.splitext(os.path.basename(args.out))[0])
    print(report.markdown(res))
    print(f"wrote {args.out}, {md}, {png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
