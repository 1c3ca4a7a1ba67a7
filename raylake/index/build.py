"""``raylake index``: profile, sketch, embed and connect every table of a lake, on Ray.

Stages (timed separately in the summary):

1. **scan** — list the lake; compare size/mtime (then SHA-256 when only mtime moved) with
   the previous build's manifest to find added, changed and removed files. An unchanged
   lake returns here without starting Ray.
2. **profile** — Ray tasks read and profile the changed files (:mod:`.profile`), computing
   MinHash signatures with the numba kernel; unreadable files are skipped with a reason.
3. **embed** — header, header+sample and table texts missing from the previous build go to
   an actor pool (:mod:`.embed`); identical texts are embedded once.
4. **lsh** / **unions** / **joins** — LSH candidate pairs (Ray tasks, grouped by band);
   union edges first, then join edges from LSH, embedding and name candidates, less the
   column pairs a union aligns (:mod:`.unions`, :mod:`.joins`). Only pairs that touch a
   changed file are recomputed; the others are carried over.
5. **partition** — METIS over the table graph (:mod:`.partition`).
6. **write** — a new build folder, published atomically (:mod:`.store`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from raylake import __version__
from raylake._progress import Progress
from raylake.config import FORMAT_VERSION, IndexConfig, RaylakeContext, resolve_model_path
from raylake.errors import IndexVersionError, RaylakeError, SkipFile
from raylake.index import joins as joins_mod
from raylake.index import store
from raylake.index.arrays import ColumnArrays
from raylake.index.embed import check_backend
from raylake.index.lsh import bands_to_pairs, unique_pairs
from raylake.index.onnx_embed import require_onnxruntime
from raylake.index.partition import partition_tables
from raylake.index.profile import TableProfile, profile_table
from raylake.index.unions import candidate_table_pairs, find_unions
from raylake.lake import Lake, LakeFile, open_lake, read_table
from raylake.runtime import start_ray

# parameters that change what is stored: a different value forces a full rebuild
_CONTENT_PARAMS = (
    "num_perm", "minhash_seed", "sample_size", "summary_top", "embed_sample_values", "table_text_rows",
    "value_index_max_distinct", "value_max_chars", "max_field_bytes", "max_profile_rows", "key_uniqueness",
    "embed_max_seq_length", "embed_backend",
)
# content parameters added after indexes were built: an index without one was built with this value
_CONTENT_DEFAULTS = {"embed_backend": "torch"}
# parameters the edges depend on but the profiles do not: when one of them (or the join
# scoring itself, joins.SCORING) differs from the previous build's, every edge is derived
# again from the reused profiles
_EDGE_PARAMS = ("lsh_max_bucket", "lsh_bands", "header_neighbours", "join_threshold", "join_max_per_column",
                "union_threshold", "union_neighbours")


# --------------------------------------------------------------------------- profiling


def _profile_one(lake: Lake, f: LakeFile, cfg: IndexConfig) -> TableProfile | tuple[str, str, str]:
    """A profile, or ``(path, sha256, reason)`` when the file is skipped."""
    try:
        data = lake.read_bytes(f)
    except OSError as exc:
        return (f.path, "", f"unreadable: {' '.join(str(exc).split())[:160]}")
    sha = hashlib.sha256(data).hexdigest()
    try:
        table = read_table(f.path, data, max_field_bytes=cfg.max_field_bytes, max_rows=cfg.max_profile_rows)
        return profile_table(f.path, table, sha, cfg)
    except SkipFile as exc:
        return (f.path, sha, str(exc))
    except Exception as exc:  # noqa: BLE001 — one bad file must not stop the lake; its reason is reported
        # the type only: a library's message may quote the file's bytes, and a reason is printed
        return (f.path, sha, f"cannot profile: {type(exc).__name__} while reading it (a raylake bug: please report it)")


def _profile_chunk(lake: Lake, files: list[LakeFile], cfg: IndexConfig):
    return [_profile_one(lake, f, cfg) for f in files]


def _lsh_task(sigs, band_ids, rows, eligible, dirty, max_bucket):
    """Candidate pairs of a group of bands, deduplicated band by band: a pair colliding in
    many bands is held once, so memory follows the distinct pairs, not the collisions."""
    keys, pending, n_pending = np.empty(0, np.int64), [], 0
    for band in band_ids:
        p = bands_to_pairs(sigs, [band], rows, eligible, dirty, max_bucket)
        pending.append(p[:, 0] << 32 | p[:, 1])
        n_pending += len(p)
        if n_pending > max(len(keys), 1 << 20):  # merge when the raw pairs outgrow the distinct ones
            keys, pending, n_pending = np.unique(np.concatenate([keys, *pending])), [], 0
    keys = np.unique(np.concatenate([keys, *pending]))
    return np.stack([keys >> 32, keys & 0xFFFFFFFF], 1)


# --------------------------------------------------------------------------- previous build


@dataclasses.dataclass
class _Previous:
    manifest: dict
    build: str
    tables: dict  # path -> dict(table row)
    columns: dict  # path -> list of column records
    sig_rows: dict  # path -> (n_cols, P) signatures
    values: dict  # path -> list of value lists
    texts: dict  # text -> vector
    edges: list[dict]


def _load_previous(index_dir: str, cfg: IndexConfig, model_path: str, progress: Progress) -> _Previous | None:
    try:
        build, manifest = store.read_manifest(index_dir)
    except IndexVersionError:
        progress.note("previous index has another format version: rebuilding from scratch")
        return None
    except RaylakeError:
        return None
    params = manifest.get("params", {})
    if manifest.get("model") != model_path or _params_differ(params, cfg, _CONTENT_PARAMS):
        progress.note("index parameters or model changed: rebuilding from scratch")
        return None
    tables = pq.read_table(os.path.join(build, "tables.parquet")).to_pylist()
    columns = pq.read_table(os.path.join(build, "columns.parquet")).to_pylist()
    sigs = np.load(os.path.join(build, "signatures.npy"))
    emb = {k: np.load(os.path.join(build, f"{k}.npy")) for k in ("emb_header", "emb_sample", "emb_table")}
    values = pq.read_table(os.path.join(build, "values.parquet")).to_pydict()
    edges = pq.read_table(os.path.join(build, "edges.parquet")).to_pylist()
    by_table: dict[int, list[int]] = {}
    for c in columns:
        by_table.setdefault(c["table_id"], []).append(c["column_id"])
    vals_by_col: dict[int, list[str]] = {}
    for v, cid in zip(values["value"], values["column_id"]):
        vals_by_col.setdefault(cid, []).append(v)
    texts: dict[str, np.ndarray] = {}
    for c in columns:
        texts[c["header_text"]] = emb["emb_header"][c["column_id"]]
        texts[c["sample_text"]] = emb["emb_sample"][c["column_id"]]
    for t in tables:
        texts[t["text"]] = emb["emb_table"][t["table_id"]]
    prev_tables, prev_cols, prev_sigs, prev_vals = {}, {}, {}, {}
    for t in tables:
        cids = sorted(by_table.get(t["table_id"], []), key=lambda c: columns[c]["position"])
        prev_tables[t["path"]] = t
        prev_cols[t["path"]] = [columns[c] for c in cids]
        prev_sigs[t["path"]] = sigs[cids]
        prev_vals[t["path"]] = [vals_by_col.get(c, []) for c in cids]
    return _Previous(manifest, build, prev_tables, prev_cols, prev_sigs, prev_vals, texts, edges)


# --------------------------------------------------------------------------- ray


# --------------------------------------------------------------------------- build


def compare_files(lake: Lake, prev_files: dict) -> tuple[list[LakeFile], list[LakeFile], bool]:
    """Split the lake's files into (unchanged, added or changed) against a manifest's ``files``.

    Size and mtime decide; when only the mtime moved, the SHA-256 does, so a touched but
    identical file is not profiled again. The flag says whether such a file was seen (its
    new mtime must then be written back to the manifest).
    """
    clean, dirty, moved = [], [], False
    for f in lake.files:
        old = prev_files.get(f.path)
        if old and old.get("refused"):
            dirty.append(f)  # a refused link or FIFO became a file
        elif old and old["size"] == f.size and old["mtime_ns"] == f.mtime_ns:
            clean.append(f)
        elif old and old["size"] == f.size and old.get("sha256"):
            try:
                sha = hashlib.sha256(lake.read_bytes(f)).hexdigest()
            except OSError:
                sha = None  # unreadable now: re-profiling names it as skipped
            (clean if sha == old["sha256"] else dirty).append(f)
            moved = moved or sha == old["sha256"]
        else:
            dirty.append(f)
    return clean, dirty, moved


def plan_index(lake_path: str, index_dir: str = ".raylake", *, cfg: IndexConfig | None = None) -> dict:
    """What ``build_index`` would (re)index, without writing anything or starting Ray.

    Returns ``new``, ``changed`` and ``removed`` paths (relative to the lake root) and
    ``rebuild``: a reason when the whole index would be built again (no index yet, another
    format, or other content parameters or model), else None.
    """
    cfg = cfg or RaylakeContext.get_current().index
    lake = open_lake(lake_path)
    rebuild, prev_files = None, {}
    try:
        _, manifest = store.read_manifest(os.path.abspath(index_dir))
    except IndexVersionError:
        rebuild = "the index has another format version"
    except RaylakeError:
        rebuild = "no index yet"
    else:
        if manifest.get("model") != resolve_model_path(cfg.model) or _params_differ(manifest.get("params", {}), cfg, _CONTENT_PARAMS):
            rebuild = "index parameters or model changed"
        else:
            prev_files = manifest.get("files", {})
    _, dirty, _ = compare_files(lake, prev_files)
    return {
        "lake": lake_path,
        "index_dir": os.path.abspath(index_dir),
        "rebuild": rebuild,
        "new": sorted(f.path for f in dirty if f.path not in prev_files),
        "changed": sorted(f.path for f in dirty if f.path in prev_files),
        "removed": sorted(p for p in prev_files if p not in {f.path for f in lake.files} and p not in lake.refused),
        "unchanged": len(lake.files) - len(dirty),
    }



def build_index(
    lake_path: str,
    index_dir: str = ".raylake",
    *,
    address: str | None = None,
    cfg: IndexConfig | None = None,
    progress: bool | Progress = True,
) -> dict:
    """Index (or incrementally re-index) ``lake_path`` into ``index_dir``; returns the summary."""
    cfg = cfg or RaylakeContext.get_current().index
    prog = progress if isinstance(progress, Progress) else Progress(progress)
    t_start = time.perf_counter()
    model_path = resolve_model_path(cfg.model)
    check_backend(cfg.embed_backend)
    if cfg.embed_backend == "onnx-int8":
        require_onnxruntime()  # here, in one line, not in an embedding actor after profiling

    with prog.stage("scan"):
        lake = open_lake(lake_path)
        index_dir = os.path.abspath(index_dir)
        if os.path.commonpath([index_dir, os.path.abspath(lake.base)]) == os.path.abspath(lake.base) and lake.is_local:
            rel = os.path.relpath(index_dir, lake.base)
            if not rel.split(os.sep)[0].startswith("."):
                raise RaylakeError(f"the index dir {index_dir!r} is inside the lake; use a hidden folder (.raylake) or one outside it")
        store.clear_stale(index_dir)  # a killed build's leftovers go on every run, not only when something changed
        prev = _load_previous(index_dir, cfg, model_path, prog)
        prev_files = prev.manifest.get("files", {}) if prev else {}
        clean, dirty, moved = compare_files(lake, prev_files)
        lake_paths = {f.path for f in lake.files} | set(lake.refused)
        refused_moved = any(prev_files.get(p, {}).get("reason") != r or not prev_files[p].get("refused") for p, r in lake.refused.items())
        removed = sorted(p for p in prev_files if p not in lake_paths)
        stale_edges = prev is not None and _edges_stale(prev.manifest, cfg)
        if stale_edges:
            prog.note("edge parameters or join scoring changed: deriving every edge again (profiles reused)")
        stale_parts = prev is not None and _parts_stale(prev.manifest, cfg)
        if stale_parts and not stale_edges:
            prog.note(f"METIS parts changed to {cfg.num_parts}: partitioning again (profiles and edges reused)")

    if prev is not None and not dirty and not removed and not refused_moved and not stale_edges and not stale_parts:
        manifest = prev.manifest
        if moved:
            manifest["files"] = {f.path: {**prev_files[f.path], "size": f.size, "mtime_ns": f.mtime_ns} for f in lake.files}
            manifest["files"].update({p: prev_files[p] for p in lake.refused})
            store.update_manifest(prev.build, manifest)
        summary = dict(manifest["summary"])
        summary.update(up_to_date=True, changed=0, removed=0, timings_s={**prog.timings, "total": round(time.perf_counter() - t_start, 3)})
        return summary

    with prog.stage("ray_init"):
        prog.note("starting Ray…")
        ray = start_ray(address)

    # ---- profile changed files
    with prog.stage("profile"):
        results: list = []
        if dirty:
            chunks = [dirty[i : i + cfg.files_per_task] for i in range(0, len(dirty), cfg.files_per_task)]
            task = ray.remote(_profile_chunk)
            lake_ref = ray.put(lake)
            pending = [task.remote(lake_ref, ch, cfg) for ch in chunks]
            bar = prog.bar(len(dirty), "profile", "file")
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                part = ray.get(done[0])
                results.extend(part)
                bar.update(len(part))
            bar.close()

    # ---- assemble all tables (reused + new), ids in path order
    fresh: dict[str, TableProfile] = {}
    skipped: dict[str, str] = dict(lake.refused)
    shas: dict[str, str] = {p: "" for p in lake.refused}
    for r in results:
        if isinstance(r, TableProfile):
            fresh[r.path] = r
            shas[r.path] = r.sha256
        else:
            skipped[r[0]] = r[2]
            shas[r[0]] = r[1]
    for f in clean:
        old = prev_files[f.path]
        shas[f.path] = old.get("sha256", "")
        if old.get("status") == "skipped":
            skipped[f.path] = old["reason"]
    paths = sorted(p for p in lake_paths if p not in skipped)
    if not paths:
        reasons = "; ".join(f"{p}: {skipped[p]}" for p in sorted(skipped)[:3]) + ("; ..." if len(skipped) > 3 else "")
        raise RaylakeError(f"nothing to index in {lake.root!r}: all {len(skipped)} files were skipped ({reasons})")
    table_rows, col_records, col_table, sig_parts, value_rows = [], [], [], [], []
    dirty_tables = np.zeros(len(paths), bool)
    for tid, path in enumerate(paths):
        if path in fresh:
            p = fresh[path]
            dirty_tables[tid] = True
            recs, sigs, vals, n_rows, text = p.columns, p.signatures, p.values, p.n_rows, p.table_text
        else:
            recs, sigs, vals = prev.columns[path], prev.sig_rows[path], prev.values[path]
            n_rows, text = prev.tables[path]["n_rows"], prev.tables[path]["text"]
        table_rows.append({"table_id": tid, "path": path, "n_rows": n_rows, "n_cols": len(recs), "sha256": shas.get(path, ""), "text": text})
        for rec, vlist in zip(recs, vals):
            cid = len(col_records)
            rec = {k: v for k, v in rec.items() if k not in ("column_id", "table_id", "path")}
            col_records.append({"column_id": cid, "table_id": tid, "path": path, **rec})
            col_table.append(tid)
            value_rows.extend((v, cid) for v in vlist)
        sig_parts.append(np.asarray(sigs, np.uint32).reshape(len(recs), cfg.num_perm))
    signatures = np.concatenate(sig_parts) if sig_parts else np.zeros((0, cfg.num_perm), np.uint32)
    cols = ColumnArrays.from_records(col_table, col_records)
    if stale_edges:
        dirty_tables[:] = True  # no edge is carried over; every one is derived again
    dirty_cols = dirty_tables[cols.table]

    # ---- embeddings
    with prog.stage("embed"):
        cache = prev.texts if prev else {}
        wanted = [r["header_text"] for r in col_records] + [r["sample_text"] for r in col_records] + [t["text"] for t in table_rows]
        missing = [t for t in dict.fromkeys(wanted) if t not in cache]
        if missing:
            from raylake.index.embed import embed_texts_ray

            bar = prog.bar(len(missing), "embed", "text")
            vecs = embed_texts_ray(missing, model_path, cfg.embed_max_seq_length, cfg.embed_batch_size, bar, cfg.embed_backend)
            bar.close()
            cache = {**cache, **dict(zip(missing, vecs))}
        dim = next(iter(cache.values())).shape[0]
        emb_header = np.stack([cache[r["header_text"]] for r in col_records]).astype(np.float32) if col_records else np.zeros((0, dim), np.float32)
        emb_sample = np.stack([cache[r["sample_text"]] for r in col_records]).astype(np.float32) if col_records else np.zeros((0, dim), np.float32)
        emb_table = np.stack([cache[t["text"]] for t in table_rows]).astype(np.float32)

    # ---- LSH candidate pairs (Ray tasks, one per group of bands)
    with prog.stage("lsh"):
        rows_per_band = max(1, cfg.num_perm // cfg.lsh_bands)
        n_bands = cfg.num_perm // rows_per_band
        eligible = (cols.n_distinct >= 2) & np.isin(cols.dtype, ["int", "text", "date"])
        groups = np.array_split(np.arange(n_bands), min(n_bands, max(1, int(ray.available_resources().get("CPU", 1)) * 2)))
        sig_ref = ray.put(signatures)
        lsh = ray.remote(_lsh_task)
        parts = ray.get([lsh.remote(sig_ref, g, rows_per_band, eligible, dirty_cols, cfg.lsh_max_bucket) for g in groups if len(g)])
        lsh_pairs = unique_pairs(np.concatenate(parts)) if parts else np.empty((0, 2), np.int64)
        del parts, sig_ref
    edges = _carry_edges(prev, paths, dirty_tables) if prev else []

    # ---- union edges (before joins: the columns a union aligns are not join candidates)
    with prog.stage("unions"):
        table_cols = _group(cols.table, len(paths))
        pairs = candidate_table_pairs(cols, signatures, len(paths), emb_table, dirty_tables, lsh_pairs, cfg)
        union_edges, aligned = [], []
        for u in find_unions(cols, table_cols, signatures, emb_header, emb_sample, pairs, cfg):
            aligned.extend((i, j) for i, j, _ in u["matches"])
            union_edges.append(
                {
                    "kind": "union",
                    "src_table": paths[u["src"]],
                    "dst_table": paths[u["dst"]],
                    "src_column": None,
                    "dst_column": None,
                    "score": u["score"],
                    "mapping": json.dumps({col_records[i]["name"]: col_records[j]["name"] for i, j, _ in u["matches"]}),
                    "containment": None,
                    "containment_rev": None,
                    "name_sim": None,
                    "value_sim": None,
                    "row_overlap": u["row_overlap"],
                }
            )
        aligned.extend(_carried_alignments(edges, col_records))

    # ---- join edges
    # the value index, as values.parquet will store it: the joins read it first
    value_strings = pa.array([v for v, _ in value_rows], pa.string())
    value_cids = np.fromiter((c for _, c in value_rows), np.int32, len(value_rows))
    del value_rows
    with prog.stage("joins"):
        held = _held_joins(edges, col_records)
        scored, keep = joins_mod.find_joins(
            cols, signatures, emb_header, emb_table, dirty_cols, lsh_pairs, cfg,
            exclude=np.asarray(aligned, np.int64).reshape(-1, 2), held=held,
            sets=joins_mod.value_sets(cols, value_strings, value_cids),
        )
        del lsh_pairs
        for e in keep:
            s, d = int(scored["src"][e]), int(scored["dst"][e])
            edges.append(
                {
                    "kind": "join",
                    "src_table": col_records[s]["path"],
                    "dst_table": col_records[d]["path"],
                    "src_column": col_records[s]["name"],
                    "dst_column": col_records[d]["name"],
                    "score": float(scored["score"][e]),
                    "mapping": None,
                    "containment": float(scored["containment"][e]),
                    "containment_rev": float(scored["containment_rev"][e]),
                    "name_sim": float(scored["name_sim"][e]),
                    "value_sim": float(scored["value_sim"][e]),
                    "row_overlap": None,
                }
            )
        del scored, keep
        edges.extend(union_edges)

    # ---- METIS parts
    with prog.stage("partition"):
        n_parts = cfg.num_parts or max(1, int(ray.cluster_resources().get("CPU", 2)) // 2)
        part_of = partition_tables(paths, edges, n_parts)

    # ---- write
    with prog.stage("write"):
        writer = store.BuildWriter(index_dir)
        try:
            for t in table_rows:
                t["part"] = int(part_of[t["table_id"]])
            writer.table("tables", pa.Table.from_pylist(table_rows))
            writer.table("columns", pa.Table.from_pylist(col_records, schema=_columns_schema()))
            writer.table("values", pa.table({"value": value_strings, "column_id": pa.array(value_cids, pa.int32())}))
            writer.table("edges", pa.Table.from_pylist(edges, schema=_edges_schema()))
            writer.table("parts", pa.table({"table_id": np.arange(len(paths), dtype=np.int32), "path": paths, "part": part_of.astype(np.int32)}))
            pid = {p: int(part_of[i]) for i, p in enumerate(paths)}
            cross = [
                {"edge": i, "kind": e["kind"], "src_table": e["src_table"], "dst_table": e["dst_table"], "src_part": pid[e["src_table"]], "dst_part": pid[e["dst_table"]]}
                for i, e in enumerate(edges)
                if pid[e["src_table"]] != pid[e["dst_table"]]
            ]
            writer.table("cross_part_edges", pa.Table.from_pylist(cross, schema=_cross_schema()))
            writer.array("signatures", signatures)
            writer.array("emb_header", emb_header)
            writer.array("emb_sample", emb_sample)
            writer.array("emb_table", emb_table)
            for name, arr in (("columns_header", emb_header), ("columns_sample", emb_sample), ("tables", emb_table)):
                writer.faiss(name, arr)
            n_join = sum(e["kind"] == "join" for e in edges)
            n_union = len(edges) - n_join
            summary = {
                "lake": lake.root,
                "index_dir": index_dir,
                "files": len(lake.files) + len(lake.refused),
                "tables": len(paths),
                "columns": len(col_records),
                "rows": int(sum(t["n_rows"] for t in table_rows)),
                "join_edges": n_join,
                "union_edges": n_union,
                "edges_per_table": round(2 * len(edges) / max(1, len(paths)), 2),
                "parts": int(part_of.max() + 1) if len(part_of) else 0,
                "cross_part_edges": len(cross),
                "skipped": len(skipped),
                "skipped_files": {p: skipped[p] for p in sorted(skipped)},
                "changed": len(dirty),
                "removed": len(removed),
                "up_to_date": False,
            }
            files = {}
            for f in lake.files:
                entry = {"size": f.size, "mtime_ns": f.mtime_ns, "sha256": shas.get(f.path, "")}
                entry.update({"status": "skipped", "reason": skipped[f.path]} if f.path in skipped else {"status": "indexed"})
                files[f.path] = entry
            for p, reason in lake.refused.items():  # never opened: no size, no hash
                files[p] = {"size": 0, "mtime_ns": 0, "sha256": "", "status": "skipped", "reason": reason, "refused": True}
            prog.timings["total"] = round(time.perf_counter() - t_start, 3)
            summary["timings_s"] = dict(prog.timings)
            writer.json(
                "manifest.json",
                {
                    "format_version": FORMAT_VERSION,
                    "raylake_version": __version__,
                    "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "lake_root": lake.root,
                    "model": model_path,
                    "embedding_dim": int(emb_table.shape[1]),
                    "params": dataclasses.asdict(cfg),
                    "join_scoring": joins_mod.SCORING,
                    "summary": summary,
                    "files": files,
                },
            )
            writer.commit()
        except BaseException:
            writer.abort()
            raise
    summary["timings_s"] = dict(prog.timings, total=round(time.perf_counter() - t_start, 3))
    return summary


def _group(labels: np.ndarray, n: int) -> list[np.ndarray]:
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(n + 1))
    return [order[bounds[i] : bounds[i + 1]] for i in range(n)]


def _params_differ(params: dict, cfg: IndexConfig, keys) -> bool:
    """Does a previous build's ``params`` (its manifest's) differ from ``cfg`` in any of ``keys``?"""
    return any(params.get(k, _CONTENT_DEFAULTS.get(k)) != getattr(cfg, k) for k in keys)


def _edges_stale(manifest: dict, cfg: IndexConfig) -> bool:
    """Were the previous build's edges derived with other edge parameters or join scoring?"""
    return manifest.get("join_scoring", 1) != joins_mod.SCORING or _params_differ(manifest.get("params", {}), cfg, _EDGE_PARAMS)


