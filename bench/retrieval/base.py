"""What every method shares: the loaded index (:class:`BenchContext`) and the method protocol.

All methods see the same :class:`~raylake.index.reader.LakeIndex` (so the same table,
column and header+sample embeddings, lake graph and value index) and embed their query
texts with the index's own model. Query embeddings are computed uncached
(:meth:`BenchContext.encode`) so that no method's latency depends on which method ran
before it; index-time artefacts a real system would build once (the BM25 corpus, the
lexicon) are built once here too and not charged to any question.
"""
from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np

from raylake.index.reader import LakeIndex



def top_k(scores: np.ndarray, k: int, exclude=()) -> list[int]:
    """Indices of the ``k`` best scores, ties broken by index (deterministic)."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    ex = set(exclude)
    out = []
    for i in order:
        if int(i) in ex:
            continue
        out.append(int(i))
        if len(out) == k:
            break
    return out


class BenchContext:
    """One loaded index and the index-time artefacts baselines share."""

    def __init__(self, index_dir: str):
        self.index_dir = index_dir
        self.index = LakeIndex.load(index_dir)
        self.paths = self.index.paths
        self.setup_ms: dict[str, float] = {}

    def encode(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` normalised embeddings, never from a cache."""
        if not texts:
            return np.zeros((0, self.index.emb_table.shape[1]), np.float32)
        return self.index.embedder.encode_uncached(list(texts))

    def timed(self, name: str, fn):
        t = time.perf_counter()
        out = fn()
        self.setup_ms[name] = round((time.perf_counter() - t) * 1e3, 1)
        return out

    @functools.cached_property
    def lexicon(self):
        from raylake.intent.lexicon import Lexicon

        return self.timed("lexicon", lambda: Lexicon(self.index))

    @functools.cached_property
    def extractor(self):
        """The offline intent extractor raylake itself uses (no LLM runs in this harness)."""
        from raylake.intent.offline import OfflineExtractor

        return OfflineExtractor(self.index, self.lexicon)

    @functools.cached_property
    def graph(self):
        return self.timed("graph", lambda: self.index.graph)

    @functools.cached_property
    def table_emb(self) -> np.ndarray:
        """Table embeddings (header + first rows), float32 (T, d), unit norm."""
        return np.ascontiguousarray(self.index.emb_table, dtype=np.float32)

    @functools.cached_property
    def bm25(self):
        from bench.retrieval.bm25 import build_corpus

        return self.timed("bm25_corpus", lambda: build_corpus(self.index))

    def column_tables(self) -> np.ndarray:
        return self.index.col_table


class Method:
    """A retriever: ``prepare`` does the budget-independent work once per question,
    ``select`` returns at most ``L`` lake paths. The harness times both and charges
    ``prepare`` to every budget's latency."""

    name = "method"

    def __init__(self, ctx: BenchContext, **params):
        self.ctx = ctx
        self.params = params
        self.stats: dict[str, Any] = {}

    def prepare(self, question: str) -> Any:
        return question

    def select(self, prepared: Any, budget: int) -> list[str]:
        raise NotImplementedError

    def describe(self) -> dict:
        """Parameters recorded in the results' ``meta``."""
        return dict(self.params)
