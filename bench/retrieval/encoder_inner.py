"""How the relevance encoder should be trained, chosen on training questions alone.

``python -m bench.retrieval.encoder_inner --lake L --index-dir IDX --questions Q [--fold 0]
[--lrs 5e-5 2e-4] [--layers 2] [--epochs 8] --out R.json``

The choice of how long and how fast to fine-tune must not be made on the questions the CV
scores (:mod:`.cv`). This looks only at one fold's *training* part: it is split into two halves
of whole groups (:func:`raylake.relevance.train.halves`, the split ``fit`` cross-fits on), a
head is fine-tuned on one half, and after every epoch its top-10 recall and Sufficiency are
measured on the other half (databases neither half shares). The curve per learning rate and
number of trained layers is written to ``--out`` after every epoch (a run stopped early keeps its
curve), with the seconds since each run began; the fold's own questions are never read.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval.encoder_inner", description=__doc__.splitlines()[0])
    p.add_argument("--lake", required=True)
    p.add_argument("--index-dir", required=True)
    p.add_argument("--questions", required=True)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--fold", type=int, default=0, help="whose training part is split (its own questions are not read)")
    p.add_argument("--lrs", type=float, nargs="+", default=[5e-5, 2e-4])
    p.add_argument("--layers", type=int, nargs="+", default=[2])
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(k, v)
    import torch

    from bench.retrieval import harness
    from bench.retrieval.cv import db_folds, question_dbs
    from raylake.config import RelevanceConfig
    from raylake.index.reader import LakeIndex
    from raylake.relevance.encoder import BiEncoder
    from raylake.relevance.fit import Example, cached_states, encode_cached, fit_encoder, top_k_shares
    from raylake.relevance.model import table_texts
    from raylake.relevance.train import halves

    torch.set_num_threads(args.threads)
    index = LakeIndex.load(args.index_dir)
    questions = harness.load_questions(args.questions, args.lake)
    fold = db_folds(question_dbs(args.questions, questions), args.folds, args.seed)
    train = [(q["question"], [index.path_id[t] for t in q["gold_tables"]]) for q, f in zip(questions, fold) if f != args.fold]
    half = halves(train, args.seed)
    fit_part = [train[i] for i, h in enumerate(half) if h == 0]
    held = [train[i] for i, h in enumerate(half) if h == 1]
    texts = table_texts(index)
    runs = []
    out = {"lake": args.lake, "fold": args.fold, "fit_questions": len(fit_part), "held_questions": len(held),
           "k": args.k, "runs": runs, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

    def write():
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)

    for layers in args.layers:
        cache: dict = {}
        for lr in args.lrs:
            torch.manual_seed(args.seed)
            enc = BiEncoder(None, RelevanceConfig.max_seq_length, layers, heads=1)
            tab_states = cached_states(enc, texts, cache)
            q_states = cached_states(enc, [q for q, _ in held], cache)
            curve = []  # seconds: since the run started, so a step's cost per setting is read off one run
            runs.append({"layers": layers, "lr": lr, "curve": curve})

            def validate(head, enc=enc, tab_states=tab_states, q_states=q_states, curve=curve, t0=time.perf_counter()):
                share = top_k_shares(encode_cached(enc, tab_states, head), encode_cached(enc, q_states, head),
                                     [ts for _, ts in held], args.k)
                curve.append({"recall": round(float(share.mean()), 4), "sufficiency": round(float((share == 1.0).mean()), 4),
                              "seconds": round(time.perf_counter() - t0, 1)})
                write()  # after every epoch: a run stopped early keeps its curve
                print(f"[inner] layers {layers} lr {lr:g} epoch {len(curve) - 1}: recall@{args.k} {curve[-1]['recall']:.3f} "
                      f"sufficiency@{args.k} {curve[-1]['sufficiency']:.3f}", file=sys.stderr, flush=True)
                return curve[-1]["recall"]

            validate(0)  # epoch 0: the untuned encoder
            fit = fit_encoder(enc, [Example(q, [texts[i] for i in ts]) for q, ts in fit_part], epochs=args.epochs,
                              lr=lr, seed=args.seed, states=cache, validate=validate, patience=args.epochs)
            runs[-1]["steps"] = len(fit.losses)
            write()
    for r in runs:
        best = max(range(len(r["curve"])), key=lambda e: r["curve"][e]["recall"])
        print(f"layers {r['layers']} lr {r['lr']:g}: best epoch {best} {r['curve'][best]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
