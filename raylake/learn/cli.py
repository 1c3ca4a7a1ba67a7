"""``raylake trajectories`` and ``raylake train``: Algorithm 1 on Ray, then IQL on Ray Train.

:func:`register` adds both commands to the main parser (``raylake/cli.py``); handlers follow
its conventions (``--json``, :class:`RaylakeError` for user mistakes, an int exit code).
"""
from __future__ import annotations

import json

from raylake.errors import RaylakeError


def register(subparsers) -> None:
    """Add ``trajectories`` and ``train`` to the ``raylake`` subcommands."""
    s = subparsers.add_parser("trajectories", help="generate self-supervised search trajectories (GRAFT Alg. 1) as Parquet shards")
    s.add_argument("index_dir_arg", nargs="?", default=None, metavar="INDEX_DIR", help="the older spelling of --index-dir")
    s.add_argument("--index-dir", default=None, help="a built index (default ./.raylake)")
    s.add_argument("--out", required=True, help="output folder (shards/, lake/, manifest.json); replaced on rerun")
    s.add_argument("--count", type=int, default=200_000, help="trajectories to generate (default 200000)")
    s.add_argument("--sampler", default="centrality", choices=["centrality", "uniform", "anchor_only"],
                   help="centrality (Alg. 1), or a Table 8 ablation")
    s.add_argument("--max-tables", type=int, default=6, help="L: largest sampled subgraph (default 6)")
    s.add_argument("--alpha", type=float, default=0.7, help="α: join vs union weight of the centrality (default 0.7)")
    s.add_argument("--beta", type=float, default=0.5, help="β: share of payload columns kept (default 0.5)")
    s.add_argument("--parts", type=int, default=None, help="re-partition with METIS into N parts (default: the index's)")
    s.add_argument("--batch", type=int, default=2000, help="trajectories per Ray task / shard (default 2000)")
    s.add_argument("--workers", type=int, default=None, help="tasks in flight (default: Ray's CPUs)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--address", default=None, help="Ray cluster address (default: local Ray)")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=cmd_trajectories)

    t = subparsers.add_parser("train", help="train the value network with IQL on Ray Train from trajectory shards")
    t.add_argument("traj_dir", help="output folder of `raylake trajectories`")
    t.add_argument("--model-dir", required=True, help="where checkpoints and the exported model go")
    t.add_argument("--steps", type=int, default=2000, help="updates (default 2000; the paper trains 200K)")
    t.add_argument("--workers", type=int, default=2, help="Ray Train workers, DDP ranks (default 2)")
    t.add_argument("--batch-size", type=int, default=256, help="transitions per update per worker (default 256)")
    t.add_argument("--gpu", action="store_true", help="one GPU per worker (NCCL)")
    t.add_argument("--paper-size", action="store_true", help="the paper's network sizes (hidden 512) instead of the CPU default")
    t.add_argument("--eval-every", type=int, default=200, help="steps between held-out MAPE and checkpoints (default 200)")
    t.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --model-dir")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--address", default=None, help="Ray cluster address (default: local Ray)")
    t.add_argument("--json", action="store_true", help="print the summary as JSON")
    t.set_defaults(func=cmd_train)


def cmd_trajectories(args) -> int:
    from raylake.learn.trajectories import TrajectoryConfig, generate

    cfg = TrajectoryConfig(n_trajectories=args.count, sampler=args.sampler, max_tables=args.max_tables, alpha=args.alpha,
                           beta=args.beta, parts=args.parts, batch=args.batch, workers=args.workers, seed=args.seed)
    if args.index_dir and args.index_dir_arg and args.index_dir != args.index_dir_arg:
        raise RaylakeError(f"two indexes given ({args.index_dir_arg} and --index-dir {args.index_dir}); give one")
    index_dir = args.index_dir or args.index_dir_arg or ".raylake"
    s = generate(index_dir, args.out, cfg, address=args.address, progress=not args.quiet)
    if args.json:
        print(json.dumps({k: v for k, v in s.items() if k != "config"}))
    else:
        print(f"{s['trajectories']:,} trajectories ({s['transitions']:,} transitions, sampler {s['sampler']}) in "
              f"{s['timings_s']['total']:.1f} s — {s['trajectories_per_s']:,.0f}/s on {s['workers']} workers\n"
              f"  {s['shards']} shards, {s['bytes'] / 1e6:.1f} MB, mean terminal reward {s['reward_mean']:.4f}\n"
              f"  {s['out_dir']}")
    return 0


def cmd_train(args) -> int:
    from raylake.learn.model import ModelConfig
    from raylake.learn.train import TrainConfig, train

    cfg = TrainConfig(steps=args.steps, workers=args.workers, use_gpu=args.gpu, eval_every=args.eval_every,
                      resume=args.resume, seed=args.seed, model=ModelConfig.paper() if args.paper_size else ModelConfig())
    cfg.iql.batch_size = args.batch_size
    s = train(args.traj_dir, args.model_dir, cfg, address=args.address)
    if args.json:
        print(json.dumps({k: v for k, v in s.items() if k != "config"}, default=str))
    else:
        m = s["metrics"]
        print(f"Trained {s['steps']} steps on {s['workers']} workers in {s['wall_s']:.1f} s "
              f"({m.get('steps_per_s', 0):.2f} steps/s per worker)\n"
              f"  loss_q {m.get('loss_q', float('nan')):.4g}  loss_v {m.get('loss_v', float('nan')):.4g}  "
              f"held-out MAPE Q {m.get('val_mape_q', float('nan')):.1f}%\n  model: {s['model_dir']}")
    return 0
