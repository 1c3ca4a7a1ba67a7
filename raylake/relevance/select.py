"""Completion: which of the scored candidates a question gets, and when to stop.

The classifier gives every candidate table *t* a probability :math:`p_t` that the question
needs it. Tables are taken as shard clusters (a needed table is needed with every shard,
GRAFT Sec. 3.1), a unit's probability being its best member's. With units sorted by
probability, the answer is the prefix :math:`S_k` that maximises the expected F1 under
independence (Jansche 2007's plug-in approximation, exact in the limit of many tables):

.. math::
    \\widehat{F_1}(S_k) = \\frac{2 \\sum_{t \\in S_k} p_t}{|S_k| + \\sum_{t} p_t}

so a question stops after as many tables as its probabilities support, one table short
only when that table is more likely wrong than right for the set — no threshold is tuned.
``recall_weight`` > 1 tilts the objective towards completeness (an F-beta with β² =
``recall_weight``), for callers that would rather over-include; the budget L caps the size.

Shapes:
    - ``tables``: ``(C,)`` candidate ids; ``p``: ``(C,)`` probabilities; returns at most L ids.
"""
from __future__ import annotations

import numpy as np


def choose(tables: np.ndarray, p: np.ndarray, shard_of: np.ndarray, budget: int, recall_weight: float = 1.0) -> list[int]:
    """The table set of highest expected F-beta among the prefixes of the probability order."""
    units: dict[int, list[tuple[int, float]]] = {}
    for t, pt in zip(np.asarray(tables).tolist(), np.asarray(p, np.float64).tolist()):
        units.setdefault(int(shard_of[t]), []).append((t, pt))
    ranked = sorted(units.values(), key=lambda u: (-max(x[1] for x in u), min(x[0] for x in u)))
    total = sum(pt for u in ranked for _, pt in u)
    b2 = float(recall_weight)
    best, best_k, hit, n = -1.0, 0, 0.0, 0
    for k, unit in enumerate(ranked):
        if n + len(unit) > budget:
            if n == 0:  # a first cluster larger than the budget: its best members
                return [t for t, _ in sorted(unit, key=lambda x: -x[1])[:budget]]
            break
        hit += sum(pt for _, pt in unit)
        n += len(unit)
        f = (1 + b2) * hit / (n + b2 * total) if n + total > 0 else 0.0
        if f > best:
            best, best_k = f, k + 1
    return [t for u in ranked[:best_k] for t, _ in sorted(u)]