def _parts_stale(manifest: dict, cfg: IndexConfig) -> bool:
    """Does the config ask for another number of METIS parts than the previous build's?

    Only an explicit ``num_parts`` counts: the default (one part per CPU pair of the cluster
    that builds) cannot be known without starting Ray, and an up-to-date lake must not need it."""
    return cfg.num_parts is not None and manifest.get("params", {}).get("num_parts") != cfg.num_parts


def _carry_edges(prev: _Previous, paths: list[str], dirty_tables: np.ndarray) -> list[dict]:
    """Previous edges whose two tables are still present and unchanged."""
    clean = {p for i, p in enumerate(paths) if not dirty_tables[i]}
    return [e for e in prev.edges if e["src_table"] in clean and e["dst_table"] in clean]


def _carried_alignments(edges: list[dict], col_records: list[dict]) -> list[tuple[int, int]]:
    """Column-id pairs aligned by the carried-over union edges (their mappings hold names)."""
    cid = {(r["path"], r["name"]): r["column_id"] for r in col_records}
    out = []
    for e in edges:
        if e["kind"] == "union" and e["mapping"]:
            for a, b in json.loads(e["mapping"]).items():
                i, j = cid.get((e["src_table"], a)), cid.get((e["dst_table"], b))
                if i is not None and j is not None:
                    out.append((i, j))
    return out


