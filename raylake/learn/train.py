"""Train the value network with IQL on Ray Train (TorchTrainer, DDP: gloo on CPU, NCCL on GPU).

The trajectory shards are read through Ray Data: every 10th trajectory (``traj % 10 == 0``)
is held out for the value error (MAPE of Q(s, a) against the discounted return γ^(T−1−t)·r_T,
Table 8); the rest is split across the N workers. Rank 0 logs losses and the held-out MAPE,
writes ``metrics.jsonl`` and reports a checkpoint (model, target, optimiser, schedule, step)
every ``eval_every`` steps; a rerun with ``resume=True`` continues from the latest one.
At the end the model is exported to ``model_dir/model.pt`` + ``model.json``, which
:class:`raylake.learn.scorer.QScorer` loads.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field

from raylake.errors import RaylakeError
from raylake.learn.iql import IQLConfig
from raylake.learn.model import ModelConfig, load_tensors
from raylake.runtime import start_ray


@dataclass
class TrainConfig:
    steps: int = 2_000  # optimiser updates per worker (the cosine schedule spans them)
    workers: int = 2  # Ray Train workers (DDP ranks)
    use_gpu: bool = False  # one GPU per worker (NCCL) instead of CPU (gloo)
    eval_every: int = 200  # steps between held-out evaluations and checkpoints
    eval_rows: int = 2_048  # held-out transitions scored per evaluation
    threads: int = 1  # torch intra-op threads per worker (1: workers already fill the cores)
    cpus_per_worker: float | None = None  # Ray CPUs per worker; None: 1, less when workers would leave Ray Data no CPU
    shuffle_buffer: int = 4_096  # Ray Data local shuffle buffer, in rows
    seed: int = 0  # torch seed (per rank: seed + rank)
    resume: bool = False  # continue from the latest checkpoint under model_dir
    model: ModelConfig = field(default_factory=ModelConfig)  # network sizes (ModelConfig.paper() for the paper's)
    iql: IQLConfig = field(default_factory=IQLConfig)  # IQL hyperparameters (Sec. 5.1)


def _to_tensors(feat, rows):
    import numpy as np
    import torch

    g = feat.transitions(rows).to_torch()
    g_next = feat.transitions(rows, next_state=True).to_torch()
    anchor, new, op = (torch.from_numpy(x) for x in feat.actions(rows["op"], rows["anchor"], rows["new"]))
    reward = torch.from_numpy(np.asarray(rows["reward"], np.float32))
    done = torch.from_numpy(np.asarray(rows["done"], np.float32))
    return g, g_next, anchor, new, op, reward, done


def evaluate(core, feat, rows, batch: int = 512) -> dict:
    """Held-out value error: MAPE of min(Q1, Q2)(s, a) and of V(s) against the discounted return."""
    import numpy as np
    import torch

    from raylake.learn.iql import mape

    n = len(rows["ret"])
    qs, vs = [], []
    core.eval()
    with torch.no_grad():
        for lo in range(0, n, batch):
            part = {k: v[lo:lo + batch] for k, v in rows.items()}
            g = feat.transitions(part).to_torch()
            anchor, new, op = (torch.from_numpy(x) for x in feat.actions(part["op"], part["anchor"], part["new"]))
            q1, q2, v = core(g, anchor, new, op)
            qs.append(torch.minimum(q1, q2))
            vs.append(v)
    core.train()
    ret = torch.from_numpy(np.asarray(rows["ret"], np.float32))
    q, v = torch.cat(qs), torch.cat(vs)
    return {"val_mape_q": mape(q, ret), "val_mape_v": mape(v, ret), "val_n": n}


def _train_loop(config: dict) -> None:
    import ray.train
    import torch

    from raylake.learn.features import Featurizer
    from raylake.learn.iql import IQL, IQLConfig
    from raylake.learn.lake_arrays import LakeArrays
    from raylake.learn.model import ModelConfig, QVNet

    torch.set_num_threads(config["threads"])  # oversubscribed intra-op threads slow small graphs 10-100x
    ctx = ray.train.get_context()
    rank = ctx.get_world_rank()
    torch.manual_seed(config["seed"] + rank)
    arrays = LakeArrays.load(os.path.join(config["traj_dir"], "lake"))
    feat = Featurizer(arrays)
    mcfg = ModelConfig(**config["model"])
    icfg = IQLConfig(**config["iql"])
    core = QVNet(mcfg)
    # a batch without, say, union edges leaves that conv's weights without gradient: DDP must allow it
    model = (ray.train.torch.prepare_model(core, parallel_strategy_kwargs={"find_unused_parameters": True})
             if ctx.get_world_size() > 1 else core)
    import ray.data

    ray.data.DataContext.get_current().enable_progress_bars = False  # rank logs carry the progress
    learner = IQL(model, icfg, core=core)
    ckpt = ray.train.get_checkpoint()
    resume_path = ckpt.path if ckpt is not None else config.get("resume_from")
    if resume_path:
        state = load_tensors(os.path.join(resume_path, "state.pt"))
        learner.load_state_dict(state)
    val_rows = None
    if rank == 0:
        val = ray.train.get_dataset_shard("val")
        for b in val.iter_batches(batch_size=config["eval_rows"], batch_format="numpy"):
            val_rows = b
            break
    shard = ray.train.get_dataset_shard("train")
    metrics_path = os.path.join(config["model_dir"], "metrics.jsonl")
    t0 = time.perf_counter()
    steps_done0 = learner.step
    last = {}
    while learner.step < config["steps"]:
        for rows in shard.iter_batches(batch_size=icfg.batch_size, batch_format="numpy", drop_last=True,
                                       local_shuffle_buffer_size=config["shuffle_buffer"], local_shuffle_seed=config["seed"] + rank + learner.step):
            last = learner.update(*_to_tensors(feat, rows))
            step = learner.step
            if step % config["eval_every"] == 0 or step >= config["steps"]:
                elapsed = time.perf_counter() - t0
                m = {"step": step, **last, "steps_per_s": (step - steps_done0) / elapsed, "elapsed_s": elapsed}
                checkpoint = None
                if rank == 0:
                    if val_rows is not None and len(val_rows["ret"]):
                        m.update(evaluate(core, feat, val_rows))
                    print("train " + " ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in m.items()), flush=True)
                    with open(metrics_path, "a") as f:
                        f.write(json.dumps(m) + "\n")
                    d = os.path.join(config["model_dir"], "tmp_ckpt", f"step_{step:08d}")
                    os.makedirs(d, exist_ok=True)
                    torch.save(learner.state_dict(), os.path.join(d, "state.pt"))
                    with open(os.path.join(d, "model.json"), "w") as f:
                        json.dump({"model": mcfg.to_dict(), "iql": icfg.to_dict(), "step": step, "build_id": arrays.build_id}, f)
                    checkpoint = ray.train.Checkpoint.from_directory(d)
                ray.train.report({k: v for k, v in m.items() if isinstance(v, (int, float))}, checkpoint=checkpoint)
            if learner.step >= config["steps"]:
                break
        else:
            continue
        break


def _held_out(batch):
    import numpy as np

    return np.asarray(batch["traj"]) % 10 == 0


def _keep_train(batch):
    import pyarrow as pa

    return batch.filter(pa.array(~_held_out(batch)))


def _keep_held_out(batch):
    import pyarrow as pa

    return batch.filter(pa.array(_held_out(batch)))


def latest_checkpoint(model_dir: str) -> str | None:
    """The newest persisted checkpoint under ``model_dir`` (by step), or None."""
    found = glob.glob(os.path.join(model_dir, "ray", "*", "checkpoint_*", "state.pt"))
    if not found:
        return None
    def step(p):
        try:
            with open(os.path.join(os.path.dirname(p), "model.json")) as f:
                return int(json.load(f)["step"])
        except (OSError, ValueError, KeyError, TypeError):
            return -1  # a checkpoint without its step is the last choice
    return os.path.dirname(max(found, key=step))


def train(traj_dir: str, model_dir: str, cfg: TrainConfig | None = None, *, address: str | None = None) -> dict:
    """Fit Q/V on the shards of ``traj_dir`` with ``cfg.workers`` Ray Train workers; export to ``model_dir``."""
    import ray
    import ray.data
    from ray.train import CheckpointConfig, DataConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchTrainer

    cfg = cfg or TrainConfig()
    shards = os.path.join(traj_dir, "shards")
    if not glob.glob(os.path.join(shards, "*.parquet")):
        raise RaylakeError(f"no trajectory shards in {shards!r}: run `raylake trajectories INDEX_DIR --out {traj_dir}` first")
    if cfg.steps < 1 or cfg.workers < 1:
        raise RaylakeError("--steps and --workers must be at least 1")
    model_dir = os.path.abspath(model_dir)
    os.makedirs(model_dir, exist_ok=True)
    resume_from = latest_checkpoint(model_dir) if cfg.resume else None
    if resume_from:
        load_tensors(os.path.join(resume_from, "state.pt"))  # refused here, in one line, not deep in a Ray Train worker
    if not cfg.resume:
        for p in ("ray", "tmp_ckpt", "metrics.jsonl"):
            q = os.path.join(model_dir, p)
            if os.path.isdir(q):
                shutil.rmtree(q)
            elif os.path.exists(q):
                os.remove(q)
    start_ray(address, log_to_driver=True)  # Ray Train's workers report through their logs
    ds = ray.data.read_parquet(shards)
    train_ds = ds.map_batches(_keep_train, batch_format="pyarrow")
    val_ds = ds.map_batches(_keep_held_out, batch_format="pyarrow")
    cfg.iql.total_steps = cfg.steps
    loop_cfg = {
        "traj_dir": os.path.abspath(traj_dir), "model_dir": model_dir, "steps": cfg.steps, "eval_every": cfg.eval_every,
        "eval_rows": cfg.eval_rows, "threads": cfg.threads, "shuffle_buffer": cfg.shuffle_buffer, "seed": cfg.seed,
        "model": cfg.model.to_dict(), "iql": cfg.iql.to_dict(), "resume_from": resume_from,
    }
    cpus = cfg.cpus_per_worker
    if cpus is None:
        # Ray Data's read/filter tasks need a CPU too: on a small machine workers holding every
        # CPU would wait forever for their first batch
        total = float(ray.cluster_resources().get("CPU", 1))
        cpus = 1.0 if total >= cfg.workers + 1 else max(0.1, (total - 1) / cfg.workers)
    t0 = time.perf_counter()
    trainer = TorchTrainer(
        _train_loop,
        train_loop_config=loop_cfg,
        scaling_config=ScalingConfig(num_workers=cfg.workers, use_gpu=cfg.use_gpu, resources_per_worker={"CPU": cpus}),
        run_config=RunConfig(name="train", storage_path=os.path.join(model_dir, "ray"),
                             checkpoint_config=CheckpointConfig(num_to_keep=2)),
        datasets={"train": train_ds, "val": val_ds},
        dataset_config=DataConfig(datasets_to_split=["train"]),
    )
    result = trainer.fit()
    wall = time.perf_counter() - t0
    if result.checkpoint is None:
        raise RaylakeError(f"training ended without a checkpoint: {result.error}")
    export(result.checkpoint.path, model_dir)
    shutil.rmtree(os.path.join(model_dir, "tmp_ckpt"), ignore_errors=True)
    metrics = []
    mp = os.path.join(model_dir, "metrics.jsonl")
    if os.path.exists(mp):
        with open(mp) as f:
            metrics = [json.loads(l) for l in f if l.strip()]
    summary = {"model_dir": model_dir, "checkpoint": result.checkpoint.path, "workers": cfg.workers, "steps": cfg.steps,
               "wall_s": round(wall, 2), "metrics": metrics[-1] if metrics else {}, "first": metrics[0] if metrics else {},
               "resumed_from": resume_from, "config": {k: v for k, v in asdict(cfg).items()}}
    with open(os.path.join(model_dir, "train_summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    return summary


def export(checkpoint_dir: str, model_dir: str) -> None:
    """Write ``model.pt`` (online weights) and ``model.json`` (configs, step, index build) for QScorer."""
    import torch

    state = load_tensors(os.path.join(checkpoint_dir, "state.pt"))
    torch.save(state["model"], os.path.join(model_dir, "model.pt.tmp"))
    os.replace(os.path.join(model_dir, "model.pt.tmp"), os.path.join(model_dir, "model.pt"))
    shutil.copyfile(os.path.join(checkpoint_dir, "model.json"), os.path.join(model_dir, "model.json"))
