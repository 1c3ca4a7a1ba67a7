"""``python -m bench.retrieval`` — see :mod:`bench.retrieval`."""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(os.path.dirname(HERE), "results")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval", description="Retrieval benchmark: raylake and six baselines on one index.")
    p.add_argument("--lake", required=True, help="lake root (gold paths are relative to it)")
    p.add_argument("--index-dir", required=True, help="built raylake index of that lake")
    p.add_argument("--questions", required=True, help="JSONL with id, question, gold_tables")
    p.add_argument("--budgets", type=int, nargs="+", default=[5, 10, 15], help="budgets L")
    p.add_argument("--methods", nargs="+", default=["all"], help="methods to run, or 'all'")
    p.add_argument("--out", required=True, help="results JSON")
    p.add_argument("--limit", type=int, default=None, help="run a seeded sample of N questions")
    p.add_argument("--seed", type=int, default=0, help="seed of --limit and --subset samples")
    p.add_argument("--subset", nargs="*", default=[], metavar="METHOD=N",
                   help="run METHOD on a seeded subset of N of the questions (nested in any larger subset)")
    p.add_argument("--exact-max-expansions", type=int, default=3000, help="exact: sets built per question and budget before the enumeration stops (deterministic cap)")
    p.add_argument("--exact-cap-s", type=float, default=20.0, help="exact: wall-clock safety cap per question and budget")
    p.add_argument("--jar-node-limit", type=int, default=500, help="jar: branch-and-bound nodes per MIP (deterministic cap)")
    p.add_argument("--jar-time-limit-s", type=float, default=20.0, help="jar: MIP wall-clock safety limit")
    p.add_argument("--model-dir", default=None, help="raylake_q: a value-network checkpoint written by `raylake train`")
    p.add_argument("--report-dir", default=RESULTS, help="where the markdown table and plot go")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads for query embedding (1: on a shared 2-core host more threads spin and run ~15x slower)")
    p.add_argument("--quiet", action="store_true")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from raylake.errors import RaylakeError

    try:
        return _main(args)
    except RaylakeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: results of finished methods are in --out", file=sys.stderr)
        return 130


def _main(args) -> int:
    import torch

    from bench.retrieval import harness, report
    from raylake.errors import RaylakeError

    torch.set_num_threads(max(1, args.threads))
    if not os.path.isdir(args.lake):
        raise RaylakeError(f"lake {args.lake!r} is not a directory")
    if not os.path.isdir(args.index_dir):
        raise RaylakeError(f"index dir {args.index_dir!r} does not exist; build it with: raylake index {args.lake} --index-dir {args.index_dir}")
    methods = list(harness.METHODS) if args.methods == ["all"] else args.methods
    for m in methods:
        harness.method_class(m)
    subsets = {}
    for s in args.subset:
        name, _, n = s.partition("=")
        if name not in harness.METHODS or not n.isdigit() or int(n) < 1:
            raise RaylakeError(f"--subset expects METHOD=N with N >= 1, got {s!r}")
        subsets[name] = int(n)
    questions = harness.load_questions(args.questions, args.lake)
    if args.limit is not None:
        if args.limit < 1:
            raise RaylakeError("--limit must be at least 1")
        keep = set(harness.seeded_order(questions, args.seed)[: args.limit])
        questions = [q for i, q in enumerate(questions) if i in keep]
    params = {"exact": {"max_expansions": args.exact_max_expansions, "time_cap_s": args.exact_cap_s},
              "jar": {"node_limit": args.jar_node_limit, "time_limit_s": args.jar_time_limit_s},
              "raylake_q": {"model_dir": args.model_dir}}
    try:
        from raylake.index import store

        store.read_manifest(os.path.abspath(args.index_dir))
    except RaylakeError:
        raise
    except Exception as exc:  # a directory that is not an index
        raise RaylakeError(f"{args.index_dir!r} is not a raylake index ({exc})") from None
    res = harness.run(
        args.index_dir, questions, args.budgets, methods, out=args.out, subsets=subsets, seed=args.seed, params=params,
        meta_extra={"questions_file": os.path.abspath(args.questions), "limit": args.limit, "torch_threads": args.threads},
        progress=not args.quiet,
    )
    stem = os.path.splitext(os.path.basename(args.out))[0]
    md, png = report.write(res, args.report_dir, stem)
    print(report.markdown(res))
    print(f"wrote {args.out}, {md}, {png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
