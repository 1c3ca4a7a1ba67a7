"""Run methods over a questions file and score them (the engine of ``python -m bench.retrieval``).

For every method, in the order given: build it over the shared :class:`BenchContext`,
warm it up on a fixed sentence (model load, numba compilation — not timed), then for each
question time ``prepare`` once and ``select`` once per budget; a budget's latency is
prepare + select. Every returned list is checked (at most L distinct paths of the index)
— a violation is a bug in the method and stops the run. Results are rewritten after each
method, so a long run that is stopped keeps what it finished.
"""
from __future__ import annotations

import json
import os
import platform
import random
import subprocess
import sys
import time

from bench.retrieval.base import BenchContext
from bench.retrieval.metrics import aggregate
from raylake.errors import RaylakeError
from raylake.questions import read_questions

METHODS = ("dense", "bm25", "hybrid", "greedy", "jar", "exact", "raylake")
WARMUP = "which rows of the first table have the largest value"


def method_class(name: str):
    if name == "dense":
        from bench.retrieval.dense import Dense as cls
    elif name == "bm25":
        from bench.retrieval.bm25 import BM25 as cls
    elif name == "hybrid":
        from bench.retrieval.hybrid import Hybrid as cls
    elif name == "greedy":
        from bench.retrieval.greedy import Greedy as cls
    elif name == "jar":
        from bench.retrieval.jar import JAR as cls
    elif name == "exact":
        from bench.retrieval.exact import Exact as cls
    elif name == "raylake":
        from bench.retrieval.raylake_ask import Raylake as cls
    elif name == "raylake_q":  # not in 'all': it needs a trained model
        from bench.retrieval.raylake_ask import RaylakeQ as cls
    else:
        raise RaylakeError(f"unknown method {name!r}; choose from {', '.join(METHODS)}, raylake_q or 'all'")
    return cls


def load_questions(path: str, lake: str | None = None) -> list[dict]:
    """``id``, ``question`` and ``gold_tables`` of every line (:mod:`raylake.questions`, ids and
    gold tables required); with ``lake``, every gold table must exist under it."""
    if not os.path.isfile(path):
        raise RaylakeError(f"questions file {path!r} does not exist")
    out, seen = [], set()
    for q in read_questions(path, need_id=True, need_gold=True):
        if str(q.id) in seen:  # 1 and "1" are one id here: the results key questions by text
            raise RaylakeError(f"{path}:{q.line}: duplicate id {str(q.id)!r}")
        seen.add(str(q.id))
        if lake is not None:
            missing = [g for g in q.gold_tables if not os.path.exists(os.path.join(lake, g))]
            if missing:
                raise RaylakeError(f"{path}:{q.line}: gold table {missing[0]!r} is not in lake {lake!r} "
                                   "(paths are relative to the lake root)")
        out.append({"id": str(q.id), "question": q.question, "gold_tables": q.gold_tables})
    return out


def seeded_order(questions: list[dict], seed: int) -> list[int]:
    order = list(range(len(questions)))
    random.Random(seed).shuffle(order)
    return order


