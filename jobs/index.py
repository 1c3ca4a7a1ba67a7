"""Ray job: index (or incrementally re-index) a lake on the cluster this job was submitted to.

    ray job submit --address http://HEAD:8265 -- python jobs/index.py LAKE --index-dir DIR

The same work as ``raylake index``, run as a job driver: it joins the job's cluster
(``address="auto"``), so profiling tasks and embedding actors spread over its nodes (GPU
workers embed when present). LAKE and DIR must be visible from the head node: a shared
mount, or a URI such as ``s3://bucket/lake``. The last line of stdout is the JSON summary
(``ray job logs`` shows it). The job fails only when nothing could be indexed; skipped
files are listed in the summary, not treated as a failure.
"""
from __future__ import annotations

import argparse
import json
import sys

from raylake.errors import RaylakeError
from raylake.index.build import build_index


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="jobs/index.py", description="Index a data lake as a Ray job.")
    p.add_argument("lake", help="lake folder, glob or URI, as seen from the cluster")
    p.add_argument("--index-dir", required=True, help="where the index lives, as seen from the cluster")
    p.add_argument("--model", default=None, help="sentence-transformers model folder on the workers")
    p.add_argument("--parts", type=int, default=None, help="METIS parts (default: from the cluster size)")
    args = p.parse_args(argv)

    from raylake.config import RaylakeContext

    cfg = RaylakeContext.get_current().index
    cfg.model = args.model or cfg.model
    cfg.num_parts = args.parts or cfg.num_parts
    try:
        summary = build_index(args.lake, args.index_dir, address="auto", cfg=cfg, progress=False)
    except RaylakeError as exc:
        print(f"raylake: error: {exc}", file=sys.stderr)
        return exc.exit_code
    print(json.dumps(summary, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
