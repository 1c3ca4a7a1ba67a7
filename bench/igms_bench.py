"""IGMS reward micro-benchmark (GRAFT Eq. 6): incremental vs from scratch, batched gains, variants.

    python -m bench.igms_bench [--json] [--repeats N]

On one core (numba, BLAS and torch limited to one thread before they load), with q = 64
prefix units and a = 16 atoms, C = column-set Jaccard + σ₀²·I over random column sets:

- ``incremental_speedup``: one ``IGMSState.add`` at q = 64 (rank-one updates; the state is
  a fresh copy, copying untimed, capacity 128 so no buffer growth is timed) against
  recomputing U from scratch with numpy, ``slogdet(I + Mᵀ solve(C, M))``, at q = 65.
- ``batch_1000_ms``: ``IGMSState.gains`` of 1,000 candidate units against the q = 64 prefix.
- per variant (Table 7): from-scratch reward, incremental add and 1,000 batched gains.
- greedy: lazy vs plain over 16 tables of 4 units, L = 10.

Every figure is the median of repeats after a warm-up (numba compilation excluded). Writes
``bench/results/igms.json``; the last line on stdout is that JSON on one line.
"""
from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy/numba/torch load: they read these once

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from raylake.reward import VARIANTS, IGMSState, igms_value, lazy_greedy, make_state, plain_greedy, reward  # noqa: E402

Q, A, N_CAND, SIGMA0_SQ = 64, 16, 1000, 1e-2
TARGETS = {"incremental_speedup": 20.0, "batch_1000_ms": 5.0}
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "igms.json")


def instance(rng, n: int, universe: int = 120):
    """``n`` units: sparse supports over A atoms and C = Jaccard of random column sets + σ₀²·I."""
    sets = [set(rng.choice(universe, size=int(rng.integers(1, 9)), replace=False).tolist()) for _ in range(n)]
    C = np.array([[len(x & y) / len(x | y) for y in sets] for x in sets]) + SIGMA0_SQ * np.eye(n)
    M = rng.random((n, A)) * (rng.random((n, A)) < 0.3)
    return M, C


def median_us(fn, repeats: int, setup=None, warmup: int = 20) -> float:
    """Median wall time of ``fn(setup())`` in µs; ``setup`` runs untimed before each call."""
    for _ in range(warmup):
        fn(setup() if setup else None)
    times = []
    for _ in range(repeats):
        arg = setup() if setup else None
        t0 = time.perf_counter_ns()
        fn(arg)
        times.append(time.perf_counter_ns() - t0)
    return float(np.median(times)) / 1e3


def run(repeats: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    M, C = instance(rng, Q + 1 + N_CAND)
    Mq, Cq = M[: Q + 1], C[: Q + 1, : Q + 1]
    m, c, s = M[Q], C[Q, :Q].copy(), C[Q, Q]
    Mb, Cb, sb = M[Q + 1 :], C[Q + 1 :, :Q].copy(), np.diag(C)[Q + 1 :].copy()
    mask = np.arange(A) < A // 4  # a quarter of the atoms are relation (edge) atoms

    prefix = IGMSState(A, SIGMA0_SQ, capacity=128)
    prefix.add_many(Mq[:Q], Cq[:Q, :Q])
    add_us = median_us(lambda st: st.add(m, c, s), repeats, prefix.copy)
    numpy_us = median_us(lambda _: np.linalg.slogdet(np.eye(A) + Mq.T @ np.linalg.solve(Cq, Mq))[1] / A, repeats)
    scratch_us = median_us(lambda _: igms_value(Mq, Cq), repeats)
    batch_ms = median_us(lambda _: prefix.gains(Mb, Cb, sb, backend="cpu"), max(repeats // 20, 20)) / 1e3

    variants = {}
    for v in VARIANTS:
        kw = {"edge_mask": mask} if v == "r3_no_coupling" else {}
        st = make_state(v, A, SIGMA0_SQ, capacity=128, **kw)
        st.add_many(Mq[:Q], Cq[:Q, :Q])
        variants[v] = {
            "reward_scratch_us": round(median_us(lambda _: reward(Mq, Cq, v, **kw), repeats // 4), 2),
            "add_us": round(median_us(lambda x: x.add(m, c, s), repeats // 4, st.copy), 2),
            "gains_1000_ms": round(median_us(lambda _: st.gains(Mb, Cb, sb), max(repeats // 40, 10)) / 1e3, 3),
        }

    groups = [list(range(4 * g, 4 * g + 4)) for g in range(16)]
    Mg, Cg = M[:64], C[:64, :64]
    lazy = lazy_greedy(Mg, Cg, groups, 10)
    plain = plain_greedy(Mg, Cg, groups, 10)
    greedy = {
        "lazy_ms": round(median_us(lambda _: lazy_greedy(Mg, Cg, groups, 10), 10, warmup=2) / 1e3, 3),
        "plain_ms": round(median_us(lambda _: plain_greedy(Mg, Cg, groups, 10), 10, warmup=2) / 1e3, 3),
        "lazy_evaluations": lazy.evaluations,
        "plain_evaluations": plain.evaluations,
        "same_choice": lazy.groups == plain.groups,
    }

    out = {
        "incremental_speedup": round(numpy_us / add_us, 1),
        "batch_1000_ms": round(batch_ms, 3),
        "add_us": round(add_us, 2),
        "scratch_numpy_us": round(numpy_us, 2),
        "scratch_igms_value_us": round(scratch_us, 2),
        "speedup_vs_igms_value": round(scratch_us / add_us, 1),
        "copy_us": round(median_us(lambda _: prefix.copy(), repeats), 2),
        "variants": variants,
        "greedy_16_tables_L10": greedy,
        "targets": TARGETS,
        "meets_targets": numpy_us / add_us >= TARGETS["incremental_speedup"] and batch_ms <= TARGETS["batch_1000_ms"],
        "config": {"q": Q, "a": A, "candidates": N_CAND, "sigma0_sq": SIGMA0_SQ, "repeats": repeats, "seed": seed},
        "machine": {"cpu": platform.processor() or platform.machine(), "python": platform.python_version(),
                    "numpy": np.__version__, "threads": 1},
    }
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print only the JSON line")
    ap.add_argument("--repeats", type=int, default=2000, help="timed calls per micro-benchmark")
    args = ap.parse_args(argv)
    res = run(args.repeats)
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w", encoding="utf-8") as fh:
        json.dump(res, fh, indent=2)
        fh.write("\n")
    if not args.json:
        print(f"add at q={Q}, a={A}: {res['add_us']} µs; numpy from scratch {res['scratch_numpy_us']} µs "
              f"-> {res['incremental_speedup']}x (target >= {TARGETS['incremental_speedup']}x)")
        print(f"gains of {N_CAND} candidates: {res['batch_1000_ms']} ms (target <= {TARGETS['batch_1000_ms']} ms)")
        for v, t in res["variants"].items():
            print(f"  {v:18s} scratch {t['reward_scratch_us']:8.2f} µs  add {t['add_us']:6.2f} µs  "
                  f"gains(1000) {t['gains_1000_ms']:.3f} ms")
        g = res["greedy_16_tables_L10"]
        print(f"greedy, 16 tables, L=10: lazy {g['lazy_ms']} ms ({g['lazy_evaluations']} evaluations), "
              f"plain {g['plain_ms']} ms ({g['plain_evaluations']})")
        print(f"wrote {os.path.relpath(RESULTS)}")
    print(json.dumps(res, separators=(",", ":")))


if __name__ == "__main__":
    main()
