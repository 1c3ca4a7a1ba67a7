"""``raylake llm serve`` and ``raylake llm check``: host a model with vLLM, test an endpoint.

:func:`register` adds the ``llm`` command to the main parser; the handlers follow its
conventions (``--json``, :class:`RaylakeError` for user mistakes, an int exit code).
"""
from __future__ import annotations

import json
import os
import sys
import time

from raylake.errors import LLMError
from raylake.runtime import LOOPBACK


def register(subparsers) -> None:
    """Add ``llm serve`` and ``llm check`` to the ``raylake`` subcommands."""
    p = subparsers.add_parser("llm", help="serve a local model with vLLM, or check the configured LLM endpoint")
    sub = p.add_subparsers(dest="llm_command", metavar="LLM_COMMAND", required=True)

    s = sub.add_parser("serve", help="serve a local model folder with vLLM on Ray Serve (OpenAI-compatible)")
    s.add_argument("model_path", help="model folder on the GPU node (weights are never downloaded)")
    s.add_argument("--name", default=None, help="model name clients send (default: the folder name)")
    s.add_argument("--host", default=LOOPBACK, help="bind address (default 127.0.0.1: this machine only); another, e.g. 0.0.0.0, "
                   "exposes the model to that network with no token")
    s.add_argument("--port", type=int, default=8000, metavar="PORT", help="HTTP port of Ray Serve (default 8000)")
    s.add_argument("--gpus", type=float, default=1, metavar="N", help="GPUs per replica; a fraction shares one (default 1)")
    s.add_argument("--tensor-parallel", type=int, default=1, metavar="N", help="shard the model over N GPUs of one node (default 1)")
    s.add_argument("--route-prefix", default="/", help="URL prefix of the endpoint (default /)")
    s.add_argument("--address", default=None, help="Ray cluster address; the deployment then outlives this command "
                   "(default: local Ray, serving until Ctrl-C)")
    s.add_argument("--json", action="store_true", help="print the endpoint as JSON")
    s.set_defaults(func=cmd_serve)

    c = sub.add_parser("check", help="ping the configured endpoint (RAYLAKE_LLM_BASE_URL) and list its models")
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    c.set_defaults(func=cmd_check)


def cmd_serve(args) -> int:
    from raylake.llm.serve import block_until_interrupted, serve_vllm

    name = args.name or os.path.basename(os.path.normpath(args.model_path))
    url = serve_vllm(
        args.model_path,
        name=name,
        num_gpus=args.gpus,
        tensor_parallel_size=args.tensor_parallel,
        route_prefix=args.route_prefix,
        host=args.host,
        port=args.port,
        address=args.address,
    )
    if args.json:
        print(json.dumps({"base_url": url, "model": name}))
    else:
        print(f"Serving {name!r} at {url}\n  export RAYLAKE_LLM_BASE_URL={url} RAYLAKE_LLM_MODEL={name}")
    sys.stdout.flush()
    if args.address is None:
        # A local Ray, and the deployment with it, ends with this process.
        if not args.json:
            print("  Ctrl-C to stop")
        try:
            block_until_interrupted()
        except KeyboardInterrupt:
            print(f"Stopped serving {name!r}", file=sys.stderr)
    return 0


def cmd_check(args) -> int:
    from raylake.llm.client import LLMClient

    client = LLMClient()
    start = time.perf_counter()
    models = client.models()
    latency = time.perf_counter() - start
    wanted = client.config.model
    if wanted and wanted not in models:
        raise LLMError(f"RAYLAKE_LLM_MODEL={wanted} is not served by {client.base_url}; it serves: {', '.join(models) or 'nothing'}")
    if not models:
        raise LLMError(f"LLM endpoint {client.base_url} is up but serves no models")
    model = wanted or models[0]
    if args.json:
        print(json.dumps({"base_url": client.base_url, "models": models, "model": model, "latency_s": round(latency, 3)}))
    else:
        print(f"LLM endpoint {client.base_url} is up ({latency * 1000:.0f} ms)\n  models: {', '.join(models)}\n  using:  {model}")
    return 0
