"""Load test of the search service (``raylake serve``) on localhost.

    python -m bench.loadtest --quick --json     # Spider lake only, < 3 min; last line: one JSON object
    python -m bench.loadtest                    # full: Spider + synthetic NYC-sized lake, batching, fault run

It starts a local Ray (2 CPUs) and Serve, deploys :func:`raylake.serve.app.build_app` over an
index, and drives it with two clients, both bounded in request count and in time:

- **closed loop**: ``C`` workers, each sending its next question when the previous answer
  arrives. Its throughput is the service's capacity (``sustained_qps``).
- **open loop**: requests at a fixed arrival rate, each on its own task, latency measured
  from the *scheduled* send time (no coordinated omission); a request unanswered after the
  client timeout, or still open when the run's drain time ends, is an error.

Full mode, per lake: the closed-loop capacity ``X``; an open-loop ladder at multiples of
``X``; the highest offered rate held with p99 ≤ 2 s and zero errors; the same with batching
off (``max_batch_size=1``); memory (PSS) per replica. On the Spider lake, a fault run kills
one replica's worker process (SIGKILL) during open-loop load and counts the errors until
Serve has replaced it. Questions come from the lake's ``questions.jsonl``, shuffled, never
repeated within a lake while any are left. Results: ``bench/results/loadtest.json`` and a
plot of latency against offered load (``bench/results/loadtest.png``).

The synthetic lake is :mod:`bench.synth` with ~1,200 tables and 800 questions, as EcoTable's
NYC lake, generated and indexed under ``/tmp/serve_idx/`` on first use (about 7 minutes on a
busy 2-core machine) and reused afterwards. ``--lakes nyc --nyc-tables 10000`` serves the
≈10× lake the same way (its cold index takes about half an hour on 2 cores and peaks at
3.9 GB, ``bench/results/index.json``; the generator is deterministic, so an index built by
``bench.index_bench --synthetic 10000`` can be reused by placing it under ``/tmp/serve_idx/nyc10000``).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
SPIDER_INDEX = os.environ.get("RAYLAKE_SPIDER_INDEX", ".raylake")  # the index `make demo` builds of the Spider lake
SPIDER_QUESTIONS = os.path.join(SHARED, "data", "spider_lake", "questions.jsonl")
WORK = "/tmp/serve_idx"
P99_TARGET_MS = 2000.0
T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[loadtest {time.monotonic() - T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- questions


class Questions:
    """Shuffled questions of a lake, handed out without repetition until all were used."""

    def __init__(self, path: str, seed: int = 0):
        with open(path, encoding="utf-8") as fh:
            self.items = [json.loads(line)["question"] for line in fh if line.strip()]
        random.Random(seed).shuffle(self.items)
        self.i = 0
        self.wrapped = 0

    def next(self) -> str:
        if self.i == len(self.items):
            self.i, self.wrapped = 0, self.wrapped + 1
        q = self.items[self.i]
        self.i += 1
        return q


# --------------------------------------------------------------------------- service


class Service:
    """A local Ray + Serve with the search app deployed over one index."""

    def __init__(self):
        from ray import serve

        from raylake.runtime import start_ray

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        start_ray(num_cpus=2)
        self.port = free_port()
        serve.start(http_options={"host": "127.0.0.1", "port": self.port}, logging_config={"log_level": "WARNING", "enable_access_log": False})
        self.url = f"http://127.0.0.1:{self.port}"
        self.cfg = None

    def deploy(self, index_dir: str, replicas: int = 2, max_batch_size: int = 8, timeout_s: float = 60.0) -> float:
        from ray import serve

        from raylake.serve.app import build_app
        from raylake.serve.config import ServeConfig

        try:
            serve.delete("raylake")
        except Exception:
            pass
        self.cfg = ServeConfig(index_dir=index_dir, port=self.port, replicas=replicas, replica_cpus=2 / replicas,
                               max_batch_size=max_batch_size, request_timeout_s=timeout_s)
        t = time.perf_counter()
        serve.run(build_app(self.cfg), name="raylake", route_prefix="/")
        took = time.perf_counter() - t
        log(f"deployed {replicas} replica(s), batch {max_batch_size}, over {index_dir} in {took:.1f} s")
        return took

    def replicas(self, want: int, within_s: float = 30.0) -> dict[str, int]:
        """``{replica id: pid}`` of live replicas, by asking /health until ``want`` were seen."""
        import requests

        seen: dict[str, int] = {}
        end = time.monotonic() + within_s
        while len(seen) < want and time.monotonic() < end:
            try:
                r = requests.get(self.url + "/health", timeout=5)
                if r.status_code == 200:
                    b = r.json()
                    seen[b["replica"]] = b["pid"]
            except Exception:
                time.sleep(0.2)
        return seen

    def memory_mb(self, pids: dict[str, int]) -> dict[str, dict]:
        import psutil

        out = {}
        for rid, pid in pids.items():
            try:
                info = psutil.Process(pid).memory_full_info()
                out[rid] = {"pss_mb": round(info.pss / 2**20, 1), "rss_mb": round(info.rss / 2**20, 1)}
            except Exception as exc:
                out[rid] = {"error": str(exc)}
        return out

    def metrics(self) -> str:
        import requests

        return requests.get(self.url + "/metrics", timeout=10).text

    def shutdown(self) -> None:
        import ray
        from ray import serve

        serve.shutdown()
        ray.shutdown()


# --------------------------------------------------------------------------- clients


async def _one(session, url: str, question: str, timeout_s: float) -> tuple[int | str, dict]:
    import aiohttp

    try:
        async with session.post(url + "/ask", json={"question": question}, timeout=aiohttp.ClientTimeout(total=timeout_s)) as r:
            body = await r.read()
            if r.status != 200:
                return r.status, {"body": body[:200].decode("utf-8", "replace")}
            return 200, {"batch_queue_ms": float(r.headers.get("X-Raylake-Queue-Ms", "nan")), "n_tables": len(json.loads(body).get("tables", []))}
    except asyncio.TimeoutError:
        return "timeout", {}
    except Exception as exc:  # connection reset while a replica dies, etc.
        return type(exc).__name__, {}


async def closed_loop(url: str, qs: Questions, concurrency: int, max_requests: int, max_s: float, timeout_s: float) -> dict:
    import aiohttp

    records = []
    start = time.monotonic()
    stop = start + max_s
    sent = 0

    async def worker(session):
        nonlocal sent
        while sent < max_requests and time.monotonic() < stop:
            sent += 1
            t = time.monotonic()
            status, info = await _one(session, url, qs.next(), min(timeout_s, max(1.0, stop + timeout_s - t)))
            records.append({"t": t - start, "ms": (time.monotonic() - t) * 1e3, "status": status, **info})

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    wall = time.monotonic() - start
    return {"mode": "closed", "concurrency": concurrency, **summarize(records, wall), "records": records}


async def open_loop(url: str, qs: Questions, rate: float, duration_s: float, timeout_s: float, max_requests: int = 10_000,
                    drain_s: float | None = None, at=None) -> dict:
    """Fixed arrival rate; ``at=(seconds, callback)`` runs ``callback`` once, that far into the run."""
    import aiohttp

    n = max(1, min(max_requests, int(rate * duration_s)))
    drain_s = timeout_s if drain_s is None else drain_s
    records = []
    start = time.monotonic()

    async def fire(session, k):
        sched = start + k / rate
        await asyncio.sleep(max(0.0, sched - time.monotonic()))
        status, info = await _one(session, url, qs.next(), timeout_s)
        records.append({"t": sched - start, "ms": (time.monotonic() - sched) * 1e3, "status": status, **info})

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        tasks = [asyncio.create_task(fire(session, k)) for k in range(n)]
        if at is not None:
            async def trigger():
                await asyncio.sleep(at[0])
                await asyncio.to_thread(at[1])
            tasks.append(asyncio.create_task(trigger()))
        done, pending = await asyncio.wait(tasks, timeout=n / rate + drain_s)
        for p in pending:
            p.cancel()
    unanswered = n - len(records)
    for _ in range(unanswered):
        records.append({"t": None, "ms": None, "status": "unanswered"})
    wall = time.monotonic() - start
    return {"mode": "open", "offered_qps": round(rate, 4), "duration_s": round(n / rate, 1), **summarize(records, wall), "records": records}


def summarize(records: list[dict], wall: float) -> dict:
    import numpy as np

    ok = [r["ms"] for r in records if r["status"] == 200]
    lat = np.asarray(ok) if ok else np.zeros(0)
    kinds: dict[str, int] = {}
    for r in records:
        if r["status"] != 200:
            kinds[str(r["status"])] = kinds.get(str(r["status"]), 0) + 1
    pct = (lambda q: round(float(np.percentile(lat, q)), 1) if len(lat) else None)
    queue = [r.get("batch_queue_ms") for r in records if r["status"] == 200 and r.get("batch_queue_ms") is not None]
    return {
        "requests": len(records), "ok": len(ok), "errors": len(records) - len(ok), "error_kinds": kinds,
        "wall_s": round(wall, 1), "throughput_qps": round(len(ok) / wall, 4) if wall else None,
        "p50_ms": pct(50), "p95_ms": pct(95), "p99_ms": pct(99), "max_ms": round(float(lat.max()), 1) if len(lat) else None,
        "mean_batch_queue_ms": round(float(np.nanmean(queue)), 1) if queue else None,
    }


def _strip(run: dict) -> dict:
    return {k: v for k, v in run.items() if k != "records"}


# --------------------------------------------------------------------------- experiments


def ladder(svc: Service, qs: Questions, capacity: float, factors, timeout_s: float, min_requests: int, max_step_s: float) -> list[dict]:
    steps = []
    for f in factors:
        rate = max(0.01, capacity * f)
        duration = min(max_step_s, max(20.0, min_requests / rate))
        run = asyncio.run(open_loop(svc.url, qs, rate, duration, timeout_s, drain_s=min(timeout_s, 30.0)))
        log(f"  open loop {rate:.3f} qps ({f:g}x) for {run['duration_s']} s: {run['ok']}/{run['requests']} ok, p50 {run['p50_ms']} "
            f"p99 {run['p99_ms']} ms, errors {run['error_kinds'] or 0}")
        steps.append({"factor": f, **_strip(run)})
    return steps


def held_rate(steps: list[dict]) -> float | None:
    good = [s["offered_qps"] for s in steps if s["errors"] == 0 and s["p99_ms"] is not None and s["p99_ms"] <= P99_TARGET_MS]
    return max(good) if good else None


def bench_lake(svc: Service, name: str, index_dir: str, qpath: str, args) -> dict:
    qs = Questions(qpath)
    out: dict = {"index_dir": index_dir, "questions": len(qs.items)}
    for batch in (8, 1):
        label = f"batch_{batch}"
        deploy_s = svc.deploy(index_dir, replicas=args.replicas, max_batch_size=batch, timeout_s=args.timeout)
        pids = svc.replicas(args.replicas)
        mem_idle = svc.memory_mb(pids)
        closed = asyncio.run(closed_loop(svc.url, qs, args.concurrency, args.closed_requests, args.closed_s, args.timeout))
        cap = closed["throughput_qps"] or 0.01
        log(f"{name} {label}: closed loop x{args.concurrency}: {closed['ok']}/{closed['requests']} ok, {cap:.3f} qps, "
            f"p50 {closed['p50_ms']} p99 {closed['p99_ms']} ms")
        factors = (0.25, 0.5, 0.75, 1.0, 1.5) if batch != 1 else (0.5, 1.0, 1.5)
        steps = ladder(svc, qs, cap, factors, args.timeout, args.step_requests, args.step_s)
        out[label] = {
            "max_batch_size": batch, "replicas": args.replicas, "deploy_s": round(deploy_s, 1),
            "closed_loop": _strip(closed), "capacity_qps": cap, "open_loop": steps,
            "max_rate_p99_le_2s_zero_errors": held_rate(steps),
            "min_p99_ms": min((s["p99_ms"] for s in steps if s["p99_ms"] is not None), default=None),
            "memory_per_replica_idle": mem_idle, "memory_per_replica_after_load": svc.memory_mb(pids),
        }
    out["questions_wrapped"] = qs.wrapped
    return out


def fault_run(svc: Service, index_dir: str, qpath: str, rate: float, args) -> dict:
    """Kill one replica's worker process a third into an open-loop run; count errors until it is replaced."""
    qs = Questions(qpath, seed=1)
    svc.deploy(index_dir, replicas=args.replicas, max_batch_size=8, timeout_s=args.timeout)
    before = svc.replicas(args.replicas)
    victim_id, victim_pid = sorted(before.items())[0]
    killed = {}

    def kill():
        killed["t"] = time.monotonic()
        os.kill(victim_pid, signal.SIGKILL)  # a process this benchmark's Ray started
        log(f"fault: SIGKILL replica {victim_id} (pid {victim_pid})")

    duration = args.fault_s
    kill_at = duration / 3
    run = asyncio.run(open_loop(svc.url, qs, rate, duration, args.timeout, drain_s=min(args.timeout, 30.0), at=(kill_at, kill)))
    # Replacement: a replica id not seen before answers /health.
    replaced_after = None
    end = time.monotonic() + 120
    while time.monotonic() < end:
        now = svc.replicas(args.replicas, within_s=5)
        if len(now) >= args.replicas and any(r not in before for r in now):
            replaced_after = round(time.monotonic() - killed["t"], 1)
            break
        time.sleep(1)
    recs = run["records"]
    errs = [r for r in recs if r["status"] != 200]
    after_kill = [r for r in errs if r["t"] is None or r["t"] >= kill_at - 1]
    log(f"fault: {len(errs)} errors of {len(recs)} ({len(after_kill)} at/after the kill); replica replaced after {replaced_after} s")
    return {
        "offered_qps": round(rate, 4), "duration_s": duration, "kill_at_s": round(kill_at, 1), "killed_replica": victim_id,
        "errors_total": len(errs), "errors_after_kill": len(after_kill), "error_kinds": run["error_kinds"],
        "replacement_seen_after_s": replaced_after, "kept_answering": run["ok"] > 0 and any(r["status"] == 200 and r["t"] and r["t"] > kill_at for r in recs),
        **{k: run[k] for k in ("requests", "ok", "p50_ms", "p99_ms", "max_ms")},
        "timeline": [{"t": round(r["t"], 1) if r["t"] is not None else None, "status": r["status"], "ms": round(r["ms"]) if r["ms"] else None} for r in recs],
    }


