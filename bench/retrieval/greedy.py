"""Greedy iterative expansion (MTR-like, GRAFT Eq. 3).

MTR decomposes the question into sub-questions and retrieves one table per sub-question,
then keeps appending the table most relevant to the question or to the most recently
selected table:

    T_{t+1} = argmax_{T ∈ D∖S_t} r(T | Q, T_t),   r = max(cos(Q, T), cos(T_t, T)).

Without an LLM, the sub-questions are the intent trees of raylake's offline extractor
(one per tree: its entity, attribute names and values) — the same decomposition raylake
gets, so the comparison isolates the search. Always returns L tables.
"""
from __future__ import annotations

import numpy as np

from bench.retrieval.base import Method


def sub_questions(graph) -> list[str]:
    out = []
    for t in graph.trees:
        parts = [t.entity] + [a.name for a in t.attributes] + [v for a in t.attributes for v in a.values]
        out.append(" ".join(parts))
    return out


class Greedy(Method):
    name = "greedy"

    def prepare(self, question: str):
        subs = sub_questions(self.ctx.extractor.extract(question))
        emb = self.ctx.encode([question] + subs)
        E = self.ctx.table_emb
        return E @ emb[0], (E @ emb[1:].T).T if subs else np.zeros((0, len(E)))

    def select(self, prepared, budget: int) -> list[str]:
        rel_q, rel_sub = prepared
        E = self.ctx.table_emb
        chosen: list[int] = []
        taken = np.zeros(len(rel_q), bool)
        for row in rel_sub:  # one table per sub-question, in question order
            if len(chosen) == budget:
                break
            s = np.where(taken, -np.inf, row)
            t = int(np.argmax(s))
            chosen.append(t)
            taken[t] = True
        while len(chosen) < min(budget, len(rel_q)):
            last = chosen[-1] if chosen else None
            r = rel_q if last is None else np.maximum(rel_q, E @ E[last])
            t = int(np.argmax(np.where(taken, -np.inf, r)))
            chosen.append(t)
            taken[t] = True
        return [self.ctx.paths[t] for t in chosen]
