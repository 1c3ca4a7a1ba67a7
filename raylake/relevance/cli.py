"""``raylake relevance train`` and ``raylake relevance rank``.

:func:`register` adds the command group to the main parser (``raylake/cli.py``); handlers
follow its conventions (``--json``, :class:`RaylakeError` for user mistakes, an int exit
code).
"""
from __future__ import annotations

import json
import os
import sys

from raylake.errors import RaylakeError


def register(subparsers) -> None:
    r = subparsers.add_parser("relevance", help="train or try the learned relevance model (which tables a question needs)")
    sub = r.add_subparsers(dest="relevance_command", metavar="COMMAND")

    t = sub.add_parser("train", help="train a relevance model on an index, from questions with known tables and/or pseudo-questions")
    t.add_argument("--index-dir", action="append", default=None, metavar="DIR",
                   help="the index (default ./.raylake); repeat it to train one model on several lakes")
    t.add_argument("--questions", action="append", default=None, metavar="FILE.jsonl",
                   help="questions with known tables: one JSON object a line with 'question' and 'gold_tables' (lake "
                        "paths); with several --index-dir, one file for each, in the same order")
    t.add_argument("--pseudo", type=int, default=0, metavar="N", help="also generate N pseudo-questions from the lake itself")
    t.add_argument("--out", required=True, metavar="DIR", help="model folder to write (replaced atomically)")
    t.add_argument("--epochs", type=int, default=None, help="cap on encoder epochs (default 2; early stopping on held-out question groups may end sooner)")
    t.add_argument("--seed", type=int, default=None, help="seed of every sample and initialisation (default 0)")
    t.add_argument("--address", default=None, help="Ray cluster address (default: start Ray locally)")
    t.add_argument("--json", action="store_true", help="print the summary as JSON")
    t.set_defaults(func=cmd_train)

    k = sub.add_parser("rank", help="the candidate tables of a question with the model's probabilities, and the tables it chooses")
    k.add_argument("question")
    k.add_argument("--index-dir", default=".raylake")
    k.add_argument("--model", default="default", metavar="DIR", help="model folder (default: the packaged model)")
    k.add_argument("--top", type=int, default=10, help="candidates to show (default 10)")
    k.add_argument("--budget", type=int, default=10, help="at most this many tables chosen (default 10)")
    k.add_argument("--extend", action="store_true", help="choose by the greedy plan extension (default: by probability)")
    k.add_argument("--json", action="store_true")
    k.set_defaults(func=cmd_rank)
    r.set_defaults(func=lambda args: (r.print_help(), 2)[1])


def cmd_train(args) -> int:
    from dataclasses import replace

    from raylake.config import RaylakeContext
    from raylake.relevance.train import train

    cfg = RaylakeContext.get_current().relevance
    cfg = replace(cfg, pseudo_questions=args.pseudo, **{k: v for k, v in (("epochs", args.epochs), ("seed", args.seed)) if v is not None})
    if cfg.pseudo_questions < 0:
        raise RaylakeError(f"--pseudo must be 0 or more, got {cfg.pseudo_questions}")
    if cfg.epochs < 1:
        raise RaylakeError(f"--epochs must be at least 1, got {cfg.epochs}")
    out_parent = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_parent):
        raise RaylakeError(f"--out {args.out}: folder {out_parent} does not exist")
    s = train(args.index_dir or [".raylake"], args.out, args.questions or [], cfg, address=args.address, progress=not args.quiet)
    if args.json:
        print(json.dumps({k: v for k, v in s.items() if not k.endswith("_loss")}))
    else:
        heads = "; ".join(f"head {h} {sum(l[:5]) / len(l[:5]):.3f} -> {sum(l[-5:]) / len(l[-5:]):.3f}"
                          for h, l in enumerate(s["head_loss"]) if l)
        print(f"Trained a relevance model on {s['questions']:,} questions and {s['pseudo_questions']:,} pseudo-questions "
              f"({s['pairs']:,} question-table pairs) in {s['total_s']:.0f} s\n"
              f"  encoder loss (first / last 5 steps): {heads}\n"
              f"  candidates hold every needed table for {s['candidate_recall']:.1%} of the examples\n"
              f"  model: {s['out']}  (use it: raylake ask ... --relevance {s['out']})")
    return 0


def cmd_rank(args) -> int:
    from raylake.index.reader import LakeIndex
    from raylake.relevance.model import PACKAGED, RelevanceModel

    if not args.question.strip():
        raise RaylakeError("empty question")
    index = LakeIndex.load(args.index_dir)
    path = PACKAGED if args.model == "default" else args.model
    lr = RelevanceModel.load(path).for_lake(index, progress=lambda m: print(m, file=sys.stderr))
    if args.budget < 1:
        raise RaylakeError(f"--budget must be at least 1, got {args.budget}")
    ranking = lr.rank(args.question)
    cand, p = ranking.cand, ranking.p
    order = sorted(range(len(cand)), key=lambda i: -p[i])[: args.top]
    rows = [{"table": index.paths[int(cand[i])], "probability": round(float(p[i]), 4)} for i in order]
    picked = lr.pick(ranking, args.budget, extend=args.extend)
    chosen = [{"table": index.paths[t], "probability": round(q, 4)} for t, q in picked]
    if args.json:
        print(json.dumps({"question": args.question, "candidates": rows, "chosen": chosen}))
    else:
        print("candidates (their own probability):")
        for r in rows:
            print(f"  {r['probability']:.3f}  {r['table']}")
        print("chosen, in order" + (" (the probability given the tables before it):" if args.extend else ":"))
        for r in chosen:
            print(f"  {r['probability']:.3f}  {r['table']}")
    return 0
