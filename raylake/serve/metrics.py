"""Service metrics in the Prometheus text format (exposition format 0.0.4).

Each replica counts in a :class:`Metrics` (plain numbers, no locks needed: it is only
touched from the replica's event loop) and sends a :meth:`Metrics.snapshot` to the
:class:`MetricsHub` deployment every few seconds and before each scrape. ``GET /metrics``
renders the hub's sum over replicas, so a scrape that lands on any replica sees the whole
service. Counters of a replica that died keep their last value, which keeps the totals
monotonic across restarts.

Exported:

- ``raylake_serve_requests_total{endpoint,status}`` — answered requests;
- ``raylake_serve_errors_total{endpoint,status}`` — those with status ≥ 400;
- ``raylake_serve_stage_seconds{stage}`` — histogram per stage: ``queue`` (waiting for a
  batch), ``intent``, ``anchors``, ``search``, ``fuse`` (from the engine's timings),
  ``engine`` (its total) and ``request`` (end to end in the replica);
- ``raylake_serve_batch_size`` — histogram of /ask batch sizes;
- ``raylake_serve_queue_depth`` — requests waiting for or inside a batch, summed over
  live replicas;
- ``raylake_serve_index_reloads_total``, ``raylake_serve_index_reload_failures_total``;
- ``raylake_serve_replicas`` — replicas that reported in the last 30 s.
"""
from __future__ import annotations

import time

from ray import serve

STAGE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64)
LIVE_S = 30.0  # a replica silent for longer is no longer counted in gauges


class Histogram:
    def __init__(self, buckets):
        self.buckets = tuple(buckets)
        self.counts = [0] * len(self.buckets)  # non-cumulative; cumulated when rendered
        self.sum = 0.0
        self.count = 0

    def observe(self, v: float) -> None:
        for i, b in enumerate(self.buckets):
            if v <= b:
                self.counts[i] += 1
                break
        self.sum += v
        self.count += 1

    def state(self) -> dict:
        return {"buckets": list(self.buckets), "counts": list(self.counts), "sum": self.sum, "count": self.count}


class Metrics:
    """One replica's counters."""

    def __init__(self):
        self.requests: dict[tuple[str, int], int] = {}
        self.stages: dict[str, Histogram] = {}
        self.batch = Histogram(BATCH_BUCKETS)
        self.queue_depth = 0
        self.reloads = 0
        self.reload_failures = 0
        self.build: str | None = None

    def request(self, endpoint: str, status: int, seconds: float | None = None) -> None:
        key = (endpoint, int(status))
        self.requests[key] = self.requests.get(key, 0) + 1
        if seconds is not None:
            self.stage("request", seconds)

    def stage(self, name: str, seconds: float) -> None:
        h = self.stages.get(name)
        if h is None:
            h = self.stages[name] = Histogram(STAGE_BUCKETS)
        h.observe(seconds)

    def snapshot(self) -> dict:
        return {
            "time": time.time(),
            "requests": [[e, s, n] for (e, s), n in self.requests.items()],
            "stages": {k: h.state() for k, h in self.stages.items()},
            "batch": self.batch.state(),
            "queue_depth": self.queue_depth,
            "reloads": self.reloads,
            "reload_failures": self.reload_failures,
            "build": self.build,
        }


def merge(snapshots: list[dict], now: float | None = None) -> dict:
    """Sum of replica snapshots (gauges only over replicas seen in the last :data:`LIVE_S`)."""
    now = time.time() if now is None else now
    req: dict[tuple[str, int], int] = {}
    stages: dict[str, dict] = {}
    batch = None
    out = {"queue_depth": 0, "reloads": 0, "reload_failures": 0, "replicas": 0, "builds": {}}
    for s in snapshots:
        for e, st, n in s["requests"]:
            req[(e, st)] = req.get((e, st), 0) + n
        for name, h in s["stages"].items():
            stages[name] = _add(stages.get(name), h)
        batch = _add(batch, s["batch"])
        out["reloads"] += s["reloads"]
        out["reload_failures"] += s["reload_failures"]
        if now - s["time"] <= LIVE_S:
            out["replicas"] += 1
            out["queue_depth"] += s["queue_depth"]
            if s.get("build"):
                out["builds"][s["build"]] = out["builds"].get(s["build"], 0) + 1
    out.update(requests=req, stages=stages, batch=batch)
    return out


