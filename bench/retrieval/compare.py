"""Every method of several results files, scored on the questions all of them answered.

``python -m bench.retrieval.compare --questions Q.jsonl NAME=R.json [NAME=R.json ...] [--methods M ...]``

A CV run stopped after some folds (or a rerun of a few folds with a changed model) is
compared with a complete earlier run on exactly the questions both scored — never a partial
run's questions against another run's full set. Methods are printed as ``NAME:method``.
"""
from __future__ import annotations

import argparse
import json
import sys

from bench.retrieval.cv import common


def combine(runs: dict[str, dict], methods: list[str] | None = None) -> dict:
    """One results dict whose methods are ``NAME:method`` of every run (only ``methods``, when given)."""
    out = {"predictions": {}, "latencies_ms": {}}
    for name, result in runs.items():
        for m, preds in result["predictions"].items():
            if methods and m not in methods:
                continue
            out["predictions"][f"{name}:{m}"] = preds
            out["latencies_ms"][f"{name}:{m}"] = result["latencies_ms"][m]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval.compare", description=__doc__.splitlines()[0])
    p.add_argument("--questions", required=True, help="the questions file (gold tables)")
    p.add_argument("runs", nargs="+", metavar="NAME=R.json")
    p.add_argument("--methods", nargs="*", default=None, help="only these methods of each run")
    args = p.parse_args(argv)
    runs = {}
    for spec in args.runs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            print(f"error: {spec!r} is not NAME=R.json", file=sys.stderr)
            return 2
        try:
            with open(path, encoding="utf-8") as fh:
                runs[name] = json.load(fh)
        except (OSError, ValueError) as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            return 2
    combined = combine(runs, args.methods)
    if not combined["predictions"]:
        print("error: no method of these runs is left to compare (check --methods)", file=sys.stderr)
        return 2
    for b, ms in common(combined, args.questions).items():
        for m, x in ms.items():
            print(f"L={b:>2} {m:<24} n {x['n']:>4}  F1 {x['f1']:.3f}  Sufficiency {x['sufficiency']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
