"""GRAFT Algorithm 1: self-generated trajectories for offline IQL (Sec. 4.1, Eq. 7), on Ray.

Per METIS part of the lake graph G_D:

- **Stage 1** — degree-stratified seeding: the part's tables (those with at least one
  structural edge) sorted by degree and cut into J quantile bins; each round draws one
  seed per bin, so hubs do not dominate the corpus.
- **Stage 2a** — centrality expansion: from the seed, each new table u is drawn from the
  frontier with probability ∝ C(u) = α·ω_⋈(u, V_T⁺) + (1−α)·ω_∪(u, V_T⁺), the summed join
  and union scores from u to the current set; the action records the best (operator,
  anchor) pair that connects u (:mod:`raylake.learn.expand`, with the two ablation samplers).
  Size L is drawn per trajectory from [min_tables, max_tables].
- **Stage 2b** — columns and values: key columns K(T) on join edges to the other sampled
  tables are always kept, ⌈β·|payload|⌉ payload columns are drawn uniformly, and each kept
  text column carries its value literal.
- **Stage 3** — G_I = C(H⁺) (:mod:`raylake.learn.compress`, Algorithm 2) and the terminal
  reward r_T = U_IGMS(G_I, H⁺) (:mod:`raylake.learn.pseudo_reward`).
- **Stage 4** — unrolling into transitions (s_t, a_t, r_t, s_{t+1}) with r_t = r_T only at
  the last step (Eq. 7). Our addition: step 0 is the ``start`` action that places the seed,
  so the value network also learns to score first tables.

Two ablation samplers (Table 8): ``uniform`` — uniform seeds and a uniform random walk over
G_D; ``anchor_only`` — stratified seeds, then a uniformly drawn anchor in V_T⁺ and a uniform
neighbour of it (no centrality bias).

Each Ray task handles one (part, seed batch) and writes one Parquet shard; its random
stream is seeded by (seed, sampler, part, batch), so a run is reproducible shard by shard.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from raylake.config import IGMSConfig, RaylakeContext
from raylake.errors import RaylakeError
from raylake.learn.compress import Subgraph, compress
from raylake.learn.expand import EXPAND
from raylake.learn.lake_arrays import LakeArrays
from raylake.learn.pseudo_reward import RewardBatch, pseudo_reward
from raylake.runtime import start_ray

SAMPLERS = ("centrality", "uniform", "anchor_only")
OPS = {"start": 0, "join": 1, "union": 2}


@dataclass
class TrajectoryConfig:
    n_trajectories: int = 200_000  # T: trajectories in all (paper default 200K, Fig. 3a)
    sampler: str = "centrality"  # centrality (Alg. 1) | uniform | anchor_only (Table 8 ablations)
    quantiles: int = 10  # J: degree quantiles per METIS part, one seed from each per round
    min_tables: int = 2  # smallest subgraph drawn (a single table has no structure to learn)
    max_tables: int = 6  # L: largest subgraph; L ~ U[min_tables, max_tables] per trajectory
    alpha: float = 0.7  # α: weight of join mass against union mass in the centrality C(u)
    beta: float = 0.5  # β: share of payload columns sampled per table
    min_join: float = field(default_factory=lambda: RaylakeContext.get_current().learn.min_join)  # join links below this score are not structural edges of H⁺
    gamma: float = 0.8  # γ: discount of the Monte-Carlo return stored per transition (value error targets)
    seed: int = 0  # base seed; a shard's stream is (seed, sampler, part, batch)
    batch: int = 2_000  # trajectories per Ray task and Parquet shard
    parts: int | None = None  # re-partition G_D with METIS into this many parts (None: the index's parts)
    workers: int | None = None  # tasks in flight at once (None: as many as Ray has CPUs)
    igms: IGMSConfig = field(default_factory=IGMSConfig)  # reward parameters (same as search)

    def validate(self) -> None:
        if self.sampler not in SAMPLERS:
            raise RaylakeError(f"--sampler must be one of {', '.join(SAMPLERS)}, got {self.sampler!r}")
        if self.n_trajectories < 1:
            raise RaylakeError(f"--count must be at least 1, got {self.n_trajectories}")
        if not 1 <= self.min_tables <= self.max_tables:
            raise RaylakeError(f"need 1 <= min tables <= max tables, got {self.min_tables}..{self.max_tables}")
        if not 0.0 <= self.alpha <= 1.0 or not 0.0 <= self.beta <= 1.0:
            raise RaylakeError("--alpha and --beta must lie in [0, 1]")
        if self.batch < 1 or self.quantiles < 1:
            raise RaylakeError("--batch and --quantiles must be at least 1")


# --------------------------------------------------------------------------- Stage 1: seeds


def seed_bins(arrays: LakeArrays, part_of: np.ndarray, part: int, quantiles: int) -> list[np.ndarray]:
    """The part's expandable tables, sorted by degree and cut into ``quantiles`` bins."""
    tables = np.flatnonzero(part_of == part)
    tables = np.asarray([t for t in tables if arrays.degree(int(t)) > 0], np.int64)
    if tables.size == 0:
        return []
    deg = np.asarray([arrays.degree(int(t)) for t in tables])
    order = tables[np.argsort(deg, kind="stable")]
    return [b for b in np.array_split(order, min(quantiles, order.size)) if b.size]


