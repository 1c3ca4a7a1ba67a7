"""``raylake tools <tool> ...`` (one JSON object per call) and ``raylake mcp`` (stdio server).

Each tool's subcommand is made from its entry in the tool table: required arguments are
positional, the others ``--flags`` with the tool's defaults.
"""
from __future__ import annotations

import argparse
import json

from raylake.errors import EXIT_OK


def register(subparsers) -> None:
    from raylake.tools.registry import TOOLS

    s = subparsers.add_parser("tools", help="the agent tools over an index (column/value search, inspect, read-only SQL, joins), JSON out")
    tools = s.add_subparsers(dest="tool", metavar="TOOL", required=True)
    for spec in TOOLS.values():
        t = tools.add_parser(spec.name.replace("_", "-"), help=spec.description.split(". ")[0], description=spec.description)
        for p in spec.params:
            if p.kind is bool:
                t.add_argument(f"--{p.name.replace('_', '-')}", dest=p.name, action=argparse.BooleanOptionalAction, default=p.default)
            elif p.required:
                t.add_argument(p.name, type=p.kind)
            else:
                t.add_argument(f"--{p.name.replace('_', '-')}", dest=p.name, type=p.kind, default=p.default,
                               help=f"default {p.default}" if p.default is not None else "default: from the configuration")
        t.add_argument("--index-dir", default=".raylake", help="the index (default ./.raylake)")
        t.set_defaults(func=cmd_tool, spec=spec)

    s = subparsers.add_parser("mcp", help="serve the agent tools over MCP on stdio (needs pip install raylake[mcp])")
    s.add_argument("--index-dir", default=".raylake", help="the index (default ./.raylake)")
    s.set_defaults(func=cmd_mcp)


def cmd_tool(args) -> int:
    from raylake.tools.base import Toolbox

    spec = args.spec
    values = {p.name: getattr(args, p.name) for p in spec.params}
    out = spec.run(Toolbox(args.index_dir), values)
    print(json.dumps(out, ensure_ascii=False, default=str))
    return EXIT_OK


def cmd_mcp(args) -> int:
    from raylake.tools.mcp_server import build_server
    from raylake.tools.base import Toolbox

    build_server(Toolbox(args.index_dir)).run("stdio")
    return EXIT_OK