def _add(a: dict | None, b: dict) -> dict:
    if a is None:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in b.items()}
    return {"buckets": a["buckets"], "counts": [x + y for x, y in zip(a["counts"], b["counts"])], "sum": a["sum"] + b["sum"], "count": a["count"] + b["count"]}


def render(m: dict) -> str:
    """Prometheus text for a :func:`merge` result."""
    lines = [
        "# HELP raylake_serve_requests_total Requests answered, by endpoint and HTTP status.",
        "# TYPE raylake_serve_requests_total counter",
    ]
    for (e, s), n in sorted(m["requests"].items()):
        lines.append(f'raylake_serve_requests_total{{endpoint="{e}",status="{s}"}} {n}')
    lines += ["# HELP raylake_serve_errors_total Requests answered with status >= 400.", "# TYPE raylake_serve_errors_total counter"]
    for (e, s), n in sorted(m["requests"].items()):
        if s >= 400:
            lines.append(f'raylake_serve_errors_total{{endpoint="{e}",status="{s}"}} {n}')
    lines += ["# HELP raylake_serve_stage_seconds Latency per stage of a request.", "# TYPE raylake_serve_stage_seconds histogram"]
    for name, h in sorted(m["stages"].items()):
        lines += _histogram("raylake_serve_stage_seconds", h, f'stage="{name}"')
    lines += ["# HELP raylake_serve_batch_size Requests per /ask batch.", "# TYPE raylake_serve_batch_size histogram"]
    if m["batch"]:
        lines += _histogram("raylake_serve_batch_size", m["batch"], "")
    lines += [
        "# HELP raylake_serve_queue_depth Requests waiting for or inside a batch, over live replicas.",
        "# TYPE raylake_serve_queue_depth gauge",
        f"raylake_serve_queue_depth {m['queue_depth']}",
        "# HELP raylake_serve_replicas Replicas that reported recently.",
        "# TYPE raylake_serve_replicas gauge",
        f"raylake_serve_replicas {m['replicas']}",
        "# HELP raylake_serve_index_reloads_total Index builds swapped in without downtime.",
        "# TYPE raylake_serve_index_reloads_total counter",
        f"raylake_serve_index_reloads_total {m['reloads']}",
        "# HELP raylake_serve_index_reload_failures_total New builds that failed to load (the old one kept serving).",
        "# TYPE raylake_serve_index_reload_failures_total counter",
        f"raylake_serve_index_reload_failures_total {m['reload_failures']}",
        "# HELP raylake_serve_index_build Replicas serving each index build.",
        "# TYPE raylake_serve_index_build gauge",
    ]
    for b, n in sorted(m["builds"].items()):
        lines.append(f'raylake_serve_index_build{{build="{b}"}} {n}')
    return "\n".join(lines) + "\n"


def _histogram(name: str, h: dict, labels: str) -> list[str]:
    sep = "," if labels else ""
    out, cum = [], 0
    for b, c in zip(h["buckets"], h["counts"]):
        cum += c
        out.append(f'{name}_bucket{{{labels}{sep}le="{b:g}"}} {cum}')
    out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {h["count"]}')
    lab = f"{{{labels}}}" if labels else ""
    out.append(f"{name}_sum{lab} {h['sum']:.6f}")
    out.append(f"{name}_count{lab} {h['count']}")
    return out


@serve.deployment(num_replicas=1, ray_actor_options={"num_cpus": 0}, max_ongoing_requests=1000)
class MetricsHub:
    """Holds the latest snapshot of every search replica; renders their sum."""

    def __init__(self):
        self.snapshots: dict[str, dict] = {}

    def push(self, replica: str, snapshot: dict) -> None:
        self.snapshots[replica] = snapshot

    def render(self) -> str:
        return render(merge(list(self.snapshots.values())))

    def merged(self) -> dict:
        m = merge(list(self.snapshots.values()))
        m["requests"] = [[e, s, n] for (e, s), n in m["requests"].items()]
        return m
