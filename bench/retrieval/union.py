"""Score the rules' plan followed by the learned completion's tables, from two runs' predictions.

``python -m bench.retrieval.union --learned CV.json --rules RULES.json --questions Q [--out U.json]``

``CV.json`` is a :mod:`bench.retrieval.cv` run (its ``raylake`` predictions: the engine's
learned choice alone, per fold); ``RULES.json`` a :mod:`bench.retrieval` run of the engine
without a relevance model. For every question and budget L the list is the rules' tables,
then the learned tables not yet in it, cut at L — what ``Engine.finish`` returns (the
learned choice adds to the rules' plan), except that the engine adds bridge tables to join
them and leaves out a learned table no join path reaches. Questions are those both runs scored; the metrics are
:mod:`bench.retrieval.metrics`'.
"""
from __future__ import annotations

import argparse
import json
import sys

from bench.retrieval.metrics import aggregate


def combine(learned: dict, rules: dict, budget: int) -> dict:
    return {q: list(dict.fromkeys(rules.get(q, []) + learned[q]))[:budget] for q in learned}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval.union", description=__doc__.splitlines()[0])
    p.add_argument("--learned", required=True)
    p.add_argument("--rules", required=True)
    p.add_argument("--questions", required=True)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    learned = json.load(open(args.learned))["predictions"]["raylake"]
    rules = json.load(open(args.rules))["predictions"]["raylake"]
    gold = {}
    with open(args.questions, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                o = json.loads(line)
                gold[str(o["id"])] = o["gold_tables"]
    out = {}
    for b in sorted(set(learned) & set(rules), key=int):
        ids = [q for q in learned[b] if q in rules[b]]
        rows = {"learned": {q: learned[b][q] for q in ids}, "rules": {q: rules[b][q] for q in ids}}
        rows["rules+learned"] = combine(rows["learned"], rows["rules"], int(b))
        out[b] = {name: aggregate([gold[q] for q in ids], [r[q] for q in ids], [0.0] * len(ids)) for name, r in rows.items()}
        for name, m in out[b].items():
            print(f"L={b:>2} {name:<14} n {m['n']:>4}  F1 {m['f1']:.3f}  Sufficiency {m['sufficiency']:.3f}  "
                  f"recall {m['recall']:.3f}  precision {m['precision']:.3f}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"learned": args.learned, "rules": args.rules, "L": out}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
