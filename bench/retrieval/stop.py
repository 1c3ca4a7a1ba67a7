"""How far the stop is from the best stop of the same decode, on held-out questions of the CV's fold models.

``python -m bench.retrieval.stop --lake L --index-dir IDX --questions Q --models-dir M --out R.json``

The extension decode (:mod:`raylake.relevance.complete`) orders a question's tables; the stop
(:func:`raylake.relevance.complete.choose_sequence`) keeps a prefix. This separates the two.
Each fold model a CV run saved (``--models-dir``, ``raylake-fold<k>``) decodes its own held-out
questions to ``--depth`` tables, and every budget L is scored (F1 and Sufficiency of the kept
tables, before the join tree is built) for:

- ``extension``: the decode's own calibrated stop, as :meth:`LakeRelevance.pick` runs it with ``extend=True``;
- ``top_L``: the first L tables of the decode (the Sufficiency the order allows);
- ``by_p``: no extension — the candidates in the order of the candidate classifier's own
  probabilities and the same expected F1 + Sufficiency stop over them, as :meth:`LakeRelevance.pick` runs it by default;
- ``oracle``: per question the prefix of at most L tables of highest F1 + Sufficiency, read from
  its labels — the ceiling of any stop over this decode, not a method;
- ``learned``: a stop learned by stacking, where fold models of two or more folds exist. For every
  prefix length k a small network (:class:`~raylake.relevance.classifier.CompletionClassifier`)
  predicts the prefix's F1 and whether it is sufficient from :func:`prefix_features`; the prefix
  of highest predicted F1 + Sufficiency is kept. It is fitted on the *other* folds' questions
  (database-grouped), so it measures what such a stop would give on unseen databases.

The fold models' calibration is read as saved, so ``extension`` is what the saved model does.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

BUDGETS = (5, 10, 15)
PREFIX_FEATURES = ("p_last", "p_next", "logq_last", "logq_next", "f_hat", "p_suff", "log_k", "sum_p", "n_likely",
                   "p_first", "mass", "n_folders", "next_new_folder", "p_suff_picks")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval.stop", description=__doc__.splitlines()[0])
    p.add_argument("--lake", required=True)
    p.add_argument("--index-dir", required=True)
    p.add_argument("--questions", required=True)
    p.add_argument("--models-dir", required=True, help="the fold models of a CV run (DIR/raylake-fold<k>)")
    p.add_argument("--folds", type=int, default=5, help="the CV's number of folds (the same split, seed 0)")
    p.add_argument("--depth", type=int, default=20, help="tables each held-out question is decoded to")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", required=True)
    return p


def f1(chosen, gold: set) -> float:
    tp = len(set(chosen) & gold)
    return 2 * tp / (len(set(chosen)) + len(gold)) if tp else 0.0


def prefix_features(q: np.ndarray, rest: np.ndarray, seq: list[int], calibration, folder) -> np.ndarray:
    """``(len(seq), len(PREFIX_FEATURES))``: what is known about keeping the first k picks, for every k.

    The calibrated probability of the k-th pick and of the next, their raw log-probabilities, the
    stop's two terms (expected F1, P(sufficient) under independence), log k, the probabilities'
    sum and how many exceed 0.5, the first pick's, the whole decode's mass, the folders the prefix
    spans, whether the next pick opens a new folder, and P(no needed pick past k)."""
    q = np.asarray(q, np.float64)
    probs = np.concatenate([q[:1], calibration(q[1:])])
    rest_p = calibration(rest)
    n, k = len(probs), np.arange(1, len(probs) + 1)
    after = np.append(np.cumprod((1.0 - probs)[::-1])[::-1], 1.0)[1:]
    total = probs.sum() + rest_p.sum()
    logq = np.log10(np.clip(q, 1e-30, 1.0))
    seen, n_folders, new_next = set(), [], []
    for j, t in enumerate(seq):
        seen.add(folder[t] if folder is not None else 0)
        n_folders.append(len(seen))
        new_next.append(float(j + 1 < n and folder is not None and folder[seq[j + 1]] not in seen))
    return np.stack([
        probs, np.append(probs[1:], rest_p.max() if len(rest_p) else 0.0), logq, np.append(logq[1:], -30.0),
        2 * np.cumsum(probs) / (k + total), after * np.prod(1.0 - rest_p), np.log(k), np.cumsum(probs),
        np.cumsum(probs > 0.5), np.full(n, probs[0]), np.full(n, total), n_folders, new_next, after,
    ], 1).astype(np.float32)


def decode_fold(engine, model, questions, depth: int, folder) -> list[dict]:
    """Each held-out question's decode to ``depth``, the model's own choice at every budget, the prefix features."""
    from bench.retrieval.cv import question_context

    index = engine.index
    rel = model.for_lake(index, engine.graph, cache=False)
    out = []
    for q in questions:
        index.embedder.clear_cache()
        ranking = rel.rank(q["question"], *question_context(engine, rel, q["question"]))
        seq, qs, rest = rel.decode(ranking, depth)
        gold = {index.path_id[t] for t in q["gold_tables"]}
        X = prefix_features(qs, rest, seq, model.calibration, folder) if seq else np.zeros((0, len(PREFIX_FEATURES)))
        out.append({"seq": seq, "gold": gold, "X": X,
                    "f1": np.array([f1(seq[:k], gold) for k in range(1, len(seq) + 1)], np.float32),
                    "suff": np.array([gold <= set(seq[:k]) for k in range(1, len(seq) + 1)], np.float32),
                    "extension": {b: [t for t, _ in rel.pick(ranking, b, extend=True)] for b in BUDGETS},
                    "by_p": {b: [t for t, _ in rel.pick(ranking, b)] for b in BUDGETS}})
    return out


def score(rows: list[dict], choose) -> dict:
    out = {}
    for b in BUDGETS:
        chosen = [choose(r, b) for r in rows]
        out[str(b)] = {"f1": round(float(np.mean([f1(c, r["gold"]) for r, c in zip(rows, chosen)])), 4),
                       "sufficiency": round(float(np.mean([r["gold"] <= set(c) for r, c in zip(rows, chosen)])), 4),
                       "size": round(float(np.mean([len(c) for c in chosen])), 2)}
    return out


def best(values: np.ndarray, budget: int) -> int:
    return int(np.argmax(values[:budget])) + 1 if len(values) else 0


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(k, v)
    import torch

    from bench.retrieval import harness
    from bench.retrieval.cv import fold_model, held_out
    from raylake.errors import RaylakeError
    from raylake.relevance.classifier import CompletionClassifier
    from raylake.relevance.features import folder_ids
    from raylake.relevance.model import RelevanceModel
    from raylake.search import Engine

    torch.set_num_threads(max(1, args.threads))
    questions = harness.load_questions(args.questions, args.lake)
    rows: dict[int, list[dict]] = {}
    t0 = time.perf_counter()
    try:
        held = held_out(args.questions, questions, args.models_dir, args.folds)
        engine = Engine(args.index_dir, relevance=None)
        folder = folder_ids(engine.index.paths)
        for k, qs in held.items():
            rows[k] = decode_fold(engine, RelevanceModel.load(fold_model(args.models_dir, k)), qs, args.depth, folder)
            print(f"[stop] fold {k}: {len(rows[k])} questions decoded ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    except RaylakeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    have = sorted(rows)
    every = [r for k in have for r in rows[k]]
    methods = {
        "extension": score(every, lambda r, b: r["extension"][b]),
        "top_L": score(every, lambda r, b: r["seq"][:b]),
        "by_p": score(every, lambda r, b: r["by_p"][b]),
        "oracle": score(every, lambda r, b: r["seq"][: best(r["f1"] + r["suff"], b)]),
    }
    if len(have) > 1:
        for k in have:
            train = [r for j in have if j != k for r in rows[j] if len(r["seq"])]
            X = np.concatenate([r["X"] for r in train])
            nets = []
            for target in ("f1", "suff"):  # soft labels: the network's output is the expected F1, P(sufficient)
                net = CompletionClassifier(X.shape[1], 32)
                net.fit(X, np.concatenate([r[target] for r in train]), epochs=40, seed=0)
                nets.append(net)
            for r in rows[k]:
                r["J"] = nets[0].predict(r["X"]) + nets[1].predict(r["X"]) if len(r["seq"]) else np.zeros(0)
        methods["learned"] = score(every, lambda r, b: r["seq"][: best(r["J"], b)])
    result = {"lake": args.lake, "folds": have, "n_questions": len(every), "depth": args.depth,
              "prefix_features": list(PREFIX_FEATURES), "methods": methods,
              "git_commit": harness.git_commit(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for name, by in methods.items():
        print(f"{name:<9} " + " | ".join(f"L={b} F1 {v['f1']:.3f} Suff {v['sufficiency']:.3f} size {v['size']:.1f}"
                                         for b, v in by.items()))
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
