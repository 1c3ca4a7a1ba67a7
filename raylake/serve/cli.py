"""``raylake serve``: the search service on Ray Serve (see :mod:`raylake.serve.app`).

:func:`register` adds the command to the main parser; the handler follows its conventions
(``--json``, :class:`RaylakeError` for user mistakes, an int exit code).
"""
from __future__ import annotations

import json
import os
import socket
import sys
import time

from raylake.errors import RaylakeError


def register(subparsers) -> None:
    """Add ``serve`` to the ``raylake`` subcommands."""
    from raylake.serve.config import ServeConfig

    d = ServeConfig()
    s = subparsers.add_parser("serve", help="serve search over HTTP with Ray Serve (POST /ask, /intent; GET /tables, /health, /metrics)")
    s.add_argument("--index-dir", default=d.index_dir, help="the index to serve (default ./.raylake); reloaded when re-indexed")
    s.add_argument("--host", default=d.host, help="bind address (default 127.0.0.1: this machine only; 0.0.0.0 opens it up)")
    s.add_argument("--port", type=int, default=d.port, help=f"HTTP port (default {d.port})")
    s.add_argument("--replicas", type=int, default=d.replicas, metavar="N", help="search replicas, each with its own copy of the index (default 1)")
    s.add_argument("--replica-cpus", type=float, default=d.replica_cpus, metavar="C", help="Ray CPUs per replica (default 1)")
    s.add_argument("--token", default=os.environ.get("RAYLAKE_SERVE_TOKEN"),
                   help="require 'Authorization: Bearer TOKEN' (default: $RAYLAKE_SERVE_TOKEN, else no token)")
    s.add_argument("--max-batch-size", type=int, default=d.max_batch_size, metavar="N", help=f"questions per batch (default {d.max_batch_size}; 1 turns batching off)")
    s.add_argument("--timeout", type=float, default=d.request_timeout_s, metavar="S", help=f"per-request time limit in seconds (default {d.request_timeout_s:g})")
    s.add_argument("--address", default=None, help="Ray cluster address; the service then outlives this command (default: local Ray, until Ctrl-C)")
    s.add_argument("--json", action="store_true", help="print the endpoint as JSON")
    s.set_defaults(func=cmd_serve)


def cmd_serve(args) -> int:
    from raylake.index.store import read_manifest
    from raylake.serve.app import serve_search
    from raylake.serve.config import ServeConfig

    index_dir = os.path.abspath(args.index_dir)
    read_manifest(index_dir)  # a missing or foreign index is the user's mistake: say so before starting Ray
    cfg = ServeConfig(index_dir=index_dir, host=args.host, port=args.port, replicas=args.replicas, replica_cpus=args.replica_cpus,
                      token=args.token, max_batch_size=args.max_batch_size, request_timeout_s=args.timeout).check()
    if args.address is None:
        _check_port(cfg.host, cfg.port)
    if not (args.quiet or args.json):
        print("raylake: starting Ray Serve and loading the index and models in each replica…", file=sys.stderr, flush=True)
    t = time.perf_counter()
    url = serve_search(cfg, address=args.address)
    if not (args.quiet or args.json):
        print(f"raylake: ready in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"url": url, "index_dir": index_dir, "replicas": cfg.replicas, "token": bool(cfg.token), "openapi": f"{url}/openapi.json"}))
    else:
        print(f"Serving {index_dir} at {url} ({cfg.replicas} replica{'s' if cfg.replicas > 1 else ''}"
              f"{', bearer token required' if cfg.token else ''})\n"
              f"  try: curl -s {url}/ask -d '{{\"question\": \"...\"}}'\n  API: {url}/docs   metrics: {url}/metrics")
    sys.stdout.flush()
    if args.address is None:
        # A local Ray, and the service with it, ends with this process.
        if not args.json:
            print("  Ctrl-C to stop")
        from raylake.llm.serve import block_until_interrupted

        try:
            block_until_interrupted()
        except KeyboardInterrupt:
            print("Stopped serving", file=sys.stderr)
    return 0


def _check_port(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise RaylakeError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another with --port or --host") from None
