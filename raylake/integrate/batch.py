"""``raylake integrate``: many questions, one validated join path and one integrated table each (EcoTable).

The pipeline (EcoTable Fig. 2, without the transformation layer and the spanner pruning of
Sec. 4.3, which are not built yet):

1. every question's tables (:mod:`.identify`);
2. every question's Steiner tree in the join likelihood graph, validated edge by edge with
   one global cache (:mod:`.validate`, :mod:`.judge`), and the naive count (each question
   alone) beside it;
3. per question, the validated tree as a join plan — breadth-first from its most likely
   table, each edge on the column pair the judge confirmed — executed by the existing
   fusion (:func:`raylake.fuse.fuse`) into ``OUT/<id>.parquet``;
4. ``OUT/results.jsonl`` (one line per question: ``id``, ``tables``, ``edges`` with their
   columns and validation, the fused table's file and rows) and ``OUT/report.json`` (every
   judged edge and the counts).
"""
from __future__ import annotations

import json
import os
import re
import time

from raylake.config import RaylakeContext
from raylake.errors import FusionError, RaylakeError
from raylake.integrate.identify import TableIdentifier
from raylake.integrate.judge import OfflineJudge
from raylake.integrate.likelihood import edge_key, join_p
from raylake.integrate.validate import EdgeCache, validate, validate_each


def check_out_dir(out: str) -> str:
    """The output folder, created if missing; a one-line error when it is a file or cannot be made."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise RaylakeError(f"--out {out!r} is a file; give a folder for the integrated tables")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise RaylakeError(f"--out {out!r}: cannot create the folder ({exc.strerror or exc})") from None
    return os.path.abspath(out)


def file_names(ids) -> list[str]:
    """A distinct, safe file stem per question id (characters outside [A-Za-z0-9._-] become '_')."""
    out, seen = [], set()
    for qid in ids:
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", str(qid)).strip(".") or "question"
        name, n = stem, 1
        while name in seen:
            n += 1
            name = f"{stem}_{n}"
        seen.add(name)
        out.append(name)
    return out


def plan_steps(tree, verdicts: dict, paths: list[str]) -> list[dict]:
    """The tree as fusion steps: a ``start`` at its first node, then a ``join`` per edge, breadth first."""
    if not tree.nodes:
        return []
    adj: dict[int, list[int]] = {}
    for a, b in tree.edges:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    root = tree.nodes[0]
    steps, seen, queue = [{"op": "start", "new": paths[root]}], {root}, [root]
    while queue:
        u = queue.pop(0)
        for v in sorted(adj.get(u, [])):
            if v in seen:
                continue
            seen.add(v)
            queue.append(v)
            verdict = verdicts[edge_key(u, v)]
            cu, cv = (verdict.a_column, verdict.b_column) if u < v else (verdict.b_column, verdict.a_column)
            steps.append({"op": "join", "anchor": paths[u], "new": paths[v],
                          "keys": {"anchor_column": cu, "new_column": cv}})
    return steps


def integrate(questions: list[tuple[object, str]], index_dir: str, out_dir: str, ctx: RaylakeContext | None = None,
              engine=None, naive: bool = True, progress=None) -> dict:
    """Integrate every ``(id, question)``; write the outputs into ``out_dir``; return the report.

    ``engine`` (a loaded :class:`raylake.search.Engine`) is built from ``index_dir`` when not
    given; ``naive`` also counts the validations each question would need alone.
    """
    from raylake.fuse import fuse
    from raylake.search.engine import Engine

    ctx = ctx or RaylakeContext.get_current()
    cfg = ctx.integrate
    out_dir = check_out_dir(out_dir)
    engine = engine or Engine(index_dir, ctx=ctx)
    index, graph = engine.index, engine.graph
    paths = index.paths
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()

    identifier = TableIdentifier(engine, ctx)
    found = {}
    for n, (qid, question) in enumerate(questions, 1):
        found[qid] = identifier.identify(question)
        say(f"identified tables of {n}/{len(questions)} questions")
    t_identify = time.perf_counter() - t0

    t = time.perf_counter()
    judge = OfflineJudge(index, cfg)
    memo: dict = {}

    def judged(a: int, b: int):
        if (a, b) not in memo:
            memo[(a, b)] = judge.judge(a, b, graph.join[a].get(b, []))
        return memo[(a, b)]

    terminals = {qid: f.tables for qid, f in found.items()}
    cache = EdgeCache(judged)
    run = validate(graph, terminals, cache, cfg.max_hops, cfg.min_join, cfg.max_iterations, cfg.max_rejections)
    naive_count = (validate_each(graph, terminals, judged, cfg.max_hops, cfg.min_join, cfg.max_iterations, cfg.max_rejections)
                   if naive else None)
    t_validate = time.perf_counter() - t

    t = time.perf_counter()
    rows = []
    for (qid, question), stem in zip(questions, file_names([q for q, _ in questions])):
        f, tree = found[qid], run.trees[qid]
        steps = plan_steps(tree, cache.verdicts, paths)
        row = {
            "id": qid, "question": question,
            "tables": [paths[x] for x in tree.nodes],
            "terminals": [paths[x] for x in f.tables],
            "bridges": [paths[x] for x in tree.nodes if x not in f.tables],
            "unreached": [paths[x] for x in tree.unreached],
            "coarse": [{"table": paths[x], "p": round(p, 4)} for x, p in f.coarse],
            "edges": [_edge_json(e, cache.verdicts[e], graph, paths) for e in tree.edges],
            "identified_by": f.source, "timed_out": f.timed_out, "identify_s": round(f.seconds, 3),
            "table_file": None, "rows": None, "reason": None,
        }
        if steps:
            try:
                fused = fuse(steps, index.lake_root, max_rows=ctx.search.max_fused_rows)
                row["table_file"] = os.path.basename(fused.write(os.path.join(out_dir, stem + ".parquet")))
                row["rows"] = fused.table.num_rows
                if fused.warnings:
                    row["reason"] = "; ".join(fused.warnings)
            except FusionError as exc:
                row["reason"] = str(exc)
        else:
            row["reason"] = "no table identified for the question"
        rows.append(row)
    t_fuse = time.perf_counter() - t

    with open(os.path.join(out_dir, "results.jsonl"), "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    report = {
        "questions": len(questions),
        "timed_out": sum(f.timed_out for f in found.values()),
        "validations": run.validations,
        "validations_naive": naive_count,
        "iterations": run.iterations,
        "edges_judged_per_round": run.per_round,
        "edges_valid": sum(v.valid for v in cache.verdicts.values()),
        "edges_invalid": sum(not v.valid for v in cache.verdicts.values()),
        "graph_edges": sum(len(adj) for adj in graph.join) // 2,
        "judged": [{"a": paths[a], "b": paths[b], "p": round(join_p(graph, a, b), 4)} | v.to_json()
                   for (a, b), v in sorted(cache.verdicts.items())],
        "timings_s": {"identify": round(t_identify, 2), "validate": round(t_validate, 2), "fuse": round(t_fuse, 2),
                      "total": round(time.perf_counter() - t0, 2)},
        "out": out_dir,
    }
    with open(os.path.join(out_dir, "report.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, ensure_ascii=False, indent=1, default=str)
    report["results"] = rows
    return report


def _edge_json(e, verdict, graph, paths) -> dict:
    a, b = e
    return {"a": paths[a], "b": paths[b], "a_column": verdict.a_column, "b_column": verdict.b_column,
            "p": round(join_p(graph, a, b), 4), "validated_by": verdict.by,
            "containment": round(verdict.containment, 4), "fanout": round(verdict.fanout, 3)}
