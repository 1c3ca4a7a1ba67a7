"""Embedding backends against each other on a lake's own texts (issue 35, "Fast embeddings").

    python -m bench.embed_bench --index-dir IDX [--limit N] [--threads 2] [--repeats 3] [--out bench/results/embed.json]

Takes the unique texts an index embeds (column headers, header + sample values, table texts),
optionally a seeded sample of ``--limit`` of them, and encodes them with every backend of
:class:`raylake.index.embed.Embedder` in one process, on the same threads, alternating backends
over ``--repeats`` rounds (the best round counts: the machine is shared). Reports texts/s per
backend, the speed-up against torch, and the cosine of each backend's vectors to torch's, by text
kind (mean, 1st percentile, min). The first ONNX load exports and quantises the model (timed
apart, ``load_s``; later loads read the cache).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from bench import missing_path


def lake_texts(index_dir: str) -> dict[str, list[str]]:
    """The index's texts by kind, each text once (a header that is also a sample text counts as a header)."""
    from raylake.index.reader import LakeIndex

    idx = LakeIndex(index_dir)
    seen: set[str] = set()
    out = {}
    for kind, xs in (("header", idx.columns["header_text"]), ("sample", idx.columns["sample_text"]), ("table", idx.tables["text"])):
        out[kind] = [x for x in dict.fromkeys(xs) if x not in seen]
        seen.update(out[kind])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.embed_bench")
    ap.add_argument("--index-dir", default=".raylake", help="a raylake index (its texts are embedded)")
    ap.add_argument("--limit", type=int, default=None, help="embed a seeded sample of this many texts")
    ap.add_argument("--threads", type=int, default=2, help="intra-op threads of both backends")
    ap.add_argument("--repeats", type=int, default=3, help="rounds per backend, alternating; the fastest counts")
    ap.add_argument("--max-seq-length", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--out", default="bench/results/embed.json")
    args = ap.parse_args()
    if code := missing_path(ap.prog, index_dir=args.index_dir):
        sys.exit(code)
    import torch

    from raylake.index.embed import BACKENDS, Embedder

    torch.set_num_threads(args.threads)
    by_kind = lake_texts(args.index_dir)
    kinds = [k for k, xs in by_kind.items() for _ in xs]
    texts = [x for xs in by_kind.values() for x in xs]
    if args.limit and args.limit < len(texts):
        pick = np.sort(np.random.default_rng(0).choice(len(texts), args.limit, replace=False))
        texts, kinds = [texts[i] for i in pick], [kinds[i] for i in pick]
    kinds = np.asarray(kinds)
    embedders, load_s = {}, {}
    for b in BACKENDS:
        t0 = time.perf_counter()
        embedders[b] = Embedder(None, args.max_seq_length, args.batch_size, backend=b, threads=args.threads)
        load_s[b] = round(time.perf_counter() - t0, 2)
    best = {b: float("inf") for b in BACKENDS}
    vecs = {}
    for _ in range(args.repeats):
        for b in BACKENDS:
            t0 = time.perf_counter()
            vecs[b] = embedders[b].encode_uncached(texts)
            best[b] = min(best[b], time.perf_counter() - t0)
    def stats(c):
        return {"mean": round(float(c.mean()), 5), "p1": round(float(np.percentile(c, 1)), 5), "min": round(float(c.min()), 5)}

    runs = {}
    for b in BACKENDS:
        cos = (vecs[b] * vecs["torch"]).sum(1)
        runs[b] = {
            "seconds": round(best[b], 3), "texts_per_s": round(len(texts) / best[b], 1),
            "speedup_vs_torch": round(best["torch"] / best[b], 3), "load_s": load_s[b],
            "cosine_to_torch": None if b == "torch" else
            {**{k: stats(cos[kinds == k]) for k in by_kind if (kinds == k).any()}, "all": stats(cos)},
        }
    result = {"bench": "embed", "index_dir": args.index_dir, "texts": len(texts),
              "by_kind": {k: int((kinds == k).sum()) for k in by_kind}, "threads": args.threads, "repeats": args.repeats,
              "max_seq_length": args.max_seq_length, "batch_size": args.batch_size, "runs": runs,
              "load_avg_1m": round(os.getloadavg()[0], 1), "cpu": _cpu_flags()}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result))


def _cpu_flags() -> str:
    """The SIMD the int8 kernels can use (VNNI: avx512_vnni / avx_vnni, the int8 dot products), recorded with the figures."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return "unknown"
    return " ".join(x for x in ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8") if x in flags) or "none of avx2/avx512/vnni"


if __name__ == "__main__":
    main()
