"""Completion by plan extension: the table a question's answer needs next, given the tables already in it.

Not the engine's default (``RelevanceConfig.extend``): once the candidate classifier read a table's
folder, choosing the candidates by their own probability measured better on both Spider lakes
(docs/relevance.md, "The saved models' stop, and choosing by probability again"). It is trained
with every model and kept selectable so that each retraining can measure the two again
(``bench.retrieval.cv --compare-extend``).

The candidate classifier (:mod:`.classifier` over :mod:`.features`) gives each table a
probability :math:`p_t` on its own evidence, relative to the encoder's best tables. What a
question needs next depends on what the answer already holds: the far end of a bridge once
the bridge is in, a shard once its sibling is, the table beside the first one (in its join
neighbourhood, in its folder) rather than an equally similar table elsewhere. Measured on
the named Spider lake (fold models, held-out questions): "the average prices of all products
from each manufacture, and each company's name" gets ``manufactory_1/Products.csv`` first
and ``manufactory_1/Manufacturers.csv`` p = 0.00, behind ``Products`` files of five other
databases; ranked by p, every needed table is in the first 5 for 0.59 of the questions.

So the answer is decoded greedily, a classifier over plan extensions (the learned-relevance
issue, item 2):

.. math::
    S_1 = \\{\\arg\\max_t p_t\\}, \\qquad
    S_{k+1} = S_k \\cup \\{\\arg\\max_{t \\in \\mathcal{P}(S_k)} q(t \\mid S_k)\\}

where :math:`q` is a second :class:`~.classifier.CompletionClassifier` over the candidate's own
features, :math:`p_t`, and its relation to :math:`S_k` (:data:`STATE_FEATURES`: join score to,
and tables joined in, :math:`S_k`; hops from it; bridge between two of its tables; shard of one;
share of it in the same folder), and :math:`\\mathcal{P}(S)` is the ``pool`` best candidates by
:math:`p` plus the candidates joined to or shards of a table of :math:`S`.

**Training** (teacher forcing, :func:`Completion.states`): the states are :math:`S_1`, then
:math:`S_1` plus the needed tables one at a time in order of :math:`p`, and finally
:math:`S_1` plus all of them, where every pool table is a negative (so :math:`q` learns that
nothing more is needed); each pool table is labelled by whether the question needs it.

**The stop.** A pick's :math:`q` is the maximum over a pool, in states that teacher forcing
never showed (after a wrong pick), so it is not the probability that the pick is needed. It is
calibrated by isotonic regression (:func:`isotonic`, pool-adjacent-violators) fitted on the
picks of decoders cross-fitted on halves of the training questions, each decoding the half it
was not fitted on; the prefix of highest expected F-beta + γ·P(sufficient) of those calibrated
probabilities is the answer (:func:`.select.best_prefix`).

Args:
    graph: the lake's :class:`~raylake.graph.LakeGraph`.
    folder: each table's folder id, or None for a lake of one folder (:func:`.features.folder_ids`).
    shards: each table's shard cluster (:attr:`.features.CandidateFeatures.shards`).
    pool: candidates taken into every state's pool by first-stage probability.

Shapes:
    - ``cand`` ``(C,)``, ``X`` ``(C, F)``, ``p`` ``(C,)`` → rows ``(P, width(F))``: ``F`` is the model's
      features, :data:`.features.FEATURES` or (a model trained before features were added) a prefix of them.
"""
from __future__ import annotations

import numpy as np

from raylake.relevance.features import bridges
from raylake.relevance.select import best_prefix

STATE_FEATURES = ("s_join", "s_joined", "s_hop", "s_bridge", "s_shard", "s_folder", "s_size", "s_best_p")


def width(n_features: int) -> int:
    """A row: the candidate's features, p and log rank by p, the state's."""
    return n_features + 2 + len(STATE_FEATURES)