# --------------------------------------------------------------------------- Stage 2b: columns


def sample_columns(arrays: LakeArrays, tables: list[int], beta: float, rng) -> Subgraph:
    """H⁺ over ``tables``: keys always, ⌈β·|payload|⌉ payload columns, value literals, edges among them."""
    inset = set(tables)
    keys: dict[int, set[int]] = {t: set() for t in tables}
    joins = []
    order = {t: i for i, t in enumerate(tables)}
    for i, t in enumerate(tables):
        for u, links in arrays.join[t].items():
            if u in inset and order[u] > i:
                for s, c, d in links:
                    keys[t].add(c)
                    keys[u].add(d)
                    joins.append((t, c, u, d, s))
    unions = [(t, u) for i, t in enumerate(tables) for u in arrays.union[t] if u in inset and order[u] > i]
    columns, values = {}, {}
    table_cols = arrays.py.table_cols
    for t in tables:
        kt = keys[t]
        payload = [c for c in table_cols[t] if c not in kt]
        k = math.ceil(beta * len(payload))
        picked = sorted(payload[i] for i in np.argsort(rng.random(len(payload)))[:k]) if k else []
        kept = sorted(keys[t]) + picked
        columns[t] = kept
        for c in kept:
            v = arrays.value_text[c]
            if v is not None:
                values[c] = v
    return Subgraph(list(tables), columns, keys, values, joins, unions)


# --------------------------------------------------------------------------- one trajectory


def plan_links(comp, actions) -> list[tuple]:
    """The plan tree over the clusters of C(H⁺): (cluster, parent cluster, score, join keys or None)."""
    cluster_of = {t: m for m, ts in enumerate(comp.clusters) for t in ts}
    seen, links = set(), []
    for op, anchor, new, link in actions:
        k = cluster_of[new]
        if k in seen:
            continue
        seen.add(k)
        if anchor is None:
            continue
        p = cluster_of[anchor]
        if p == k:
            continue
        if op == "join":
            links.append((k, p, link[0], (link[1], link[2])))
        else:  # unreachable in practice: a union edge puts both tables in one cluster
            links.append((k, p, 1.0, None))
    return links


def sample_trajectory(arrays: LakeArrays, seed: int, cfg: TrajectoryConfig, rng) -> dict:
    """Algorithm 1 for one seed up to the reward: actions, H⁺, C(H⁺) and the plan links."""
    size = int(rng.integers(cfg.min_tables, cfg.max_tables + 1))
    actions = EXPAND[cfg.sampler](arrays, seed, size, cfg.alpha, rng)
    tables = [a[2] for a in actions]
    h = sample_columns(arrays, tables, cfg.beta, rng)
    comp = compress(h, arrays)
    return {"actions": actions, "h": h, "comp": comp, "links": plan_links(comp, actions)}


def trajectory(arrays: LakeArrays, seed: int, cfg: TrajectoryConfig, rng) -> dict:
    """Algorithm 1 for one seed: actions, H⁺, C(H⁺) and the terminal reward."""
    tr = sample_trajectory(arrays, seed, cfg, rng)
    comp = tr["comp"]
    tr["reward"] = pseudo_reward(arrays, comp, comp.clusters, tr["links"], cfg.igms)
    return tr


