"""Where the learned completion loses tables: a diagnosis over a CV run's predictions.

``python -m bench.retrieval.misses --results R.json --questions Q.jsonl --index-dir IDX --models-dir M [--fold 0] [--limit 50]``

Reads the predictions of :mod:`bench.retrieval.cv` (``R.json``), counts over all folds the
questions where ``dense_ft``'s top L holds every needed table and ``raylake``'s answer does not
(and where dense_ft ranks the tables raylake left out), then re-runs those of one fold with that fold's saved model (``M/raylake-fold<k>``, written by ``--models-dir``):
for every needed table raylake left out it counts whether the table was a candidate, the
classifier's probability for it, and whether the classifier chose it (then the join step of
``BeamSearch.connect`` dropped it, as no join path from the beam's plan reaches it).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval.misses", description=__doc__.splitlines()[0])
    p.add_argument("--results", required=True)
    p.add_argument("--questions", required=True)
    p.add_argument("--index-dir", required=True)
    p.add_argument("--models-dir", required=True)
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--budget", type=int, default=10)
    p.add_argument("--limit", type=int, default=50)
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from bench.retrieval.harness import load_questions
    from raylake.relevance.model import RelevanceModel
    from raylake.search import Engine

    with open(args.results, encoding="utf-8") as fh:
        r = json.load(fh)
    b = str(args.budget)
    rl, ft, fold = r["predictions"]["raylake"][b], r["predictions"]["dense_ft"][b], r["meta"]["folds"]
    questions = load_questions(args.questions)
    lost = [q for q in questions
            if set(q["gold_tables"]) <= set(ft[q["id"]]) and not set(q["gold_tables"]) <= set(rl[q["id"]])]
    every = {"mean tables answered / needed": [round(sum(len(rl[q["id"]]) for q in questions) / len(questions), 2),
                                               round(sum(len(q["gold_tables"]) for q in questions) / len(questions), 2)],
             "all folds: questions": len(lost),
             "all folds: missing tables": sum(len(set(q["gold_tables"]) - set(rl[q["id"]])) for q in lost),
             "all folds: missing tables in dense_ft's top 3": sum(ft[q["id"]].index(t) < 3 for q in lost
                                                                  for t in set(q["gold_tables"]) - set(rl[q["id"]]))}
    qs = [q for q in lost if fold[q["id"]] == args.fold][: args.limit]
    eng = Engine(args.index_dir, relevance=None)
    idx = eng.index
    eng.relevance = RelevanceModel.load(os.path.join(args.models_dir, f"raylake-fold{args.fold}")).for_lake(idx, eng.graph, cache=False)
    c = collections.Counter()
    for q in qs:
        prep = eng.prepare(q["question"], context=True)
        intent, plan = prep.support.intent_tables(), prep.beam_plan.tables
        ranking = eng.relevance.rank(prep.question, intent, plan)
        p_of = {idx.paths[int(t)]: float(x) for t, x in zip(ranking.cand, ranking.p)}
        chosen = {idx.paths[t] for t, _ in eng.relevance.pick(ranking, args.budget)}
        for t in set(q["gold_tables"]) - set(rl[q["id"]]):
            c["missing tables"] += 1
            if t not in p_of:
                c["not a candidate"] += 1
                continue
            c["p < 0.2" if p_of[t] < 0.2 else "p 0.2-0.5" if p_of[t] < 0.5 else "p >= 0.5"] += 1
            if t in chosen:
                c["chosen, then no join path from the plan"] += 1
    print(json.dumps({**every, "fold": args.fold, "questions": len(qs), **c}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
