"""Trajectory generation (GRAFT Alg. 1) throughput on Ray: rate vs workers, memory vs count.

    python -m bench.trajectories_bench --index-dir IDX --count 20000 --json

Builds the lake arrays once (cached under --cache), warms the Ray workers (process start,
numba kernels loaded from their cache), then generates ``--count`` trajectories with 1..N
workers (tasks in flight) and, at the largest worker count, a quarter of the count,
recording the peak PSS of the driver and its Ray workers (bench.memory) — memory should not
grow with the count (tasks write shards; nothing is gathered).

Two rates per run, because the machine this runs on may be shared: the **wall** rate
(trajectories over the generation stage's seconds, what a user sees) and the **CPU** rate
(workers × trajectories over the CPU seconds the tasks used, shard writing included: the
wall rate with the cores to ourselves). The load average is recorded beside each run.
Writes bench/results/trajectories.json; the last stdout line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time

from bench.memory import TreeMemory


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--index-dir", default=".raylake", help="a raylake index (default: the one `make demo` builds)")
    p.add_argument("--count", type=int, default=20_000)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--sampler", default="centrality")
    p.add_argument("--batch", type=int, default=2_000)
    p.add_argument("--cache", default="/tmp/raylake_bench/traj_cache")
    p.add_argument("--out", default="bench/results/trajectories.json")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if not os.path.isfile(os.path.join(args.index_dir, "CURRENT")):
        print(f"error: no raylake index in {args.index_dir!r}: run `raylake index LAKE --index-dir {args.index_dir}` first", file=sys.stderr)
        sys.exit(2)
    from raylake.learn.trajectories import TrajectoryConfig, generate, lake_arrays
    from raylake.runtime import start_ray

    workers = [int(w) for w in args.workers.split(",")]
    start_ray(num_cpus=max(workers))
    t = time.perf_counter()
    arrays = lake_arrays(args.index_dir, args.cache, TrajectoryConfig())
    arrays_s = time.perf_counter() - t
    tmp = "/tmp/raylake_bench/traj_out"
    # warm-up: start every worker process and load the numba kernels before anything is timed
    shutil.rmtree(tmp, ignore_errors=True)
    warm = TrajectoryConfig(n_trajectories=4 * max(workers) * 50, sampler=args.sampler, batch=50, workers=max(workers))
    generate(args.index_dir, tmp, warm, arrays=arrays, progress=False)
    runs = []
    plan = [(w, args.count) for w in workers] + [(max(workers), max(1, args.count // 4))]
    for w, n in plan:
        shutil.rmtree(tmp, ignore_errors=True)
        cfg = TrajectoryConfig(n_trajectories=n, sampler=args.sampler, batch=args.batch, workers=w)
        load0 = os.getloadavg()[0]
        with TreeMemory(os.getpid()) as mem:
            s = generate(args.index_dir, tmp, cfg, arrays=arrays, progress=False)
        runs.append({
            "workers": w, "count": n,
            "trajectories_per_s": round(s["trajectories_per_s"], 1),
            "cpu_trajectories_per_s": round(w * n / s["task_cpu_s"], 1),
            "cpu_ms_per_trajectory": round(1e3 * s["task_cpu_s"] / n, 3),
            "generate_cpu_ms_per_trajectory": round(1e3 * s["generate_cpu_s"] / n, 3),
            "wall_s": s["generate_wall_s"], "transitions": s["transitions"], "shard_mb": round(s["bytes"] / 1e6, 2),
            "peak_pss_mb": round(mem.peak_pss_mb, 1), "reward_mean": round(s["reward_mean"], 4),
            "load_avg_1m": [round(load0, 1), round(os.getloadavg()[0], 1)],
        })
        print(json.dumps(runs[-1]), flush=True)
    best = [r for r in runs if r["workers"] == max(workers) and r["count"] == args.count][0]
    one = [r for r in runs if r["workers"] == min(workers) and r["count"] == args.count][0]
    result = {
        "bench": "trajectories", "index_dir": args.index_dir, "tables": arrays.n_tables, "sampler": args.sampler,
        "arrays_build_s": round(arrays_s, 1), "runs": runs, "workers": max(workers),
        "trajectories_per_s": best["trajectories_per_s"],
        "cpu_trajectories_per_s": best["cpu_trajectories_per_s"],
        "cpu_ms_per_trajectory": best["cpu_ms_per_trajectory"],
        "wall_speedup_vs_1_worker": round(best["trajectories_per_s"] / one["trajectories_per_s"], 2),
        "load_avg_1m": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(),
        "note": "the CPU rate is workers x trajectories / task CPU seconds (the wall rate with the cores to "
                "ourselves); compare load_avg_1m per run with cpus to see whether the machine was shared",
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
