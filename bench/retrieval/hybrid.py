"""Hybrid sparse + dense retrieval by reciprocal rank fusion (Pneuma-like, without its LLM).

score(T) = 1/(k + rank_bm25(T)) + 1/(k + rank_dense(T)), ranks from 1, k = 60 (Cormack et
al. 2009). Top L tables.
"""
from __future__ import annotations

import numpy as np

from bench.retrieval.base import Method, top_k
from raylake.intent.lexicon import tokens


def rrf(*score_lists: np.ndarray, k: float = 60.0) -> np.ndarray:
    """Reciprocal-rank-fused scores of several full score vectors over the same items."""
    out = np.zeros(len(score_lists[0]))
    for s in score_lists:
        order = np.argsort(-np.asarray(s), kind="stable")
        rank = np.empty(len(s))
        rank[order] = np.arange(1, len(s) + 1)
        out += 1.0 / (k + rank)
    return out


class Hybrid(Method):
    name = "hybrid"

    def __init__(self, ctx, k: float = 60.0):
        super().__init__(ctx, k=k)
        self.k = k

    def prepare(self, question: str) -> np.ndarray:
        dense = self.ctx.table_emb @ self.ctx.encode([question])[0]
        sparse = np.asarray(self.ctx.bm25.get_scores(tokens(question)))
        return rrf(sparse, dense, k=self.k)

    def select(self, scores: np.ndarray, budget: int) -> list[str]:
        return [self.ctx.paths[t] for t in top_k(scores, budget)]
