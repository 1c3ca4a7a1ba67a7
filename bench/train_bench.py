"""Value-network training on Ray Train: steps/s on N CPU workers and held-out value MAPE per sampler (Table 8).

    python -m bench.train_bench --index-dir IDX --count 5000 --steps 200 --json

For each sampler (centrality, anchor_only, uniform): generate ``--count`` trajectories, train
``--steps`` IQL updates with ``--workers`` workers, record steps/s and the held-out MAPE of
Q(s, a) against the discounted return. Writes bench/results/train.json; the last stdout line
is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

SAMPLERS = ("centrality", "anchor_only", "uniform")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--index-dir", default=".raylake", help="a raylake index (default: the one `make demo` builds)")
    p.add_argument("--count", type=int, default=5_000)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--samplers", default=",".join(SAMPLERS))
    p.add_argument("--cache", default="/tmp/raylake_bench/traj_cache")
    p.add_argument("--out", default="bench/results/train.json")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if not os.path.isfile(os.path.join(args.index_dir, "CURRENT")):
        print(f"error: no raylake index in {args.index_dir!r}: run `raylake index LAKE --index-dir {args.index_dir}` first", file=sys.stderr)
        sys.exit(2)
    from raylake.learn.train import TrainConfig, train
    from raylake.learn.trajectories import TrajectoryConfig, generate, lake_arrays
    from raylake.runtime import start_ray

    start_ray(num_cpus=max(2, args.workers))
    arrays = lake_arrays(args.index_dir, args.cache, TrajectoryConfig())
    runs = []
    for sampler in args.samplers.split(","):
        traj = f"/tmp/raylake_bench/train_{sampler}"
        shutil.rmtree(traj, ignore_errors=True)
        s = generate(args.index_dir, traj, TrajectoryConfig(n_trajectories=args.count, sampler=sampler), arrays=arrays, progress=False)
        cfg = TrainConfig(steps=args.steps, workers=args.workers, eval_every=max(1, args.steps // 4), eval_rows=2048)
        cfg.iql.batch_size = args.batch_size
        t = train(traj, f"/tmp/raylake_bench/model_{sampler}", cfg)
        m, first = t["metrics"], t["first"]
        runs.append({"sampler": sampler, "trajectories": s["trajectories"], "transitions": s["transitions"],
                     "steps": args.steps, "workers": args.workers, "batch_size": args.batch_size,
                     "steps_per_s": round(m.get("steps_per_s", 0.0), 3), "wall_s": t["wall_s"],
                     "loss_q_first": first.get("loss_q"), "loss_q_last": m.get("loss_q"),
                     "val_mape_q_first": first.get("val_mape_q"), "val_mape_q": m.get("val_mape_q"),
                     "val_mape_v": m.get("val_mape_v"), "reward_mean": round(s["reward_mean"], 4)})
        print(json.dumps(runs[-1]), flush=True)
    result = {"bench": "train", "index_dir": args.index_dir, "runs": runs, "load_avg_1m": round(os.getloadavg()[0], 1),
              "paper_mape": {"centrality": 8.4, "anchor_only": 13.5, "uniform": 18.2},
              "note": "compare load_avg_1m with the machine's cores to see whether it was shared"}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
