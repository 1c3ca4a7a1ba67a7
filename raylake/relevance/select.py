"""The stop: how many of the ordered candidates a question gets.

Every candidate table *t* in an order (the greedy extension's picks, :mod:`.complete`, or a
classifier's probabilities sorted, :func:`choose`) has a probability :math:`p_t` that the
question needs it. The answer is the prefix :math:`S_k` of the order that
maximises the expected score of the two measures a user judges an answer by — its F1 and
whether it is *sufficient* (holds every needed table) — under independence:

.. math::
    J(S_k) = \\underbrace{\\frac{(1+\\beta^2) \\sum_{t \\in S_k} p_t}{|S_k| + \\beta^2 \\sum_{t} p_t}}_{\\widehat{F_\\beta}}
    \\;+\\; \\gamma \\underbrace{\\prod_{t \\notin S_k} (1 - p_t)}_{P(\\text{sufficient})}

:math:`\\widehat{F_\\beta}` is Jansche's (2007) plug-in approximation of the expected
F-beta, exact in the limit of many tables; the product is the probability that no needed
table is left out. With β² = 1 and γ = 1 (the defaults) the two terms are the issue's F1 and
Sufficiency, weighted equally, as they are reported: no threshold or weight is tuned on
questions. F1 alone (γ = 0) stops one table short whenever that table is more likely wrong
than right, which costs Sufficiency on every question whose last needed table is uncertain;
the completeness term adds such a table while the chance that the answer is complete rises
by more than the expected F1 falls. ``recall_weight`` (β²) and ``completeness`` (γ) are
exposed for callers with other priorities; the budget L caps the size.

Tables, not shard clusters, are the units. A needed table is needed with every shard (GRAFT
Sec. 3.1), but the index's shard clusters are single-linkage closures of union links, which
chain tables of a common generic schema (``id, name``) together: on the Spider lake they
reach 13 tables with a pairwise precision of 0.25 against the true shards (recall 0.98).
Taken as units, a cluster's best member carried siblings the classifier gives p ≈ 0 and,
past the budget, emptied the answer (72 of 1,701 named-lake questions). The classifier sees
each table's shard evidence itself (its cluster-best features), so true shards get similar
probabilities and are taken together by this rule.

Shapes:
    - ``tables``: ``(C,)`` candidate ids; ``p``: ``(C,)`` probabilities; returns at most L ids.
"""
from __future__ import annotations

import numpy as np


def choose(tables: np.ndarray, p: np.ndarray, budget: int, recall_weight: float = 1.0,
           completeness: float = 1.0) -> list[int]:
    """The table set of highest expected F-beta + γ·P(sufficient) among the prefixes of the probability order."""
    tables = np.asarray(tables, np.int64)
    p = np.clip(np.asarray(p, np.float64), 0.0, 1.0)
    order = sorted(range(len(tables)), key=lambda i: (-p[i], int(tables[i])))
    k = best_prefix(p[order[:budget]], p[order[budget:]], recall_weight, completeness)
    return [int(tables[i]) for i in order[:k]]


def best_prefix(q: np.ndarray, rest: np.ndarray, recall_weight: float = 1.0, completeness: float = 1.0) -> int:
    """Length of the prefix of ``q`` (probabilities of tables in the order they would be added)
    of highest :math:`J`, with ``rest`` the probabilities of the tables that cannot be added."""
    q = np.clip(np.asarray(q, np.float64), 0.0, 1.0)
    rest = np.clip(np.asarray(rest, np.float64), 0.0, 1.0)
    if not len(q):
        return 0
    # keep[k]: P(no needed table outside the first k) = Π_{j >= k} (1 - q_j) · Π_rest (1 - p)
    keep = np.append(np.cumprod((1.0 - q)[::-1])[::-1], 1.0) * np.prod(1.0 - rest)
    b2, gamma, total = float(recall_weight), float(completeness), float(q.sum() + rest.sum())
    k = np.arange(1, len(q) + 1)
    f = (1 + b2) * np.cumsum(q) / np.maximum(k + b2 * total, 1e-12) + gamma * keep[1:]
    return int(np.argmax(f)) + 1