# --------------------------------------------------------------------------- Stage 4: a shard


SCHEMA_FIELDS = ("traj", "t", "part", "state", "op", "anchor", "new", "anchor_col", "new_col", "next_state",
                 "reward", "done", "ret", "value", "atom_kind", "atom_ref", "edge_src", "edge_dst", "edge_kind", "intent")


def _schema():
    import pyarrow as pa

    i32, l32 = pa.int32(), pa.list_(pa.int32())
    return pa.schema([
        ("traj", pa.int64()), ("t", pa.int16()), ("part", pa.int32()), ("state", l32), ("op", pa.int8()),
        ("anchor", i32), ("new", i32), ("anchor_col", i32), ("new_col", i32), ("next_state", l32),
        ("reward", pa.float32()), ("done", pa.bool_()), ("ret", pa.float32()), ("value", pa.float32()),
        ("atom_kind", pa.list_(pa.int8())), ("atom_ref", l32), ("edge_src", pa.list_(pa.int16())),
        ("edge_dst", pa.list_(pa.int16())), ("edge_kind", pa.list_(pa.int8())), ("intent", pa.string()),
    ])


def generate_batch(arrays: LakeArrays, cfg: TrajectoryConfig, part: int, batch: int, count: int,
                   bins: list[np.ndarray], path: str | None = None) -> dict:
    """Trajectories of one (part, seed batch); writes a Parquet shard at ``path`` when given.

    Returns counts and timings (and the rows themselves when ``path`` is None, for tests).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng([cfg.seed, SAMPLERS.index(cfg.sampler), part, batch])
    cols: dict[str, list] = {k: [] for k in SCHEMA_FIELDS}
    pool = np.concatenate(bins) if bins else np.zeros(0, np.int64)
    t0, c0 = time.perf_counter(), time.thread_time()
    rb = RewardBatch(arrays, cfg.igms)
    steps = []  # actions per trajectory; the rewards come from one kernel call at the end
    c_traj, c_t, c_state, c_op, c_anchor, c_new = (cols[k] for k in ("traj", "t", "state", "op", "anchor", "new"))
    c_acol, c_ncol, c_next, c_done = (cols[k] for k in ("anchor_col", "new_col", "next_state", "done"))
    for i in range(count):
        if cfg.sampler == "uniform":
            seed = int(pool[rng.integers(pool.size)])
        else:
            b = bins[(batch * count + i) % len(bins)]
            seed = int(b[rng.integers(b.size)])
        tr = sample_trajectory(arrays, seed, cfg, rng)
        comp = tr["comp"]
        rb.add(comp, comp.clusters, tr["links"])
        actions = tr["actions"]
        n = len(actions)
        steps.append(n)
        traj_id = (part << 40) | (batch << 20) | i
        c_traj += [traj_id] * n
        c_t += range(n)
        state: list[int] = []
        for op, anchor, new, link in actions:
            nxt = state + [new]
            c_state.append(state)
            c_op.append(OPS[op])
            c_anchor.append(-1 if anchor is None else anchor)
            c_new.append(new)
            if op == "join":
                c_acol.append(link[1])
                c_ncol.append(link[2])
            else:
                c_acol.append(-1)
                c_ncol.append(-1)
            c_next.append(nxt)
            state = nxt
        c_done += [False] * (n - 1) + [True]
        cols["part"] += [part] * n
        cols["atom_kind"] += [comp.atom_kind] * n
        cols["atom_ref"] += [comp.atom_ref] * n
        edges = comp.atom_edges
        cols["edge_src"] += [[e[0] for e in edges]] * n
        cols["edge_dst"] += [[e[1] for e in edges]] * n
        cols["edge_kind"] += [[e[2] for e in edges]] * n
        cols["intent"] += [comp.intent.dumps()] * n
    rewards = rb.compute().tolist()
    g = cfg.gamma
    for r, n in zip(rewards, steps):  # sparse terminal reward, Monte-Carlo return per step (Eq. 7)
        cols["reward"] += [0.0] * (n - 1) + [r]
        cols["ret"] += [r * g ** (n - 1 - t) for t in range(n)]
        cols["value"] += [r] * n
    n_trans = sum(steps)
    gen_s, gen_cpu_s = time.perf_counter() - t0, time.thread_time() - c0
    out = {"part": part, "batch": batch, "trajectories": count, "transitions": n_trans, "generate_s": gen_s,
           "generate_cpu_s": gen_cpu_s,
           "reward_mean": float(np.mean(rewards)) if rewards else 0.0, "reward_std": float(np.std(rewards)) if rewards else 0.0}
    table = pa.table(cols, schema=_schema())
    if path is None:
        out["table"] = table
        return out
    t1, c1 = time.perf_counter(), time.process_time()
    tmp = path + ".tmp"
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)
    out["write_s"] = time.perf_counter() - t1
    out["write_cpu_s"] = time.process_time() - c1
    out["path"] = path
    out["bytes"] = os.path.getsize(path)
    return out


# --------------------------------------------------------------------------- the job

_WORKER_ARRAYS: dict[str, LakeArrays] = {}  # object ref → arrays, one lake per worker process


def _batch_task(arrays_box: list, *args) -> dict:
    """A Ray task: :func:`generate_batch` on the lake arrays, deserialised once per worker process.

    The arrays travel boxed in a list so Ray does not resolve (and unpickle: ~0.4 s of dicts
    for Spider, a third of a 2,000-trajectory task) them for every task; the worker keeps the
    last lake it saw (and its numba view, ``LakeArrays.flat``) for the tasks that follow.
    """
    import ray

    c0 = time.process_time()  # the task's CPU, unboxing included
    ref = arrays_box[0]
    key = ref.hex()
    arrays = _WORKER_ARRAYS.get(key)
    if arrays is None:
        _WORKER_ARRAYS.clear()
        arrays = _WORKER_ARRAYS[key] = ray.get(ref)
    out = generate_batch(arrays, *args)
    out["task_cpu_s"] = time.process_time() - c0
    return out


def lake_arrays(index_dir: str, out_dir: str | None, cfg: TrajectoryConfig) -> LakeArrays:
    """LakeArrays of the index, cached under ``out_dir/lake`` (reused while the build is the same)."""
    from raylake.index.reader import LakeIndex

    index = LakeIndex.load(index_dir)
    cache = os.path.join(out_dir, "lake") if out_dir else None
    if cache and os.path.exists(os.path.join(cache, "lake.json")):
        arrays = LakeArrays.load(cache)
        if arrays.build_id == os.path.basename(index.build) and arrays.min_join == cfg.min_join:
            return arrays
    arrays = LakeArrays.from_index(index, min_join=cfg.min_join, igms=cfg.igms)
    if cache:
        arrays.save(cache)
    return arrays


def plan_tasks(arrays: LakeArrays, cfg: TrajectoryConfig) -> tuple[np.ndarray, list[tuple[int, int, int, list]]]:
    """(part of each table, [(part, batch, count, bins)]): trajectories split by part size, then in batches."""
    part_of = arrays.part
    if cfg.parts is not None and cfg.parts != int(part_of.max()) + 1:
        from raylake.index.partition import partition_tables

        edges = [{"src_table": arrays.paths[t], "dst_table": arrays.paths[u], "score": links[0][0]}
                 for t in range(arrays.n_tables) for u, links in arrays.join[t].items() if t < u]
        edges += [{"src_table": arrays.paths[t], "dst_table": arrays.paths[u], "score": s}
                  for t in range(arrays.n_tables) for u, (s, _m) in arrays.union[t].items() if t < u]
        part_of = partition_tables(arrays.paths, edges, cfg.parts)
    parts = sorted(set(int(p) for p in part_of))
    bins = {p: seed_bins(arrays, part_of, p, cfg.quantiles) for p in parts}
    sizes = {p: sum(b.size for b in bins[p]) for p in parts}
    total = sum(sizes.values())
    if total == 0:
        raise RaylakeError("no table of the index has a join or union edge: there is nothing to expand from")
    # trajectories per part ∝ expandable tables (largest remainder)
    raw = {p: cfg.n_trajectories * sizes[p] / total for p in parts}
    alloc = {p: int(raw[p]) for p in parts}
    for p in sorted(parts, key=lambda p: -(raw[p] - alloc[p]))[: cfg.n_trajectories - sum(alloc.values())]:
        alloc[p] += 1
    tasks = []
    for p in parts:
        n, b = alloc[p], 0
        while n > 0:
            k = min(cfg.batch, n)
            tasks.append((p, b, k, bins[p]))
            n -= k
            b += 1
    return part_of, tasks


def generate(index_dir: str | None, out_dir: str, cfg: TrajectoryConfig | None = None, *, arrays: LakeArrays | None = None,
             address: str | None = None, progress: bool = True) -> dict:
    """Run Algorithm 1 on Ray: one task per (part, seed batch), Parquet shards under ``out_dir/shards``."""
    import ray

    from raylake._progress import Progress

    cfg = cfg or TrajectoryConfig()
    cfg.validate()
    if arrays is None and (index_dir is None or not os.path.isdir(index_dir)):
        raise RaylakeError(f"no index at {index_dir!r}: build one with `raylake index LAKE --index-dir {index_dir}`")
    prog = Progress(progress)
    t0 = time.perf_counter()
    os.makedirs(out_dir, exist_ok=True)
    with prog.stage("arrays"):
        if arrays is None:
            arrays = lake_arrays(index_dir, out_dir, cfg)
        elif not os.path.exists(os.path.join(out_dir, "lake", "lake.json")):
            arrays.save(os.path.join(out_dir, "lake"))
    shard_dir = os.path.join(out_dir, "shards")
    os.makedirs(shard_dir, exist_ok=True)
    for f in os.listdir(shard_dir):  # a rerun replaces the corpus; a half-written one never mixes in
        os.remove(os.path.join(shard_dir, f))
    start_ray(address)
    part_of, tasks = plan_tasks(arrays, cfg)
    workers = cfg.workers or max(1, int(ray.available_resources().get("CPU", 1)))
    remote = ray.remote(num_cpus=1)(_batch_task)
    arrays_ref = ray.put(arrays)
    stats = []
    t1 = time.perf_counter()
    with prog.stage("generate"), prog.bar(cfg.n_trajectories, "trajectories", "traj") as bar:
        pending, todo = [], list(tasks)
        while todo or pending:
            while todo and len(pending) < workers:
                p, b, k, bins = todo.pop(0)
                path = os.path.join(shard_dir, f"part-{p:04d}-batch-{b:05d}.parquet")
                pending.append(remote.remote([arrays_ref], cfg, p, b, k, bins, path))
            done, pending = ray.wait(pending, num_returns=1)
            s = ray.get(done[0])
            stats.append(s)
            bar.update(s["trajectories"])
    gen_s = time.perf_counter() - t1
    n_traj = sum(s["trajectories"] for s in stats)
    n_trans = sum(s["transitions"] for s in stats)
    rmean = float(np.average([s["reward_mean"] for s in stats], weights=[s["trajectories"] for s in stats]))
    summary = {
        "out_dir": os.path.abspath(out_dir),
        "index_build": arrays.build_id,
        "sampler": cfg.sampler,
        "trajectories": n_traj,
        "transitions": n_trans,
        "shards": len(stats),
        "parts": int(len(set(int(p) for p in part_of))),
        "workers": workers,
        "bytes": int(sum(s.get("bytes", 0) for s in stats)),
        "reward_mean": rmean,
        "trajectories_per_s": n_traj / gen_s if gen_s > 0 else 0.0,
        # CPU seconds the tasks spent (generation alone, and with shard writing and unboxing):
        # on a shared machine they say what the rate would be with the cores to ourselves
        "generate_cpu_s": round(sum(s["generate_cpu_s"] for s in stats), 3),
        "task_cpu_s": round(sum(s.get("task_cpu_s", s["generate_cpu_s"]) for s in stats), 3),
        "generate_wall_s": round(gen_s, 3),
        "timings_s": {**prog.timings, "total": round(time.perf_counter() - t0, 3)},
        "config": {k: v for k, v in asdict(cfg).items() if k != "igms"} | {"igms": asdict(cfg.igms)},
    }
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary
