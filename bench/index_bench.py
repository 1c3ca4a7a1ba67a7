"""Index benchmark: how long ``raylake index`` takes, how much memory it needs, what it finds.

    python -m bench.index_bench --json [--lake DIR | --no-lake] [--synthetic 1000 10000]
                                [--out bench/results/index.json] [--plot bench/results/index_scaling.png]

For each lake (the Spider lake by default, then each synthetic size), on a private copy so
that files can be touched and changed:

1. **cold** index into a new folder (Ray started by the run, so its start-up is included);
2. re-index of the **unchanged** lake (should return ``up_to_date`` without Ray);
3. re-index after **touching** one file (mtime only; the content hash says it is unchanged);
4. re-index after **changing** one file's content (one row appended; only it is re-profiled).

Every run is ``python -m raylake.cli index --json`` in a subprocess whose process tree
(the driver and the Ray processes it starts) is sampled for memory (:mod:`bench.memory`).
Reported per lake: wall times, the summary's time per stage, peak RSS and PSS, embedding
throughput (distinct texts embedded / embed stage seconds, model load and actor start
included) and edge quality against the lake's ground truth:

- Spider (``questions.jsonl`` beside the lake): gold shard pairs found as union edges (and
  with an exact column mapping), gold-SQL join pairs found as join edges at column and table
  level, edges per table, and edges between files of different databases;
- synthetic (``ground_truth.json`` beside the lake, :mod:`bench.synth`): the same against
  the generator's join pairs and union groups, families standing in for databases.

Synthetic lakes show how time and memory grow with the number of tables (growth exponents
between the smallest and the largest finished one, and ``index_scaling.png``). A run whose
process tree passes ``--mem-limit-gb`` is killed by the bench and recorded as failed with the
memory it reached, instead of waking the kernel's OOM killer on a shared machine. Results go
to ``--out`` after every lake, and the whole result is the last line of stdout.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pyarrow.parquet as pq

from bench import spider_gold
from bench.memory import TreeMemory, machine
from bench.synth import generate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPIDER_LAKE = os.path.abspath(os.path.join(ROOT, "..", "shared", "data", "spider_lake", "lake"))
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "RAY_USAGE_STATS_ENABLED": "0", "TOKENIZERS_PARALLELISM": "false"}


def log(msg: str) -> None:
    print(f"[index_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- one index run


class RunFailed(RuntimeError):
    """A run that did not finish (killed for memory, or an error); ``record`` says what was measured."""

    def __init__(self, msg: str, record: dict):
        super().__init__(msg)
        self.record = record


def run_index(lake: str, index_dir: str, limit_mb: float | None = None) -> dict:
    """One ``raylake index`` in a subprocess: its summary, wall time and the tree's peak memory."""
    cmd = [sys.executable, "-m", "raylake.cli", "index", lake, "--index-dir", index_dir, "--json", "--quiet"]
    env = {**os.environ, **ENV}
    env.pop("RAY_ADDRESS", None)  # a local Ray of its own, never someone else's cluster
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with TreeMemory(proc.pid, limit_mb=limit_mb) as mem:
        out, err = proc.communicate()
    wall = time.perf_counter() - t
    leftover = mem.reap()
    if proc.returncode not in (0, 3):  # 3: some files were skipped, the rest indexed
        why = (f"killed by the bench at {mem.killed_at_mb:.0f} MB PSS (limit {limit_mb:.0f} MB)" if mem.killed_at_mb
               else f"exited with {proc.returncode}" + (" (SIGKILL: out of memory?)" if proc.returncode == -9 else ""))
        record = {"error": f"raylake index {why}", "stderr_tail": err.strip()[-1000:], "wall_s": round(wall, 2),
                  "peak_pss_mb": round(mem.peak_pss_mb), "peak_rss_mb": round(mem.peak_rss_mb),
                  "peak_driver_rss_mb": round(mem.peak_driver_rss_mb)}
        raise RunFailed(record["error"], record)
    summary = json.loads(out.strip().splitlines()[-1])
    return {
        "wall_s": round(wall, 2),
        "summary": summary,
        "peak_pss_mb": round(mem.peak_pss_mb),
        "peak_rss_mb": round(mem.peak_rss_mb),
        "peak_driver_rss_mb": round(mem.peak_driver_rss_mb),
        "peak_processes": mem.peak_procs,
        "killed_leftovers": leftover,
    }


def _brief(run: dict) -> dict:
    s = run["summary"]
    keys = ("up_to_date", "changed", "removed", "tables", "join_edges", "union_edges", "skipped")
    return {"wall_s": run["wall_s"], **{k: s.get(k) for k in keys}, "timings_s": s.get("timings_s"), "peak_pss_mb": run["peak_pss_mb"]}


def distinct_texts(index_dir: str) -> int:
    """Distinct texts a cold build embeds: column headers, header+samples, table texts."""
    build = open(os.path.join(index_dir, "CURRENT")).read().strip()
    cols = pq.read_table(os.path.join(index_dir, build, "columns.parquet"), columns=["header_text", "sample_text"])
    tables = pq.read_table(os.path.join(index_dir, build, "tables.parquet"), columns=["text"])
    return len(set(cols["header_text"].to_pylist()) | set(cols["sample_text"].to_pylist()) | set(tables["text"].to_pylist()))


def _pick_file(lake: str, summary: dict) -> str:
    """An indexed CSV in the middle of the lake's sorted listing (deterministic)."""
    skipped = set(summary.get("skipped_files", {}))
    files = sorted(
        os.path.relpath(os.path.join(d, f), lake).replace(os.sep, "/")
        for d, _, fs in os.walk(lake) for f in fs if f.endswith(".csv")
    )
    files = [f for f in files if f not in skipped]
    return files[len(files) // 2]


def _append_row(path: str) -> None:
    """Append a copy of the last row: new content and size, same header and types."""
    with open(path, "rb") as fh:
        data = fh.read()
    lines = data.rstrip(b"\r\n").split(b"\n")
    row = lines[-1] if len(lines) > 1 else b""
    with open(path, "ab") as fh:
        fh.write((b"" if data.endswith(b"\n") else b"\n") + row + b"\n")


def bench_lake(lake: str, work: str, limit_mb: float | None = None) -> dict:
    """Cold, unchanged, touched and changed-file runs on ``lake`` (a copy the bench may modify)."""
    index_dir = os.path.join(work, "index")
    shutil.rmtree(index_dir, ignore_errors=True)
    log(f"cold index of {lake}")
    cold = run_index(lake, index_dir, limit_mb)
    s = cold["summary"]
    log(f"cold: {cold['wall_s']} s, {s['tables']} tables, peak PSS {cold['peak_pss_mb']} MB")
    n_texts = distinct_texts(index_dir)
    edges = pq.read_table(os.path.join(index_dir, open(os.path.join(index_dir, "CURRENT")).read().strip(), "edges.parquet")).to_pylist()

    unchanged = run_index(lake, index_dir, limit_mb)
    target = _pick_file(lake, s)
    path = os.path.join(lake, target)
    now = time.time_ns()
    os.utime(path, ns=(now, now + 1_000_000_000))
    touched = run_index(lake, index_dir, limit_mb)
    _append_row(path)
    changed = run_index(lake, index_dir, limit_mb)
    log(f"re-index: unchanged {unchanged['wall_s']} s, touched {touched['wall_s']} s, changed {changed['wall_s']} s")
    embed_s = s["timings_s"].get("embed") or float("nan")
    return {
        "lake": lake,
        "files": s["files"], "tables": s["tables"], "columns": s["columns"], "rows": s["rows"], "skipped": s["skipped"],
        "cold": {
            "wall_s": cold["wall_s"], "timings_s": s["timings_s"], "peak_pss_mb": cold["peak_pss_mb"],
            "peak_rss_mb": cold["peak_rss_mb"], "peak_driver_rss_mb": cold["peak_driver_rss_mb"], "peak_processes": cold["peak_processes"],
            "join_edges": s["join_edges"], "union_edges": s["union_edges"],
        },
        "embedding": {"distinct_texts": n_texts, "embed_stage_s": embed_s, "texts_per_s": round(n_texts / embed_s, 1) if embed_s else None},
        "reindex_unchanged": _brief(unchanged),
        "reindex_touched": {"file": target, **_brief(touched)},
        "reindex_changed": {"file": target, **_brief(changed)},
        "_edges": edges,  # for the quality figures; dropped before writing
    }


# ---------------------------------------------------------------------------- edge quality


def edge_quality(edges: list[dict], n_tables: int, gold_joins, gold_unions, group_of: dict, mapping_ok) -> dict:
    """Recall of gold join/union pairs among the index's edges, edges per table, cross-group edges.

    ``gold_joins``: ``(file_a, col_a, file_b, col_b)``; ``gold_unions``: ``(file_a, file_b)``;
    ``group_of``: file -> database (or family); ``mapping_ok(src, dst, mapping)``: whether a
    union edge's column mapping is the true one.
    """
    join_cols, join_tables, unions = set(), set(), {}
    for e in edges:
        pair = frozenset((e["src_table"], e["dst_table"]))
        if e["kind"] == "join":
            join_cols.add(frozenset(((e["src_table"], e["src_column"]), (e["dst_table"], e["dst_column"]))))
            join_tables.add(pair)
        else:
            unions[pair] = e
    gj_cols = {frozenset(((a, ca), (b, cb))) for a, ca, b, cb in gold_joins}
    gj_tables = {frozenset((a, b)) for a, _, b, _ in gold_joins}
    gu = {frozenset(p) for p in gold_unions}
    found_u = [unions[p] for p in gu if p in unions]
    out = {
        "gold_join_pairs": len(gj_cols),
        "join_recall_column": _share(len(gj_cols & join_cols), len(gj_cols)),
        "gold_join_table_pairs": len(gj_tables),
        "join_recall_table": _share(len(gj_tables & join_tables), len(gj_tables)),
        "gold_union_pairs": len(gu),
        "union_recall": _share(len(found_u), len(gu)),
        "union_mapping_exact": _share(sum(mapping_ok(e["src_table"], e["dst_table"], json.loads(e["mapping"])) for e in found_u), len(found_u)),
        "join_edges_per_table": round(len(join_cols) / max(1, n_tables), 2),
        "union_edges_per_table": round(len(unions) / max(1, n_tables), 2),
    }
    out.update(cross_group(edges, group_of, "group"))
    return out


def cross_group(edges: list[dict], group_of: dict, label: str) -> dict:
    """Join and union edges whose two files lie in different groups (both files' groups known)."""
    out = {}
    for kind in ("join", "union"):
        known = [e for e in edges if e["kind"] == kind and e["src_table"] in group_of and e["dst_table"] in group_of]
        cross = sum(group_of[e["src_table"]] != group_of[e["dst_table"]] for e in known)
        out[f"{kind}_edges_with_known_{label}s"] = len(known)
        out[f"{kind}_edges_cross_{label}"] = cross
        out[f"{kind}_cross_{label}_share"] = _share(cross, len(known))
    return out


def _share(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def spider_quality(lake: str, edges: list[dict], n_tables: int) -> dict:
    """Edge quality against the Spider lake's gold SQL (``questions.jsonl`` beside ``lake``)."""
    qs = spider_gold.load_questions(os.path.join(os.path.dirname(os.path.abspath(lake)), "questions.jsonl"))
    joins = spider_gold.gold_join_pairs(qs, lake)
    shards = spider_gold.gold_shard_pairs(qs, lake)
    norm = spider_gold.norm

    def mapping_ok(src, dst, mapping):
        # shards keep their column names up to spelling (the lake's README)
        n_src = len(spider_gold.headers(lake, [src])[src])
        return len(mapping) == n_src and all(norm(a) == norm(b) for a, b in mapping.items())

    q = edge_quality(edges, n_tables, joins, shards, spider_gold.file_databases(qs), mapping_ok)
    q["groups"] = "databases (db_id of the questions naming each file)"
    return q


def synthetic_quality(lake: str, edges: list[dict], n_tables: int) -> dict:
    """Edge quality against :mod:`bench.synth`'s ``ground_truth.json`` beside ``lake``."""
    with open(os.path.join(os.path.dirname(os.path.abspath(lake)), "ground_truth.json"), encoding="utf-8") as fh:
        truth = json.load(fh)
    joins = [tuple(p[:4]) for p in truth["join_pairs"]]
    unions, canon = [], {}
    for g in truth["union_groups"]:
        canon.update(g["columns"])
        unions.extend((a, b) for i, a in enumerate(g["files"]) for b in g["files"][i + 1:])

    def mapping_ok(src, dst, mapping):
        return len(mapping) == len(canon[src]) and all(canon[src].get(a) == canon[dst].get(b) for a, b in mapping.items())

    group_of = {f: t["family"] for f, t in truth["source_tables"].items()}
    q = edge_quality(edges, n_tables, joins, unions, group_of, mapping_ok)
    q["groups"] = "families of the generator (one source table each)"
    # families of one theme share a schema (like yearly exports of one dataset), so a union
    # across families may be right; across themes it never is
    theme = {f["id"]: f["theme"] for f in truth["families"]}
    q.update(cross_group(edges, {f: theme[g] for f, g in group_of.items()}, "theme"))
    return q


# ---------------------------------------------------------------------------- scaling


def _exponent(x0, x1, y0, y1) -> float | None:
    if not (x0 and x1 and y0 and y1) or x0 == x1:
        return None
    return round(math.log(y1 / y0) / math.log(x1 / x0), 2)


def scaling(results: dict) -> dict:
    """Time and memory of the synthetic lakes against their size; exponent b of y ∝ tables^b."""
    synth = sorted((r for k, r in results.items() if k.startswith("synthetic_") and "error" not in r), key=lambda r: r["tables"])
    out = {
        "tables": [r["tables"] for r in synth],
        "cold_wall_s": [r["cold"]["wall_s"] for r in synth],
        "cold_stage_s": [r["cold"]["timings_s"] for r in synth],
        "peak_pss_mb": [r["cold"]["peak_pss_mb"] for r in synth],
        "peak_driver_rss_mb": [r["cold"]["peak_driver_rss_mb"] for r in synth],
        "reindex_changed_s": [r["reindex_changed"]["wall_s"] for r in synth],
        "reindex_unchanged_s": [r["reindex_unchanged"]["wall_s"] for r in synth],
    }
    if len(synth) >= 2:
        a, b = synth[0], synth[-1]
        out["time_exponent"] = _exponent(a["tables"], b["tables"], a["cold"]["wall_s"], b["cold"]["wall_s"])
        out["memory_exponent"] = _exponent(a["tables"], b["tables"], a["cold"]["peak_pss_mb"], b["cold"]["peak_pss_mb"])
        out["stage_exponents"] = {
            k: _exponent(a["tables"], b["tables"], a["cold"]["timings_s"].get(k), b["cold"]["timings_s"].get(k))
            for k in b["cold"]["timings_s"] if k != "total"
        }
        out["reindex_changed_exponent"] = _exponent(a["tables"], b["tables"], a["reindex_changed"]["wall_s"], b["reindex_changed"]["wall_s"])
    return out


def plot(results: dict, path: str) -> None:
    """Stage times, re-index times and peak memory against the number of tables."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = sorted((k for k in results if "error" not in results[k]), key=lambda k: results[k]["tables"])
    lakes = [results[k] for k in order]
    names = [f"{k}\n{results[k]['tables']:,} tables" for k in order]
    stages = [k for k in ("ray_init", "profile", "embed", "lsh", "unions", "joins", "partition", "write", "scan") if any(k in r["cold"]["timings_s"] for r in lakes)]
    fig, ax = plt.subplots(1, 3, figsize=(16, 5))
    bottom = [0.0] * len(lakes)
    for st in stages:
        v = [r["cold"]["timings_s"].get(st, 0.0) for r in lakes]
        ax[0].bar(names, v, bottom=bottom, label=st)
        bottom = [b + x for b, x in zip(bottom, v)]
    ax[0].set(title="cold index: time per stage", ylabel="seconds")
    ax[0].legend(fontsize=8)
    x = range(len(lakes))
    for key, label in (("reindex_unchanged", "unchanged"), ("reindex_touched", "one file touched"), ("reindex_changed", "one file changed")):
        ax[1].plot(x, [r[key]["wall_s"] for r in lakes], "o-", label=label)
    ax[1].set(title="re-index (wall, incl. process start)", ylabel="seconds", xticks=list(x), xticklabels=names)
    ax[1].legend(fontsize=8)
    ax[2].plot(x, [r["cold"]["peak_pss_mb"] / 1024 for r in lakes], "o-", label="driver + Ray workers (PSS)")
    ax[2].plot(x, [r["cold"]["peak_rss_mb"] / 1024 for r in lakes], "o--", label="driver + Ray workers (RSS sum)")
    ax[2].plot(x, [r["cold"]["peak_driver_rss_mb"] / 1024 for r in lakes], "s-", label="driver alone (RSS)")
    ax[2].set(title="cold index: peak memory", ylabel="GiB", xticks=list(x), xticklabels=names)
    ax[2].legend(fontsize=8)
    failed = [f"{k} ({r['tables']:,} tables): {r['error']} after {r['wall_s']:.0f} s" for k, r in results.items() if "error" in r]
    if failed:
        fig.suptitle("did not finish: " + "; ".join(failed), fontsize=9, color="firebrick")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)


# ---------------------------------------------------------------------------- driver


def _write(path: str, result: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.index_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--lake", default=SPIDER_LAKE, help="lake folder to benchmark (default: the Spider lake)")
    p.add_argument("--no-lake", action="store_true", help="only the synthetic lakes")
    p.add_argument("--synthetic", type=int, nargs="*", default=[], metavar="TABLES", help="synthetic lake sizes, e.g. 1000 10000")
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic lakes")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "index.json"))
    p.add_argument("--plot", default=os.path.join(ROOT, "bench", "results", "index_scaling.png"))
    p.add_argument("--work", default=None, help="scratch folder (default: a temporary one, removed afterwards)")
    p.add_argument("--json", action="store_true", help="no human summary; the JSON line is printed either way")
    p.add_argument("--mem-limit-gb", type=float, default=round(0.7 * machine()["memory_gb"], 1),
                   help="kill a run whose process tree passes this PSS (default: 70%% of the machine's memory)")
    args = p.parse_args(argv)

    work = args.work or tempfile.mkdtemp(prefix="raylake-index-bench-")
    result = {"machine": machine(), "command": "python -m bench.index_bench " + " ".join(argv if argv is not None else sys.argv[1:]), "lakes": {}}
    try:
        jobs = []
        if not args.no_lake:
            name = "spider" if os.path.abspath(args.lake) == SPIDER_LAKE else os.path.basename(os.path.abspath(args.lake).rstrip("/"))
            jobs.append((name, args.lake, None))
        jobs += [(f"synthetic_{n}", None, n) for n in args.synthetic]
        for name, src, n in jobs:
            lake_work = os.path.join(work, name)
            shutil.rmtree(lake_work, ignore_errors=True)
            lake = os.path.join(lake_work, "lake")
            if n is None:
                shutil.copytree(src, lake)  # copy2 keeps mtimes; the bench touches and changes the copy
                for extra in ("questions.jsonl", "ground_truth.json"):
                    if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(src)), extra)):
                        shutil.copy2(os.path.join(os.path.dirname(os.path.abspath(src)), extra), lake_work)
            else:
                t = time.perf_counter()
                generate(lake_work, n, seed=args.seed)
                log(f"generated {n} synthetic tables in {time.perf_counter() - t:.1f} s")
            try:
                r = bench_lake(lake, lake_work, args.mem_limit_gb * 1024)
            except RunFailed as exc:
                log(f"{name}: {exc}")
                r = {"lake": src or f"bench.synth --tables {n} --seed {args.seed}", "tables": n or len(os.listdir(lake)), **exc.record}
                if n is not None:
                    r["synthetic"] = {"tables": n, "seed": args.seed, "generator": "bench.synth"}
                result["lakes"][name] = r
                _write(args.out, result)
                continue
            edges = r.pop("_edges")
            if os.path.exists(os.path.join(lake_work, "ground_truth.json")):
                r["quality"] = synthetic_quality(lake, edges, r["tables"])
            elif os.path.exists(os.path.join(lake_work, "questions.jsonl")):
                r["quality"] = spider_quality(lake, edges, r["tables"])
            if n is not None:
                r["synthetic"] = {"tables": n, "seed": args.seed, "generator": "bench.synth"}
            r["lake"] = src or f"bench.synth --tables {n} --seed {args.seed}"
            result["lakes"][name] = r
            result["scaling"] = scaling(result["lakes"])
            _write(args.out, result)
            log(f"{name} done; results in {args.out}")
        if args.synthetic and args.plot and any("error" not in r for r in result["lakes"].values()):
            plot(result["lakes"], args.plot)
            result["plot"] = args.plot
            _write(args.out, result)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    if not args.json:
        for name, r in result["lakes"].items():
            if "error" in r:
                print(f"{name}: {r['error']} after {r['wall_s']} s", file=sys.stderr)
                continue
            print(f"{name}: {r['tables']} tables, cold {r['cold']['wall_s']} s, peak PSS {r['cold']['peak_pss_mb']} MB, "
                  f"unchanged {r['reindex_unchanged']['wall_s']} s, changed {r['reindex_changed']['wall_s']} s", file=sys.stderr)
    print(json.dumps(result, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
