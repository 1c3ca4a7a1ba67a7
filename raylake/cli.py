"""The ``raylake`` command line.

Every subcommand prints for people by default and one JSON object with ``--json``. User
mistakes end with a one-line ``raylake: error: ...`` and a non-zero exit code, never a
traceback.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from raylake.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, RaylakeError



def _print_json(obj) -> None:
    print(json.dumps(obj, indent=None, ensure_ascii=False, default=str))


class _Parser(argparse.ArgumentParser):
    """Every parser of the tree (subcommands inherit the class) takes ``-v``/``-q``, so no
    command repeats them. SUPPRESS as default: a subcommand's own default must not reset a
    flag given before it (``raylake -v ask ...``); :func:`main` fills in the absent ones."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                          help="log what raylake does on stderr (-vv: debug detail)")
        self.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                          help="no progress bars or notices on stderr")


def _configure_logging(verbose: int, quiet: bool) -> None:
    log = logging.getLogger("raylake")
    if verbose:
        log.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)
        if not any(getattr(h, "raylake_cli", False) for h in log.handlers):  # main() may run many times in one process
            h = logging.StreamHandler(sys.stderr)
            h.setFormatter(logging.Formatter("raylake: %(levelname)s %(name)s: %(message)s"))
            h.raylake_cli = True
            log.addHandler(h)
    elif quiet:
        log.setLevel(logging.ERROR)


def _fmt_timings(t: dict) -> str:
    return "  ".join(f"{k} {v:.1f}s" for k, v in t.items() if k != "total")


# --------------------------------------------------------------------------- index / inspect


def cmd_index(args) -> int:
    from raylake.config import RaylakeContext
    from raylake.index.build import build_index

    ctx = RaylakeContext.get_current()
    if args.model:
        ctx.index.model = args.model
    if args.parts:
        ctx.index.num_parts = args.parts
    if args.embed_backend:
        ctx.index.embed_backend = args.embed_backend
    if args.dry_run:
        return _index_dry_run(args, ctx.index)
    summary = build_index(args.path, args.index_dir, address=args.address, cfg=ctx.index, progress=not args.quiet)
    if args.json:
        _print_json(summary)
    else:
        if summary.get("up_to_date"):
            print(f"Index in {summary['index_dir']} is up to date with {summary['lake']} ({summary['tables']} tables); nothing to do "
                  f"({summary['timings_s']['total']:.1f} s)")
        else:
            print(
                f"Indexed {summary['files']} files from {summary['lake']} in {summary['timings_s']['total']:.1f} s\n"
                f"  tables {summary['tables']:,}   columns {summary['columns']:,}   rows {summary['rows']:,}\n"
                f"  join edges {summary['join_edges']:,}   union edges {summary['union_edges']:,}   "
                f"({summary['edges_per_table']} per table)   METIS parts {summary['parts']}\n"
                f"  changed {summary['changed']}   removed {summary['removed']}   skipped {summary['skipped']}\n"
                f"  time per stage: {_fmt_timings(summary['timings_s'])}\n"
                f"  index: {summary['index_dir']}"
            )
        for path, reason in summary.get("skipped_files", {}).items():
            print(f"  skipped {path}: {reason}", file=sys.stderr)
    return EXIT_PARTIAL if summary.get("skipped") else EXIT_OK


def _index_dry_run(args, cfg) -> int:
    from raylake.index.build import plan_index

    plan = plan_index(args.path, args.index_dir, cfg=cfg)
    if args.json:
        _print_json(plan)
        return EXIT_OK
    if plan["rebuild"]:
        print(f"would rebuild {plan['index_dir']} from scratch ({plan['rebuild']})")
    for kind in ("new", "changed", "removed"):
        for path in plan[kind]:
            print(f"{kind:<8} {path}")
    if not (plan["new"] or plan["changed"] or plan["removed"]):
        print(f"nothing to index: {plan['unchanged']} files unchanged")
    return EXIT_OK


