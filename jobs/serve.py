"""Ray job: deploy the search service on the cluster this job was submitted to, then exit.

    ray job submit --address http://HEAD:8265 -- python jobs/serve.py --index-dir DIR --host 0.0.0.0 [--replicas N]

The same service as ``raylake serve``, deployed with ``serve.run`` on the job's cluster
(``address="auto"``); the Serve application outlives this driver. The index directory must
be visible from every node a replica may land on (a shared mount). Replicas reload the
index when ``raylake index`` (or ``jobs/index.py``) publishes a new build there. The last
line of stdout is a JSON object with the URL. For a declarative deployment, see
``cluster/serve.yaml`` (``serve deploy``).
"""
from __future__ import annotations

import argparse
import json
import sys

from raylake.errors import RaylakeError


def main(argv: list[str] | None = None) -> int:
    from raylake.serve.config import ServeConfig

    d = ServeConfig()
    p = argparse.ArgumentParser(prog="jobs/serve.py", description="Deploy raylake search on Ray Serve as a Ray job.")
    p.add_argument("--index-dir", required=True, help="index directory, as seen from the replicas' nodes")
    p.add_argument("--host", default=d.host, help="bind address of the Serve proxies (0.0.0.0 to reach it from outside the node)")
    p.add_argument("--port", type=int, default=d.port)
    p.add_argument("--replicas", type=int, default=d.replicas)
    p.add_argument("--replica-cpus", type=float, default=d.replica_cpus)
    p.add_argument("--max-batch-size", type=int, default=d.max_batch_size)
    p.add_argument("--token", default=None, help="bearer token clients must send (default: none)")
    args = p.parse_args(argv)

    from raylake.index.store import read_manifest
    from raylake.serve.app import serve_search

    cfg = ServeConfig(index_dir=args.index_dir, host=args.host, port=args.port, replicas=args.replicas,
                      replica_cpus=args.replica_cpus, max_batch_size=args.max_batch_size, token=args.token)
    try:
        read_manifest(args.index_dir)
        url = serve_search(cfg, address="auto")
    except RaylakeError as exc:
        print(f"raylake: error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(json.dumps({"url": url, "index_dir": args.index_dir, "replicas": args.replicas, "token": bool(args.token)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
