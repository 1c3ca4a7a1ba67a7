"""Point-wise dense retrieval (DTR-like, GRAFT Eq. 2): rank tables by cos(emb(Q), emb(T)).

``emb(T)`` is the index's table embedding (header plus the first rows, the text DTR
encodes); the top L tables are returned, always L of them.
"""
from __future__ import annotations

import numpy as np

from bench.retrieval.base import Method, top_k


class Dense(Method):
    name = "dense"

    def prepare(self, question: str) -> np.ndarray:
        q = self.ctx.encode([question])[0]
        return self.ctx.table_emb @ q

    def select(self, scores: np.ndarray, budget: int) -> list[str]:
        return [self.ctx.paths[t] for t in top_k(scores, budget)]