class Completion:
    def __init__(self, graph, folder: np.ndarray | None, shards: list[list[int]], pool: int = 20):
        self.g, self.folder, self.shards, self.pool_size = graph, folder, shards, pool

    # ------------------------------------------------------------------ one state

    def pool(self, S: list[int], order: list[int], pos: dict[int, int]) -> list[int]:
        """:math:`\\mathcal{P}(S)`: the best candidates by p, and those joined to or sharded with a table of ``S``."""
        out = dict.fromkeys(order[: self.pool_size])
        for u in S:
            out.update(dict.fromkeys(t for t in self.g.join[u] if t in pos))
            out.update(dict.fromkeys(t for t in self.shards[u] if t in pos))
        inside = set(S)
        return [t for t in out if t not in inside]

    def rows(self, S: list[int], pool: list[int], X: np.ndarray, p: np.ndarray, pos: dict[int, int],
             rank: dict[int, int]) -> np.ndarray:
        """``(len(pool), width)`` features of extending ``S`` by each table of ``pool``."""
        g, inside = self.g, set(S)
        near = {u for s in S for u in (*g.join[s], *g.union[s])} - inside  # one structural link from S
        best_p = max(float(p[pos[u]]) for u in S)
        idx = [pos[t] for t in pool]
        st = np.zeros((len(pool), len(STATE_FEATURES)), np.float32)
        for i, t in enumerate(pool):
            js = [g.join_score(t, u) for u in S]
            joined = [u for u, s in zip(S, js) if s > 0]
            # links from S to t: 1, 2 through a table one link from S, else 3 (farther is not told apart)
            hop = 1 if t in near else 2 if any(u in near for u in (*g.join[t], *g.union[t])) else 3
            st[i] = (
                max(js), len(joined), hop,
                float(bridges(g, joined)),
                float(any(u in inside for u in self.shards[t])),
                sum(self.folder[u] == self.folder[t] for u in S) / len(S) if self.folder is not None else 0.0,
                len(S), best_p,
            )
        first = np.stack([p[idx], np.log1p([rank[t] for t in pool])], 1).astype(np.float32)
        return np.hstack([X[idx], first, st])

    @staticmethod
    def _order(cand: np.ndarray, p: np.ndarray):
        order = [int(cand[i]) for i in np.argsort(-p, kind="stable")]
        return order, {t: i for i, t in enumerate(cand.tolist())}, {t: r for r, t in enumerate(order)}

    # ------------------------------------------------------------------ training and decoding

    def states(self, cand: np.ndarray, X: np.ndarray, p: np.ndarray, gold) -> tuple[np.ndarray, np.ndarray]:
        """Teacher-forced training rows of one question and their labels (the module docstring)."""
        gold = set(gold)
        order, pos, rank = self._order(cand, p)
        empty = np.zeros((0, width(X.shape[1])), np.float32), np.zeros(0, np.float32)
        if not order:
            return empty
        S = [order[0]]
        rest = [t for t in order if t in gold and t != order[0]]
        Xs, ys = [], []
        for k in range(len(rest) + 1):
            pool = self.pool(S, order, pos)
            if pool:
                Xs.append(self.rows(S, pool, X, p, pos, rank))
                ys.append(np.fromiter((t in gold for t in pool), np.float32, len(pool)))
            if k < len(rest):
                S = S + [rest[k]]
        if not Xs:
            return empty
        return np.concatenate(Xs), np.concatenate(ys)

    def decode(self, classifier, cand: np.ndarray, X: np.ndarray, p: np.ndarray, budget: int):
        """Greedy extension up to ``budget`` tables: ``(tables, q, rest)`` — the picks in order, each
        pick's probability (the first one's :math:`p`, then :math:`q`), and the last state's
        probabilities of the pool tables not picked (what the stop counts as left out)."""
        order, pos, rank = self._order(cand, p)
        if not order or budget < 1:
            return [], np.zeros(0), np.zeros(0)
        S, q, rest = [order[0]], [float(p[pos[order[0]]])], np.zeros(0)  # one pick: the stop keeps it whatever is left
        while len(S) < budget:
            pool = self.pool(S, order, pos)
            if not pool:
                break
            qp = classifier.predict(self.rows(S, pool, X, p, pos, rank)).astype(np.float64)
            j = int(np.argmax(qp))
            S.append(pool[j])
            q.append(float(qp[j]))
            rest = np.delete(qp, j)
        return S, np.asarray(q), rest


def isotonic(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Non-decreasing least-squares fit of ``y`` on ``x`` (pool-adjacent-violators): the knots
    ``(xs, ys)`` of a function flat over each pooled block and linear between blocks, read with ``np.interp``."""
    o = np.argsort(x, kind="stable")
    blocks: list[list[float]] = []  # [left x, right x, mean y, weight]
    for xi, yi in zip(np.asarray(x, np.float64)[o], np.asarray(y, np.float64)[o]):
        blocks.append([xi, xi, yi, 1.0])
        while len(blocks) > 1 and blocks[-2][2] >= blocks[-1][2]:
            (l, _, a, wa), (_, r, b, wb) = blocks[-2], blocks[-1]
            blocks[-2:] = [[l, r, (a * wa + b * wb) / (wa + wb), wa + wb]]
    xs, ys = [], []
    for l, r, v, _ in blocks:
        xs.extend([l, r] if r > l else [l])
        ys.extend([v, v] if r > l else [v])
    return np.asarray(xs), np.asarray(ys)


class Calibration:
    """A monotone map from a decoder's raw pick probability to the probability that the pick is needed."""

    def __init__(self, xs=(0.0, 1.0), ys=(0.0, 1.0)):
        self.xs, self.ys = np.asarray(xs, np.float64), np.asarray(ys, np.float64)

    @classmethod
    def fit(cls, q: np.ndarray, needed: np.ndarray) -> "Calibration":
        if len(q) < 2:
            return cls()
        return cls(*isotonic(q, needed))

    def __call__(self, q: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(q, np.float64), self.xs, self.ys) if len(q) else np.zeros(0)

    def to_dict(self) -> dict:
        # Full precision: raw pick probabilities span 1e-20..1, and knots rounded to a few decimals collapse
        # onto 0, which moved the stop of every question whose tail picks are that small.
        return {"x": [float(v) for v in self.xs], "y": [float(v) for v in self.ys]}

    @classmethod
    def from_dict(cls, d: dict) -> "Calibration":
        return cls(d["x"], d["y"])


def choose_sequence(tables: list[int], q: np.ndarray, rest: np.ndarray, calibration: Calibration,
                    recall_weight: float = 1.0, completeness: float = 1.0) -> list[tuple[int, float]]:
    """The decoded prefix the stop keeps, each table with its probability (calibrated after the first)."""
    if not tables:
        return []
    probs = np.concatenate([q[:1], calibration(q[1:])])
    k = best_prefix(probs, calibration(rest), recall_weight, completeness)
    return [(int(t), float(v)) for t, v in zip(tables[:k], probs[:k])]