def git_commit() -> str | None:
    """HEAD of this checkout, marked when raylake/ has uncommitted changes (None outside git)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--", "raylake"], capture_output=True, text=True, timeout=10).stdout.strip()
        return head + ("+dirty(raylake/)" if dirty else "") if head else None
    except (OSError, subprocess.SubprocessError):
        return None


def _write(path: str, obj: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1, sort_keys=False)
    os.replace(tmp, path)


def run(index_dir: str, questions: list[dict], budgets: list[int], methods: list[str], out: str | None = None,
        subsets: dict[str, int] | None = None, seed: int = 0, params: dict[str, dict] | None = None,
        meta_extra: dict | None = None, progress: bool = True, ctx: BenchContext | None = None, checkpoint: int = 25) -> dict:
    """Run ``methods`` and return (and write to ``out``) the results object."""
    subsets = subsets or {}
    params = params or {}
    budgets = sorted(set(int(b) for b in budgets))
    if not budgets or budgets[0] < 1:
        raise RaylakeError("--budgets must be positive integers")
    for m in methods:
        method_class(m)
    ctx = ctx or BenchContext(index_dir)
    known = set(ctx.paths)
    t_start = time.time()
    result = {
        "methods": {},
        "predictions": {},
        "latencies_ms": {},
        "meta": {
            "index_dir": os.path.abspath(index_dir),
            "lake_root": ctx.index.lake_root,
            "n_tables": ctx.index.n_tables,
            "n_questions": len(questions),
            "budgets": budgets,
            "seed": seed,
            "git_commit": git_commit(),
            "host": {"cpus": os.cpu_count(), "python": platform.python_version(), "loadavg_start": list(os.getloadavg())},
            "gold_not_indexed": sum(1 for q in questions for g in q["gold_tables"] if g not in known),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start)),
            "started_unix": t_start,
            "method": {},
            **(meta_extra or {}),
        },
    }
    order = seeded_order(questions, seed)
    for name in methods:
        qs = questions
        if name in subsets and subsets[name] < len(questions):
            keep = set(order[: subsets[name]])
            qs = [q for i, q in enumerate(questions) if i in keep]
        t0 = time.perf_counter()
        method = method_class(name)(ctx, **params.get(name, {}))
        ctx.index.embedder.clear_cache()
        warm = method.prepare(WARMUP)
        for b in budgets:
            method.select(warm, b)
        setup_s = time.perf_counter() - t0
        _reset_stats(method)
        preds = {str(b): {} for b in budgets}
        lats = {str(b): {} for b in budgets}
        t_run = time.perf_counter()
        rank = {id(q): r for r, q in enumerate(questions[i] for i in order)}
        qs = sorted(qs, key=lambda q: rank[id(q)])  # seeded order: every prefix of the run is a random sample
        for k, q in enumerate(qs):
            ctx.index.embedder.clear_cache()  # cold: no method profits from another's embeddings
            t = time.perf_counter()
            prep = method.prepare(q["question"])
            prep_ms = (time.perf_counter() - t) * 1e3
            for b in budgets:
                t = time.perf_counter()
                tables = method.select(prep, b)
                ms = prep_ms + (time.perf_counter() - t) * 1e3
                _check(name, q["id"], tables, b, known)
                preds[str(b)][q["id"]] = list(tables)
                lats[str(b)][q["id"]] = round(ms, 3)
            if (k + 1) % checkpoint == 0 and k + 1 < len(qs):
                el = time.perf_counter() - t_run
                if progress:
                    print(f"[{name}] {k + 1}/{len(qs)} questions, {el:.0f}s, {el / (k + 1):.2f}s/question", file=sys.stderr, flush=True)
                if out:  # a stopped run keeps a seeded random sample of this method's questions
                    _record(result, name, qs[: k + 1], budgets, preds, lats, el, setup_s, method, len(questions), seed, partial=True)
                    _write(out, result)
        wall = time.perf_counter() - t_run
        _record(result, name, qs, budgets, preds, lats, wall, setup_s, method, len(questions), seed, partial=False)
        if progress:
            f1 = {b: round(result["methods"][name]["L"][str(b)]["f1"], 3) for b in budgets}
            print(f"[{name}] done: {len(qs)} questions in {wall:.0f}s; F1 {f1}", file=sys.stderr, flush=True)
        if out:
            _write(out, result)
    return result


def _record(result, name, qs, budgets, preds, lats, wall, setup_s, method, n_all, seed, partial) -> None:
    """Store one method's metrics, predictions, latencies and meta (``partial``: a checkpoint)."""
    ids = [q["id"] for q in qs]
    gold = {q["id"]: q["gold_tables"] for q in qs}
    preds = {b: {i: p[i] for i in ids} for b, p in preds.items()}
    lats = {b: {i: p[i] for i in ids} for b, p in lats.items()}
    result["methods"][name] = {
        "L": {
            str(b): aggregate([gold[i] for i in gold], [preds[str(b)][i] for i in gold], [lats[str(b)][i] for i in gold])
            for b in budgets
        }
    }
    result["predictions"][name] = preds
    result["latencies_ms"][name] = lats
    result["meta"]["method"][name] = {
        "n_questions": len(qs),
        "subset": (f"seeded subset of {len(qs)} (seed {seed})" if len(qs) < n_all else None),
        "partial": partial,
        "wall_s": round(wall, 2),
        "setup_s": round(setup_s, 2),
        "params": method.describe(),
        "stats": _summarise(method.stats),
    }
    result["meta"]["setup_ms"] = dict(method.ctx.setup_ms)
    result["meta"]["wall_s"] = round(time.time() - result["meta"]["started_unix"], 2)
    result["meta"]["host"]["loadavg_end"] = list(os.getloadavg())


def _reset_stats(method) -> None:
    for k, v in list(method.stats.items()):
        method.stats[k] = [] if isinstance(v, list) else 0


def _summarise(stats: dict) -> dict:
    out = {}
    for k, v in stats.items():
        if isinstance(v, list):
            if v:
                out[k] = {str(x): v.count(x) for x in sorted(set(v))}
        else:
            out[k] = v
    return out


def _check(name: str, qid: str, tables, budget: int, known: set) -> None:
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise RaylakeError(f"method {name} returned {type(tables).__name__} for {qid}, not a list of paths")
    if len(tables) > budget:
        raise RaylakeError(f"method {name} returned {len(tables)} tables for {qid} at L={budget}")
    if len(set(tables)) != len(tables):
        raise RaylakeError(f"method {name} returned a table twice for {qid}")
    bad = [t for t in tables if t not in known]
    if bad:
        raise RaylakeError(f"method {name} returned {bad[0]!r} for {qid}, which is not a table of the index")
