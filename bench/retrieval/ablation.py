"""What each group of candidate features is worth, measured on held-out questions of the CV's fold models.

``python -m bench.retrieval.ablation --lake L --index-dir IDX --questions Q --models-dir M
[--without folder_gap,folder_log_rank ...] --out R.json``

A full cross-validation (:mod:`.cv`) retrains the encoder for every fold, about twenty minutes
a fold on two cores; a question about the candidate classifier's *features* does not need
that. This reuses the fold models a CV run saved (``--models-dir``, ``raylake-fold<k>``): each
fold's model scores its own held-out questions — the question-time bi-encoder scores, the
candidates and every feature of :data:`raylake.relevance.features.FEATURES` as the current
code computes them — and then, for every feature set, a candidate classifier is fitted on the
rows of the *other* available folds and scores the fold's rows (stacking). No question's label
is ever used to score it, and folds are database-grouped, so a feature that helps only by
remembering databases cannot show. The fold models' encoders saw the other folds' questions,
so a fold's rows describe questions that model has not seen, exactly as at question time.

Reported per feature set, as means over the questions: the best candidate is needed
(``top1``), it lies in the folder of a needed table (``folder``, where the lake has folders),
and every needed table is among the first 3 / 5 / 10 by probability (``all@k``: the ranking
the extension decode starts from). The first feature set is always all of them.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval.ablation", description=__doc__.splitlines()[0])
    p.add_argument("--lake", required=True)
    p.add_argument("--index-dir", required=True)
    p.add_argument("--questions", required=True)
    p.add_argument("--models-dir", required=True, help="the fold models of a CV run (DIR/raylake-fold<k>)")
    p.add_argument("--folds", type=int, default=5, help="the CV's number of folds (the same split, seed 0)")
    p.add_argument("--without", action="append", default=[], metavar="F1,F2",
                   help="a feature set: all features but these (repeat for several sets)")
    p.add_argument("--epochs", type=int, default=30, help="candidate classifier epochs (the training default)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", required=True)
    return p


def rows_of_fold(engine, model, questions) -> list[dict]:
    """Each question's candidates, their features (all of FEATURES) and labels under one fold model."""
    from bench.retrieval.cv import question_context

    index = engine.index
    rel = model.for_lake(index, engine.graph, cache=False)
    out = []
    for q in questions:
        index.embedder.clear_cache()
        it, pt = question_context(engine, rel, q["question"])
        s = rel.scores(q["question"])
        cand, X = rel.features.candidates(q["question"], s, it, pt)
        gold = {index.path_id[t] for t in q["gold_tables"]}
        out.append({"id": q["id"], "cand": cand, "X": X, "y": np.fromiter((int(t) in gold for t in cand), np.float32, len(cand)),
                    "gold": gold})
    return out


def ranking_stats(rows: list[dict], probs: list[np.ndarray], folder) -> dict[str, float]:
    n = max(1, len(rows))
    top1 = fold = 0
    within = {3: 0, 5: 0, 10: 0}
    for r, p in zip(rows, probs):
        order = r["cand"][np.argsort(-p, kind="stable")]
        top1 += int(order[0]) in r["gold"]
        if folder is not None:
            fold += folder[order[0]] in {folder[t] for t in r["gold"]}
        for k in within:
            within[k] += r["gold"] <= set(order[:k].tolist())
    out = {"top1": top1 / n, **{f"all@{k}": v / n for k, v in within.items()}}
    if folder is not None:
        out["folder"] = fold / n
    return {k: round(v, 4) for k, v in out.items()}


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(k, v)
    import torch

    from bench.retrieval import harness
    from bench.retrieval.cv import fold_model, held_out
    from raylake.errors import RaylakeError
    from raylake.relevance.classifier import CompletionClassifier
    from raylake.relevance.features import FEATURES, folder_ids
    from raylake.relevance.model import RelevanceModel
    from raylake.search import Engine

    torch.set_num_threads(max(1, args.threads))
    sets = [("all", list(FEATURES))]
    for spec in args.without:
        drop = [f for f in spec.split(",") if f]
        unknown = [f for f in drop if f not in FEATURES]
        if unknown:
            print(f"error: unknown features {unknown}; the features are {', '.join(FEATURES)}", file=sys.stderr)
            return 2
        sets.append((f"without {spec}", [f for f in FEATURES if f not in drop]))
    questions = harness.load_questions(args.questions, args.lake)
    rows: dict[int, list[dict]] = {}
    t0 = time.perf_counter()
    try:
        held = held_out(args.questions, questions, args.models_dir, args.folds, need=2)  # stacking: two or more
        engine = Engine(args.index_dir, relevance=None)
        for k, qs in held.items():
            rows[k] = rows_of_fold(engine, RelevanceModel.load(fold_model(args.models_dir, k)), qs)
            print(f"[ablation] fold {k}: {len(rows[k])} questions described ({time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr)
    except RaylakeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    have = sorted(rows)
    folder = folder_ids(engine.index.paths)
    result = {"lake": args.lake, "folds": have, "n_questions": sum(map(len, rows.values())), "sets": {}}
    for name, feats in sets:
        cols = [FEATURES.index(f) for f in feats]
        stats = []
        for k in have:
            train = [r for j in have if j != k for r in rows[j]]
            clf = CompletionClassifier(len(cols))
            clf.fit(np.concatenate([r["X"][:, cols] for r in train]), np.concatenate([r["y"] for r in train]),
                    epochs=args.epochs, seed=0)
            probs = [clf.predict(r["X"][:, cols]) for r in rows[k]]
            stats.append((len(rows[k]), ranking_stats(rows[k], probs, folder)))
        n = sum(m for m, _ in stats)
        mean = {key: round(sum(m * s[key] for m, s in stats) / n, 4) for key in stats[0][1]}
        result["sets"][name] = {"features": feats, "per_fold": {str(k): s for k, (_, s) in zip(have, stats)}, "mean": mean}
        print(f"{name:<40} " + "  ".join(f"{key} {v:.3f}" for key, v in mean.items()))
    result["git_commit"] = harness.git_commit()
    result["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
