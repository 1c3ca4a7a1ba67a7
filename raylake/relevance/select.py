"""Completion: which of the scored candidates a question gets, and when to stop.

The classifier gives every candidate table *t* a probability :math:`p_t` that the question
needs it. Tables are taken as shard clusters (a needed table is needed with every shard,
GRAFT Sec. 3.1), a unit's probability :math:`p_u` being its best member's. With units sorted
by probability, the answer is the prefix :math:`S_k` that maximises the expected score of
the two measures a user judges an answer by — its F1 and whether it is *sufficient* (holds
every needed table) — under independence:

.. math::
    J(S_k) = \\underbrace{\\frac{(1+\\beta^2) \\sum_{t \\in S_k} p_t}{|S_k| + \\beta^2 \\sum_{t} p_t}}_{\\widehat{F_\\beta}}
    \\;+\\; \\gamma \\underbrace{\\prod_{u \\notin S_k} (1 - p_u)}_{P(\\text{sufficient})}

:math:`\\widehat{F_\\beta}` is Jansche's (2007) plug-in approximation of the expected
F-beta, exact in the limit of many tables; the product is the probability that no needed
unit is left out. With β² = 1 and γ = 1 (the defaults) the two terms are the issue's F1 and
Sufficiency, weighted equally, as they are reported: no threshold or weight is tuned on
questions. F1 alone (γ = 0) stops one table short whenever that table is more likely wrong
than right, which costs Sufficiency on every question whose last needed table is uncertain;
the completeness term adds such a table while the chance that the answer is complete rises
by more than the expected F1 falls. ``recall_weight`` (β²) and ``completeness`` (γ) are
exposed for callers with other priorities; the budget L caps the size.

Shapes:
    - ``tables``: ``(C,)`` candidate ids; ``p``: ``(C,)`` probabilities; returns at most L ids.
"""
from __future__ import annotations

import numpy as np


def choose(tables: np.ndarray, p: np.ndarray, shard_of: np.ndarray, budget: int, recall_weight: float = 1.0,
           completeness: float = 1.0) -> list[int]:
    """The table set of highest expected F-beta + γ·P(sufficient) among the prefixes of the probability order."""
    units: dict[int, list[tuple[int, float]]] = {}
    for t, pt in zip(np.asarray(tables).tolist(), np.asarray(p, np.float64).tolist()):
        units.setdefault(int(shard_of[t]), []).append((t, pt))
    ranked = sorted(units.values(), key=lambda u: (-max(x[1] for x in u), min(x[0] for x in u)))
    total = sum(pt for u in ranked for _, pt in u)
    # missed[k]: P(some needed unit is outside the first k), as 1 - Π_{j >= k} (1 - p_j)
    keep = np.ones(len(ranked) + 1)
    for j in range(len(ranked) - 1, -1, -1):
        keep[j] = keep[j + 1] * (1.0 - min(1.0, max(x[1] for x in ranked[j])))
    b2, gamma = float(recall_weight), float(completeness)
    best, best_k, hit, n = -1.0, 0, 0.0, 0
    for k, unit in enumerate(ranked):
        if n + len(unit) > budget:
            if n == 0:  # a first cluster larger than the budget: its best members
                return [t for t, _ in sorted(unit, key=lambda x: -x[1])[:budget]]
            break
        hit += sum(pt for _, pt in unit)
        n += len(unit)
        f = (1 + b2) * hit / (n + b2 * total) if n + total > 0 else 0.0
        f += gamma * keep[k + 1]
        if f > best:
            best, best_k = f, k + 1
    return [t for u in ranked[:best_k] for t, _ in sorted(u)]
