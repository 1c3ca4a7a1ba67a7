"""A deterministic snapshot of the offline extractor's output, to prove a refactor changes nothing.

    python -m bench.intent_snapshot --index-dir IDX --questions Q.jsonl [--limit N] [--ground] --out F

Writes one JSON line per question (the first ``N`` of ``Q``, in file order): its id and the
intent graph :meth:`OfflineExtractor.extract <raylake.intent.offline.OfflineExtractor.extract>`
returns, evidence included, with sorted keys and numpy scalars as plain numbers. With
``--ground`` each line also holds the reference's own structure in the gold SQL's words
grounded by :func:`raylake.intent.ground.ground` (:func:`bench.intent_bench.gold_words_graph`),
which exercises the extractor's ranking and joint choice through the grounding path.

Two snapshots of one index and question file are byte-identical exactly when the extractor
behaves the same: ``cmp before.jsonl after.jsonl``. Scores nothing (that is
:mod:`bench.intent_bench`).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    # one thread, as bench.intent_bench: a BLAS reduction order that varies with threads could vary the floats
    os.environ.setdefault(_var, "1")

import argparse
import json
import sys

import numpy as np

from bench import missing_path


def _plain(obj):
    """numpy scalars and arrays as JSON numbers and lists (the evidence may carry them)."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def snapshot(index_dir: str, questions_path: str, limit: int | None, out_path: str, ground: bool = False) -> int:
    """Write the snapshot; returns the number of questions written."""
    from bench.spider_gold import headers, load_questions
    from raylake.index.reader import LakeIndex
    from raylake.intent.offline import OfflineExtractor

    questions = load_questions(questions_path)
    if ground:
        from bench.intent_bench import db_column_hints, gold_words_graph
        from bench.intent_ref import reference_graph

        lake_dir = os.path.join(os.path.dirname(os.path.abspath(questions_path)), "lake")
        hints = db_column_hints(questions)  # as bench.intent_bench: a database's questions pool their columns
    questions = questions[:limit] if limit else questions
    extractor = OfflineExtractor(LakeIndex.load(index_dir))
    with open(out_path, "w", encoding="utf-8") as fh:
        for q in questions:
            row = {"id": q["id"], "graph": extractor.extract(q["question"]).to_json(evidence=True)}
            if ground:
                ref = reference_graph(q["gold_sql"], headers(lake_dir, q["gold_tables"]), hints[q["db_id"]])
                row["grounded"] = None if ref is None else extractor.ground(gold_words_graph(ref), q["question"]).to_json(evidence=True)
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False, default=_plain) + "\n")
    return len(questions)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.intent_snapshot", description=__doc__.splitlines()[0])
    ap.add_argument("--index-dir", required=True, help="a finished raylake index")
    ap.add_argument("--questions", required=True, help="questions JSONL (id, question; gold_sql etc. for --ground)")
    ap.add_argument("--limit", type=int, default=None, help="the first N questions only")
    ap.add_argument("--ground", action="store_true", help="also ground each question's gold-words graph")
    ap.add_argument("--out", required=True, help="the snapshot JSONL to write")
    args = ap.parse_args(argv)
    if missing_path("intent_snapshot", __index_dir=args.index_dir, __questions=args.questions):
        return 2
    n = snapshot(args.index_dir, args.questions, args.limit, args.out, args.ground)
    print(f"intent_snapshot: {n} questions → {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
