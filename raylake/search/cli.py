"""``raylake ask``: one question (or a JSON-lines file of them) against a loaded index.

Exit codes: 0 answered (an answer may be empty, with a ``reason``), 3 some lines of a
``--questions`` batch got an error line instead of an answer, 2 user error (empty question,
no index, an index of another format, unreadable questions file, a plan whose fusion fails).
"""
from __future__ import annotations

import json
import os
import sys
import time

from raylake.errors import EXIT_PARTIAL, RaylakeError
from raylake.intent.model import check_question
from raylake.questions import QuestionLine, read_lines


def register(subparsers) -> None:
    s = subparsers.add_parser("ask", help="find the tables that answer a question, with the plan, and fuse them")
    s.add_argument("question", nargs="?", help="the question, in quotes")
    s.add_argument("--index-dir", default=".raylake", help="the index (default ./.raylake)")
    s.add_argument("--budget", "-L", type=int, default=None, metavar="L", help="at most L tables (default 10)")
    s.add_argument("--beam", "-B", type=int, default=None, metavar="B", help="beam width (default 4)")
    s.add_argument("--json", action="store_true", help="print one JSON object (one line per question with --questions)")
    s.add_argument("--out", default=None, metavar="FILE", help="write the fused table to FILE.parquet or FILE.csv")
    s.add_argument("--questions", default=None, metavar="FILE.jsonl",
                   help="answer every line's 'question' (and echo its 'id') with one loaded index")
    s.add_argument("--fuse", action="store_true", help="with --questions: also fuse each plan (summary only)")
    s.add_argument("--no-fuse", action="store_true", help="skip fusion and the answer (plan only)")
    s.add_argument("--sql-only", action="store_true",
                   help="print the answer's SQL without running it (the plan is still fused, to know which joins keep rows; "
                        "the NL2SQL agent, with an LLM configured, runs its queries to refine them)")
    s.add_argument("--preview", type=int, default=5, metavar="N", help="fused rows to show (default 5)")
    s.add_argument("--offline", action="store_true", help="never call the LLM endpoint, even when one is configured (offline intent and answer grammar)")
    s.add_argument("--model-dir", default=None, metavar="DIR", help="a trained value-network checkpoint (raylake train) to guide search")
    s.add_argument("--relevance", default="default", metavar="DIR",
                   help="learned relevance model folder (raylake relevance train); 'default': the packaged one; 'off': the beam's plan alone")
    s.add_argument("--part-actors", action="store_true", help="answer region queries through one Ray actor per METIS part")
    s.set_defaults(func=cmd_ask)


def _engine(args):
    from raylake.index.store import read_manifest
    from raylake.search.engine import Engine

    if args.model_dir and not os.path.isdir(args.model_dir):
        raise RaylakeError(f"--model-dir {args.model_dir}: no such folder (train one with `raylake train`)")
    if args.relevance not in ("default", "off") and not os.path.isdir(args.relevance):
        raise RaylakeError(f"--relevance {args.relevance}: no such folder (train one with `raylake relevance train`, or say 'off')")
    read_manifest(args.index_dir)  # no index, or one of another format: one line, before the load notice
    say = (lambda msg: None) if args.quiet else (lambda msg: print(f"raylake: {msg}", file=sys.stderr, flush=True))
    # loading takes seconds (Ray, sentence-transformers, the relevance model) that no per-question timing shows
    loud = not (args.quiet or args.json)
    if loud:
        say("loading index and models…")
    t = time.perf_counter()
    eng = Engine(args.index_dir, model_dir=args.model_dir, part_actors=args.part_actors, relevance=args.relevance, notice=say)
    if not args.offline:
        from raylake.llm import LLMClient

        client = LLMClient()
        if client.available:
            eng.use_llm(client)
    if loud:
        say(f"loaded in {time.perf_counter() - t:.1f} s")
    return eng


def short_label(name: str, width: int) -> str:
    """A column label in at most ``width`` characters: the whole name when it fits, else its
    column part (after the ``<table path>.`` prefix fusion gives it), cut at the right with '…'
    (--json keeps every name whole)."""
    if len(name) <= width:
        return name
    col = name.rsplit(".", 1)[-1]
    return col if len(col) <= width else col[: width - 1] + "…"