def _held_joins(edges: list[dict], col_records: list[dict]) -> np.ndarray:
    """Carried-over join edges per column id."""
    cid = {(r["path"], r["name"]): r["column_id"] for r in col_records}
    count = np.zeros(len(col_records), np.int64)
    for e in edges:
        if e["kind"] == "join":
            for end in ((e["src_table"], e["src_column"]), (e["dst_table"], e["dst_column"])):
                if end in cid:
                    count[cid[end]] += 1
    return count


def _columns_schema() -> pa.Schema:
    return pa.schema(
        [
            ("column_id", pa.int32()), ("table_id", pa.int32()), ("path", pa.string()), ("position", pa.int32()),
            ("name", pa.string()), ("norm_name", pa.string()), ("words", pa.string()), ("dtype", pa.string()),
            ("n_rows", pa.int64()), ("null_frac", pa.float64()), ("n_distinct", pa.int64()), ("uniqueness", pa.float64()),
            ("key_like", pa.bool_()), ("name_key_hint", pa.bool_()), ("sample", pa.list_(pa.string())),
            ("summary", pa.string()), ("header_text", pa.string()), ("sample_text", pa.string()),
        ]
    )


def _edges_schema() -> pa.Schema:
    return pa.schema(
        [
            ("kind", pa.string()), ("src_table", pa.string()), ("dst_table", pa.string()), ("src_column", pa.string()),
            ("dst_column", pa.string()), ("score", pa.float64()), ("mapping", pa.string()), ("containment", pa.float64()),
            ("containment_rev", pa.float64()), ("name_sim", pa.float64()), ("value_sim", pa.float64()), ("row_overlap", pa.float64()),
        ]
    )


def _cross_schema() -> pa.Schema:
    return pa.schema(
        [("edge", pa.int64()), ("kind", pa.string()), ("src_table", pa.string()), ("dst_table", pa.string()), ("src_part", pa.int32()), ("dst_part", pa.int32())]
    )