def cmd_inspect(args) -> int:
    from raylake.index.reader import LakeIndex

    idx = LakeIndex.load(args.index_dir)
    if args.list:
        if args.table:
            raise RaylakeError("give either a table or --list, not both")
        paths = list(idx.paths)
        if args.json:
            _print_json(paths)
        else:
            print("\n".join(paths))
        return EXIT_OK
    if args.table:
        if args.table not in idx.path_id:
            raise RaylakeError(f"no table {args.table!r} in the index (paths are relative to {idx.lake_root})")
        prof = idx.table_profile(args.table)
        if args.json:
            _print_json(prof)
            return EXIT_OK
        print(f"{prof['table']}  rows {prof['n_rows']:,}  part {prof['part']}")
        for c in prof["columns"]:
            key = " key" if c["key_like"] else ""
            print(f"  {c['name']:<28} {c['dtype']:<5} distinct {c['n_distinct']:<7} nulls {c['null_frac']:.0%}{key}  e.g. {', '.join(c['sample'][:3])}")
        for e in prof["edges"]:
            if e["kind"] == "join":
                print(f"  join  {e['src_table']}.{e['src_column']} -> {e['dst_table']}.{e['dst_column']}  score {e['score']:.2f}")
            else:
                print(f"  union {e['src_table']} ~ {e['dst_table']}  score {e['score']:.2f}  mapping {e['mapping']}")
        return EXIT_OK
    m = idx.manifest
    info = {
        "index_dir": idx.index_dir,
        "build": os.path.basename(idx.build),
        "format_version": m["format_version"],
        "raylake_version": m["raylake_version"],
        "created_at": m["created_at"],
        "lake": m["lake_root"],
        "model": m["model"],
        **{k: v for k, v in m["summary"].items() if k not in ("timings_s", "index_dir", "lake", "up_to_date", "changed", "removed")},
    }
    if args.json:
        _print_json(info)
        return EXIT_OK
    for k, v in info.items():
        if k == "skipped_files":
            for p, r in v.items():
                print(f"  skipped {p}: {r}")
        else:
            print(f"{k:<18} {v}")
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="raylake", description="Find, join and union the tables of a data lake that answer a question.")
    p.add_argument("--version", action="version", version=f"raylake {__import__('raylake').__version__}")
    p.add_argument("--config", default=None, metavar="FILE.toml",
                   help="override defaults from a TOML file: [search], [intent], [index], ... sections, or [tool.raylake]")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    from raylake.index.embed import BACKENDS as EMBED_BACKENDS

    s = sub.add_parser("index", help="index (or incrementally re-index) a lake",
                       epilog="exit status: 0 all indexed, 3 some files skipped (named on stderr), 2 user error, 1 crash")
    s.add_argument("path", help="lake folder, glob ('lake/*.csv') or URI (s3://bucket/prefix)")
    s.add_argument("--index-dir", default=".raylake", help="where the index lives (default ./.raylake)")
    s.add_argument("--address", default=None, help="Ray cluster address (default: start Ray locally)")
    s.add_argument("--model", default=None, help="local sentence-transformers model folder (default: packaged MiniLM)")
    s.add_argument("--parts", type=int, default=None, help="METIS parts (default: from the cluster size)")
    s.add_argument("--embed-backend", choices=EMBED_BACKENDS, default=None,
                   help="embedding runtime (default torch; onnx-int8: the same model int8 on ONNX Runtime, faster on CPU, "
                        "needs raylake[fast]); changing it re-embeds the whole lake")
    s.add_argument("--dry-run", action="store_true",
                   help="list the new, changed and removed files against the current index; write nothing, start no Ray")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=cmd_index)

    s = sub.add_parser("inspect", help="show an index, or one table of it")
    s.add_argument("table", nargs="?", help="a table path relative to the lake root")
    s.add_argument("--list", action="store_true", help="every table path of the index, one per line (a JSON list with --json)")
    s.add_argument("--index-dir", default=".raylake")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_inspect)

    # each stage's commands live beside it (``register(subparsers)``)
    from raylake.integrate.cli import register as register_integrate
    from raylake.intent.cli import register as register_intent
    from raylake.learn.cli import register as register_learn
    from raylake.llm.cli import register as register_llm
    from raylake.relevance.cli import register as register_relevance
    from raylake.search.cli import register as register_ask
    from raylake.serve.cli import register as register_serve
    from raylake.tools.cli import register as register_tools

    for register in (register_ask, register_intent, register_serve, register_learn, register_relevance, register_llm, register_tools, register_integrate):
        register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.verbose = getattr(args, "verbose", 0)
    args.quiet = getattr(args, "quiet", False)
    _configure_logging(args.verbose, args.quiet)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.config:
            from raylake.config import RaylakeContext, load_config

            RaylakeContext.set_current(load_config(args.config))
        return args.func(args)
    except RaylakeError as exc:
        print(f"raylake: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("raylake: interrupted; the previous index, if any, is unchanged", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
