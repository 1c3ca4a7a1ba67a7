"""Are two retrieval runs' predictions identical? The check behind a behaviour-preserving change.

``python -m bench.same_predictions A.json B.json [--methods raylake ...]``

``A`` and ``B`` are results of :mod:`bench.retrieval` (or :mod:`bench.retrieval.cv`) from the
code before and after a change. Every method present in both (or the ones named), every
budget and every question both scored are compared as ordered table lists; the first
differences are printed and the exit status is 1 when any prediction differs, 0 otherwise.
"""
from __future__ import annotations

import argparse
import json
import sys


def differences(a: dict, b: dict, methods: list[str] | None = None) -> tuple[int, list[str]]:
    """(predictions compared, one line per differing (method, budget, question))."""
    pa, pb = a["predictions"], b["predictions"]
    names = methods or sorted(set(pa) & set(pb))
    n, diff = 0, []
    for m in names:
        if m not in pa or m not in pb:
            raise SystemExit(f"error: method {m!r} is not in both runs")
        for budget in sorted(set(pa[m]) & set(pb[m]), key=int):
            for q in sorted(set(pa[m][budget]) & set(pb[m][budget])):
                n += 1
                if pa[m][budget][q] != pb[m][budget][q]:
                    diff.append(f"{m} L={budget} {q}: {pa[m][budget][q]} != {pb[m][budget][q]}")
    return n, diff


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.same_predictions", description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--methods", nargs="*", default=None)
    args = p.parse_args(argv)
    with open(args.a, encoding="utf-8") as fa, open(args.b, encoding="utf-8") as fb:
        n, diff = differences(json.load(fa), json.load(fb), args.methods)
    if n == 0:
        print("error: the two runs share no (method, budget, question)", file=sys.stderr)
        return 2
    for line in diff[:20]:
        print(line)
    print(f"{n - len(diff)} of {n} predictions identical")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
