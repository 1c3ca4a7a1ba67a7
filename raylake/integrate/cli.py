"""``raylake integrate QUESTIONS.jsonl --index-dir DIR --out OUT/`` (EcoTable, many questions at once).

Exit codes: 0 every question integrated, 3 some question got no table (its line says why),
2 user error (no index, unreadable questions file or a bad line in it, ``--out`` a file).
"""
from __future__ import annotations

import json
import sys

from raylake.errors import EXIT_OK, EXIT_PARTIAL, RaylakeError


def register(subparsers) -> None:
    s = subparsers.add_parser("integrate", help="integrate a batch of questions: validated join paths and one table each (EcoTable)")
    s.add_argument("questions", metavar="QUESTIONS.jsonl", help="one JSON object a line with 'question' (and 'id')")
    s.add_argument("--index-dir", default=".raylake", help="the index (default ./.raylake)")
    s.add_argument("--out", required=True, metavar="OUT/", help="folder for <id>.parquet, results.jsonl and report.json")
    s.add_argument("--coarse-k", type=int, default=None, metavar="K", help="candidate tables per question before refinement (default 10)")
    s.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="seconds of intent extraction per question before it is ranked without it (default 60)")
    s.add_argument("--no-naive", action="store_true", help="skip counting the validations each question would need alone")
    s.add_argument("--json", action="store_true", help="print the report as one JSON object")
    s.set_defaults(func=cmd_integrate)


def cmd_integrate(args) -> int:
    from dataclasses import replace

    from raylake.config import RaylakeContext
    from raylake.index.store import read_manifest
    from raylake.integrate.batch import check_out_dir, integrate
    from raylake.questions import read_questions

    ctx = RaylakeContext.get_current()
    cfg = ctx.integrate
    if args.coarse_k is not None:
        if args.coarse_k < 1:
            raise RaylakeError(f"--coarse-k must be at least 1, got {args.coarse_k}")
        cfg = replace(cfg, coarse_k=args.coarse_k)
    if args.timeout is not None:
        if args.timeout <= 0:
            raise RaylakeError(f"--timeout must be positive, got {args.timeout}")
        cfg = replace(cfg, question_timeout_s=args.timeout)
    ctx = ctx.replace(integrate=cfg)
    lines = read_questions(args.questions)  # a bad line is a one-line error naming file:line
    read_manifest(args.index_dir)  # no index, or one of another format: one line, before loading models
    check_out_dir(args.out)
    say = (lambda msg: None) if (args.quiet or args.json) else (lambda msg: print(f"raylake: {msg}", file=sys.stderr, flush=True))
    report = integrate([(q.id, q.question) for q in lines], args.index_dir, args.out, ctx=ctx,
                       naive=not args.no_naive, progress=say)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, default=str))
    else:
        for row in report["results"]:
            tail = f"{row['rows']} rows -> {row['table_file']}" if row["table_file"] else f"no table: {row['reason']}"
            print(f"{row['id']}: {len(row['tables'])} tables, {len(row['edges'])} validated joins; {tail}")
        naive = report["validations_naive"]
        print(f"validations: {report['validations']}" + (f" (each question alone: {naive})" if naive is not None else "")
              + f"; {report['iterations']} rounds; {report['timed_out']} timed out; outputs in {report['out']}")
    return EXIT_PARTIAL if any(r["table_file"] is None for r in report["results"]) else EXIT_OK
