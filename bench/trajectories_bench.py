"""Trajectory generation (GRAFT Alg. 1) throughput on Ray: rate vs workers, memory vs count.

    python -m bench.trajectories_bench --index-dir /work/idx/spider --count 20000 --json

Builds the lake arrays once (cached under --cache), then generates ``--count`` trajectories
with 1..N workers (tasks in flight) and, at the largest worker count, with a quarter of
the count, recording the peak PSS of the driver and its Ray workers (bench.memory) —
memory should not grow with the count (tasks write shards; nothing is gathered).
Writes bench/results/trajectories.json; the last stdout line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import time

from bench.memory import TreeMemory


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--index-dir", default="/work/idx/spider")
    p.add_argument("--count", type=int, default=20_000)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--sampler", default="centrality")
    p.add_argument("--batch", type=int, default=2_000)
    p.add_argument("--cache", default="/tmp/raylake_bench/traj_cache")
    p.add_argument("--out", default="bench/results/trajectories.json")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    import ray

    from raylake.learn.trajectories import TrajectoryConfig, generate, lake_arrays

    workers = [int(w) for w in args.workers.split(",")]
    ray.init(num_cpus=max(workers), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    t = time.perf_counter()
    arrays = lake_arrays(args.index_dir, args.cache, TrajectoryConfig())
    arrays_s = time.perf_counter() - t
    runs = []
    tmp = "/tmp/raylake_bench/traj_out"
    plan = [(w, args.count) for w in workers] + [(max(workers), max(1, args.count // 4))]
    for w, n in plan:
        shutil.rmtree(tmp, ignore_errors=True)
        cfg = TrajectoryConfig(n_trajectories=n, sampler=args.sampler, batch=args.batch, workers=w)
        with TreeMemory(os.getpid()) as mem:
            s = generate(args.index_dir, tmp, cfg, arrays=arrays, progress=False)
        runs.append({"workers": w, "count": n, "trajectories_per_s": round(s["trajectories_per_s"], 1),
                     "transitions": s["transitions"], "shard_mb": round(s["bytes"] / 1e6, 2),
                     "peak_pss_mb": round(mem.peak_pss_mb, 1), "reward_mean": round(s["reward_mean"], 4)})
        print(json.dumps(runs[-1]), flush=True)
    best = [r for r in runs if r["workers"] == max(workers) and r["count"] == args.count][0]
    result = {
        "bench": "trajectories", "index_dir": args.index_dir, "tables": arrays.n_tables, "sampler": args.sampler,
        "arrays_build_s": round(arrays_s, 1), "runs": runs, "trajectories_per_s": best["trajectories_per_s"],
        "workers": max(workers), "load_avg_1m": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(),
        "note": "shared 2-core machine; other agents were running (see load_avg_1m)",
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