def nyc_lake(tables: int, questions: int) -> tuple[str, str]:
    """The synthetic NYC-sized lake's index and questions, built under :data:`WORK` when missing."""
    base = os.path.join(WORK, f"nyc{tables}")
    idx, qpath = os.path.join(base, "idx"), os.path.join(base, "questions.jsonl")
    from raylake.index.store import current_build

    if not os.path.exists(qpath):
        log(f"generating a synthetic lake of {tables} tables under {base}")
        subprocess.run([sys.executable, "-m", "bench.synth", base, "--tables", str(tables), "--questions", str(questions), "--seed", "0"],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    if current_build(idx) is None:
        log("indexing it (minutes)")
        subprocess.run([sys.executable, "-m", "raylake.cli", "index", os.path.join(base, "lake"), "--index-dir", idx, "--quiet", "--json"],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return idx, qpath


def plot(result: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for lake, r in result["lakes"].items():
        for label in ("batch_8", "batch_1"):
            if label not in r:
                continue
            steps = [s for s in r[label]["open_loop"] if s["p99_ms"] is not None]
            x = [s["offered_qps"] for s in steps]
            ls = "-" if label == "batch_8" else "--"
            ax.plot(x, [s["p99_ms"] / 1e3 for s in steps], ls, marker="o", label=f"{lake} {label.replace('_', ' ')} p99")
            ax.plot(x, [s["p50_ms"] / 1e3 for s in steps], ls, marker=".", alpha=0.5, label=f"{lake} {label.replace('_', ' ')} p50")
    ax.axhline(P99_TARGET_MS / 1e3, color="grey", lw=0.8, ls=":", label="2 s")
    ax.set_xlabel("offered load (questions / s, open loop)")
    ax.set_ylabel("latency (s)")
    ax.set_yscale("log")
    ax.set_title("raylake serve: latency vs offered load (2 CPUs, shared machine)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def machine() -> dict:
    import psutil

    return {"cpus": os.cpu_count(), "memory_gb": round(psutil.virtual_memory().total / 2**30, 1), "load_avg_1m_at_start": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.loadtest", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="Spider lake only, one closed- and one open-loop run, < 3 minutes")
    p.add_argument("--json", action="store_true", help="no human summary; the JSON line is printed either way")
    p.add_argument("--spider-index", default=SPIDER_INDEX)
    p.add_argument("--spider-questions", default=SPIDER_QUESTIONS)
    p.add_argument("--nyc-tables", type=int, default=1200)
    p.add_argument("--nyc-questions", type=int, default=800)
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--concurrency", type=int, default=4, help="closed-loop workers (default 4: two per replica)")
    p.add_argument("--closed-requests", type=int, default=120)
    p.add_argument("--closed-s", type=float, default=120.0)
    p.add_argument("--step-requests", type=int, default=24, help="open-loop step length in requests (bounded by --step-s)")
    p.add_argument("--step-s", type=float, default=90.0)
    p.add_argument("--fault-s", type=float, default=90.0)
    p.add_argument("--timeout", type=float, default=30.0, help="client and service time limit per request (s)")
    p.add_argument("--lakes", default="spider,nyc", help="full mode: which lakes (default spider,nyc; the fault run goes with spider)")
    p.add_argument("--out", default=None, help="results JSON (default bench/results/loadtest.json; quick: loadtest_quick.json)")
    p.add_argument("--plot", default=os.path.join(ROOT, "bench", "results", "loadtest.png"))
    args = p.parse_args(argv)
    for path, what in ((args.spider_index, "Spider index"), (args.spider_questions, "Spider questions")):
        if not os.path.exists(path):
            print(f"loadtest: error: {what} not found at {path}", file=sys.stderr)
            return 2
    out_path = args.out or os.path.join(ROOT, "bench", "results", "loadtest_quick.json" if args.quick else "loadtest.json")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    result = {"machine": machine(), "commit": commit, "mode": "quick" if args.quick else "full", "replicas": args.replicas,
              "note": "2 cores; compare load_avg_1m_at_start with them to see whether the machine was shared; compare within one run", "lakes": {}}
    svc = Service()
    try:
        if args.quick:
            result["lakes"]["spider"] = quick(svc, args)
        else:
            lakes = set(args.lakes.split(","))
            if "spider" in lakes:
                result["lakes"]["spider"] = bench_lake(svc, "spider", args.spider_index, args.spider_questions, args)
                _write(out_path, result)
                rate = 0.5 * result["lakes"]["spider"]["batch_8"]["capacity_qps"]
                result["fault"] = fault_run(svc, args.spider_index, args.spider_questions, rate, args)
                _write(out_path, result)
        if not args.quick and "nyc" in set(args.lakes.split(",")):
            idx, qpath = nyc_lake(args.nyc_tables, args.nyc_questions)
            result["lakes"][f"nyc_{args.nyc_tables}"] = bench_lake(svc, f"nyc_{args.nyc_tables}", idx, qpath, args)
    finally:
        svc.shutdown()
    result["wall_s"] = round(time.monotonic() - T0, 1)
    summary = headline(result)
    result["summary"] = summary
    _write(out_path, result)
    if not args.quick and args.plot:
        plot(result, args.plot)
    if not args.json:
        log(json.dumps(summary, indent=1))
    print(json.dumps(summary))
    return 0


def quick(svc: Service, args) -> dict:
    """Spider: closed loop for capacity, then open loop at 70 % of it; bounded to fit 3 minutes."""
    budget_end = T0 + 170.0
    qs = Questions(args.spider_questions)
    deploy_s = svc.deploy(args.spider_index, replicas=args.replicas, max_batch_size=8, timeout_s=args.timeout)
    pids = svc.replicas(args.replicas, within_s=10)
    left = budget_end - time.monotonic()
    closed_s = max(20.0, 0.45 * left - 10)
    closed = asyncio.run(closed_loop(svc.url, qs, args.concurrency, args.closed_requests, closed_s, args.timeout))
    cap = closed["throughput_qps"] or 0.01
    log(f"closed loop: {closed['ok']}/{closed['requests']} ok, {cap:.3f} qps, p99 {closed['p99_ms']} ms")
    left = budget_end - time.monotonic()
    drain = min(args.timeout, 25.0)
    rate = 0.7 * cap
    run = asyncio.run(open_loop(svc.url, qs, rate, max(10.0, left - drain - 5), args.timeout, drain_s=drain))
    log(f"open loop {rate:.3f} qps: {run['ok']}/{run['requests']} ok, p99 {run['p99_ms']} ms")
    return {"deploy_s": round(deploy_s, 1), "closed_loop": _strip(closed), "open_loop": _strip(run), "capacity_qps": cap,
            "memory_per_replica": svc.memory_mb(pids)}


def headline(result: dict) -> dict:
    sp = result["lakes"].get("spider", {})
    if result["mode"] == "quick":
        errors = sp["closed_loop"]["errors"] + sp["open_loop"]["errors"]
        return {"lake": "spider", "sustained_qps": sp["capacity_qps"], "p99_ms": sp["open_loop"]["p99_ms"], "errors": errors,
                "open_loop_qps": sp["open_loop"]["offered_qps"], "closed_loop_p99_ms": sp["closed_loop"]["p99_ms"],
                "requests": sp["closed_loop"]["requests"] + sp["open_loop"]["requests"], "wall_s": result["wall_s"]}
    s = {"wall_s": result["wall_s"]}
    for lake, r in result["lakes"].items():
        if "batch_8" not in r:
            continue
        b8, b1 = r["batch_8"], r["batch_1"]
        s[lake] = {"sustained_qps": b8["capacity_qps"], "sustained_qps_batch1": b1["capacity_qps"],
                   "max_rate_p99_le_2s": b8["max_rate_p99_le_2s_zero_errors"], "max_rate_p99_le_2s_batch1": b1["max_rate_p99_le_2s_zero_errors"],
                   "p99_ms_at_half_capacity": next((x["p99_ms"] for x in b8["open_loop"] if x["factor"] == 0.5), None),
                   "min_p99_ms": b8["min_p99_ms"],
                   "errors": sum(x["errors"] for x in b8["open_loop"]) + b8["closed_loop"]["errors"]}
    if "sustained_qps" in s.get("spider", {}):
        s.update(sustained_qps=s["spider"]["sustained_qps"], p99_ms=s["spider"]["p99_ms_at_half_capacity"], errors=s["spider"]["errors"])
    if "fault" in result:
        f = result["fault"]
        s["fault"] = {k: f[k] for k in ("errors_total", "errors_after_kill", "replacement_seen_after_s", "kept_answering")}
    return s


def _write(path: str, result: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(result, fh, indent=1, default=str)


if __name__ == "__main__":
    sys.exit(main())