def emit(obj: dict, file=None) -> None:
    """Print one JSON line. Text that is not valid Unicode (lone surrogates from undecodable
    bytes) is written as JSON escapes rather than failing the whole line."""
    file = file or sys.stdout
    try:
        text = json.dumps(obj, ensure_ascii=False, default=str)
        text.encode(file.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(obj, ensure_ascii=True, default=str)
    print(text, file=file, flush=True)


def _ask_batch(eng, questions: list[QuestionLine], args) -> int:
    failed = []
    for q in questions:
        head = {"id": q.id, "line": q.line} | ({"question": q.question} if q.question is not None else {})
        if q.error:
            obj = head | {"error": q.error}
        else:
            try:
                obj = {"id": q.id, **eng.ask(q.question, args.budget, args.beam, fuse=args.fuse,
                                             answer=not args.no_fuse, run=not args.sql_only).to_json()}
            except RaylakeError as exc:
                obj = head | {"error": str(exc)}
            except Exception as exc:  # a bug on one question must not cost the rest of the batch their answers
                obj = head | {"error": f"internal error ({type(exc).__name__}: {exc}); please report it"}
        if "error" in obj:
            failed.append(q.line)
        emit(obj)
    if failed:
        shown = ", ".join(map(str, failed[:10])) + (", ..." if len(failed) > 10 else "")
        print(f"raylake: {len(failed)} of {len(questions)} lines got an error instead of an answer (lines {shown})", file=sys.stderr)
        return EXIT_PARTIAL
    return 0


def cmd_ask(args) -> int:
    if args.questions and args.question:
        raise RaylakeError("give either a question or --questions FILE, not both")
    if not args.questions and args.question is None:
        raise RaylakeError('no question: raylake ask "which clubs have the most players?"')
    if args.sql_only and args.no_fuse:
        raise RaylakeError("--sql-only writes the answer over the fused plan; drop --no-fuse")
    if args.questions and args.out:
        raise RaylakeError("--out writes one fused table; with --questions use --fuse for per-question summaries")
    if args.budget is not None and args.budget < 1:
        raise RaylakeError(f"--budget must be at least 1, got {args.budget}")
    if args.beam is not None and args.beam < 1:
        raise RaylakeError(f"--beam must be at least 1, got {args.beam}")
    if args.question is not None:
        check_question(args.question)  # before the index and models load
    questions = read_lines(args.questions) if args.questions else None
    if args.out:
        from raylake.fuse.fuse import check_out_path

        check_out_path(args.out)
    eng = _engine(args)
    if questions is not None:
        return _ask_batch(eng, questions, args)
    ans = eng.ask(args.question, args.budget, args.beam, fuse=not args.no_fuse, out=args.out,
                  preview=max(args.preview, 0), answer=not args.no_fuse, run=not args.sql_only)
    if args.sql_only and not args.json:
        q = ans.to_json()
        print(q.get("sql") or f"-- no answer SQL: {q.get('answer_reason') or ans.reason}")
        return 0
    if args.json:
        emit(ans.to_json())
    else:
        print_answer(ans.to_json())
    return 0


def print_answer(a: dict, file=sys.stdout) -> None:
    """The human rendering of the ``--json`` object."""
    w = lambda s="": print(s, file=file)  # noqa: E731
    w(f"Question: {a['question']}")
    intent = a.get("intent") or {}
    for tree in intent.get("trees", []):
        attrs = ", ".join(
            at["name"] + (f" = {', '.join(map(str, at['values']))}" if at.get("values") else "") for at in tree.get("attributes", [])
        )
        w(f"  intent ({a.get('intent_source')}): {tree['entity']}" + (f" [{attrs}]" if attrs else ""))
    for j in intent.get("joins", []):
        w(f"  intent join: {j['from_tree']}.{j['from_attribute']} = {j['to_tree']}.{j['to_attribute']}")
    if not a["tables"]:
        w(f"No tables: {a.get('reason')}")
        return
    w(f"Plan: {len(a['tables'])} tables, IGMS U = {a['score']:.4f}")
    for i, (t, s) in enumerate(zip(a["tables"], a["plan"]), 1):
        sup = ", ".join(f"{x['atom']} '{x['text']}' {x['support']:.2f}" for x in t["supports"][:4])
        if s["op"] == "start":
            how = "start"
        elif s["op"] == "join":
            how = f"join  {s['anchor']}.{s['keys']['anchor_column']} = {s['keys']['new_column']}  (edge {s['edge_score']:.2f})"
        else:
            pairs = ", ".join(f"{k}→{v}" for k, v in list((s.get("mapping") or {}).items())[:4])
            how = f"union into {s['anchor']}  ({pairs}{', …' if len(s.get('mapping') or {}) > 4 else ''})"
        w(f"  {i:>2}. {t['table']:<32} {t['role']:<11} {t['rows']:>8,} rows   {how}")
        if sup:
            w(f"      supports: {sup}")
        if "relevance" in t:
            w(f"      needed with probability {t['relevance']:.2f} (learned relevance model)")
    f = a.get("fused")
    if f:
        w(f"Fused: {f['rows']:,} rows × {len(f['columns'])} columns" + (f", written to {f['path']}" if f.get("path") else ""))
        for warn in f.get("warnings", []):
            w(f"  warning: {warn}")
        prev = f.get("preview") or []
        if prev:
            cols = list(prev[0])[:8]
            width = 18
            w("  " + " | ".join(short_label(c, width).ljust(width) for c in cols) + (" | …" if len(prev[0]) > 8 else ""))
            for row in prev:
                w("  " + " | ".join(str(row[c])[:width].ljust(width) for c in cols))
    if "sql" in a:
        if a.get("answer") is None:
            w(f"No answer: {a.get('answer_reason')}")
        else:
            ans = a["answer"]
            if a.get("answer_source") == "llm":
                ran = [t["sql"] for t in a.get("answer_turns", []) if "rows" in t and not t.get("probe")]
                w(f"SQL (NL2SQL agent, {len(a['answer_turns'])} turns):")
                w("  " + ran[-1].replace("\n", "\n  ") + "\n  -- each table: a CTE over its file; --json has all")
            else:
                w("SQL (offline grammar):")
                w("  " + a["sql"].split("\n)\n", 1)[-1].replace("\n", "\n  ") + "\n  -- fused: WITH fused AS (the fusion's SQL); --json has all")
            w(f"Answer: {ans['total_rows']:,} rows")
            for warn in ans.get("warnings", []):
                w(f"  warning: {warn}")
            w("  " + " | ".join(c if len(c) <= 40 else c[:39] + "…" for c in ans["columns"]))  # SQL expressions: read from the left
            for row in ans["rows"][:20]:
                w("  " + " | ".join(str(x) for x in row))
            if ans["total_rows"] > 20:
                w(f"  … {ans['total_rows'] - 20:,} more")
    t = a["timings_ms"]
    w("Time: " + "  ".join(f"{k} {v:.0f} ms" for k, v in t.items()))
