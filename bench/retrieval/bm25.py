"""BM25 (Okapi, rank-bm25) over each table's header and sample values.

A table's document is its file and folder name words when they mean something
(:func:`raylake.lake.names.name_words`: none on a lake of neutral names), then, per column, its header words and its sampled distinct values
(``columns.sample`` of the index), tokenised and lemmatised the way raylake's lexicon
tokenises headers, so ``Budget_in_Billions`` and "budgets in billions" share tokens.
Top L tables by BM25 score; ties by table order.
"""
from __future__ import annotations

import numpy as np
from rank_bm25 import BM25Okapi

from bench.retrieval.base import Method, top_k
from raylake.intent.lexicon import tokens
from raylake.lake.names import name_words


def build_corpus(index) -> BM25Okapi:
    docs = []
    cols = index.columns
    for t in range(index.n_tables):
        toks: list[str] = tokens(name_words(index.paths[t]))  # file and folder names, when they mean something
        for c in index.table_columns[t]:
            toks += tokens(cols["words"][c] or cols["name"][c])
            for v in cols["sample"][c] or ():
                toks += tokens(str(v))
        docs.append(toks or ["<empty>"])
    return BM25Okapi(docs)


class BM25(Method):
    name = "bm25"

    def prepare(self, question: str) -> np.ndarray:
        return np.asarray(self.ctx.bm25.get_scores(tokens(question)), dtype=np.float64)

    def select(self, scores: np.ndarray, budget: int) -> list[str]:
        return [self.ctx.paths[t] for t in top_k(scores, budget)]
