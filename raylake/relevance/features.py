"""Question-conditioned features of candidate tables, for the completion classifier.

Candidates of a question: the ``top`` tables by the bi-encoder score, the join neighbours of
its ``seeds`` best, every shard of any of these, and the tables the offline extractor and
the beam chose. A needed table is nearly always one of them (the README's relevance section
gives the candidate recall); ranking all tables of a 100,000-table lake through the
classifier would cost far more for almost nothing.

Each candidate is described by what it is (its own score and rank), by what the question
says about it (words of its headers and name, values it holds), and — what a point-wise
retriever cannot see — by where it lies relative to the question's best tables: joined to
the best one, a bridge between two good ones, a shard of a good one — and by the folder it
lies in, where a lake's folders mean something (``<database>/<table>.csv``): how the folder's
candidates together score and cover the question's words against the best folder's. A question
is usually asked of one folder, and a table whose folder as a whole answers the question is
likelier than an equally similar table alone among strangers. Measured on the named Spider lake
(``python -m bench.retrieval.ablation``: held-out questions of three database-grouped folds, the
candidate classifier refitted on the other folds' rows): every needed table in the first 5 by
probability for 0.678 of the questions with the folder features and 0.573 without them (first 10:
0.834 and 0.734). In a lake of one folder the folder features are zero. The
classifier learns how all of these combine; nothing here is weighted by hand.
"""
from __future__ import annotations

import math
import os

import numpy as np

from raylake.intent.lexicon import tokens
from raylake.lake.names import name_words

FEATURES = (
    "score", "score_gap", "score_z", "log_rank", "cluster_score_gap", "cluster_log_rank",
    "q_cover", "h_cover", "name_cover", "value_hits",
    "join_best", "join_top3", "hop_best", "n_top5_joined", "bridge", "is_shard_mate", "cluster_size", "log_degree",
    "intent", "plan", "named_lake",
    "folder_gap", "folder_log_rank", "folder_cover", "folder_cover_gap", "folder_top2_gap",
)
_STOP = frozenset("a an the of in on at to for by with and or is are was were be what which who whom how many much "
                  "show list find give return all each every that this those these their its his her from as do does "
                  "did have has than more most less least number count name names".split())


def folder_ids(paths: list[str]) -> np.ndarray | None:
    """Each table's folder as an integer id, or None for a lake of one folder (which says nothing about any table)."""
    ids: dict[str, int] = {}
    folder = np.fromiter((ids.setdefault(os.path.dirname(p), len(ids)) for p in paths), np.int64, len(paths))
    return folder if len(ids) > 1 else None


def bridges(graph, joined: list[int]) -> bool:
    """Whether a table joined to each of ``joined`` bridges them: two or more, no two joined directly."""
    return len(joined) >= 2 and not any(graph.join_score(a, b) for a in joined for b in joined if a < b)


class CandidateFeatures:
    """Precomputed per-lake facts and the per-question feature matrix.

    Args:
        index: a loaded :class:`~raylake.index.reader.LakeIndex`.
        graph: its :class:`~raylake.graph.LakeGraph`.
        top: candidates taken by score.
        seeds: best-scored tables whose join neighbours become candidates.

    Shapes:
        - :meth:`candidates` → ``(C,)`` table ids and ``(C, len(FEATURES))`` float32.
    """

    def __init__(self, index, graph, top: int = 30, seeds: int = 3):
        self.index, self.g, self.top, self.seeds = index, graph, top, seeds
        cols = index.columns
        words = cols.get("words") or cols["name"]
        self.head_toks = [frozenset(tok for c in index.table_columns[t] for tok in tokens(words[c] or cols["name"][c]))
                          for t in range(index.n_tables)]
        self.name_toks = [frozenset(tokens(name_words(p))) for p in index.paths]
        df: dict[str, int] = {}
        for t in range(index.n_tables):
            for tok in self.head_toks[t] | self.name_toks[t]:
                df[tok] = df.get(tok, 0) + 1
        n = max(1, index.n_tables)
        self.idf = {tok: math.log((n + 1) / (1 + k)) + 1.0 for tok, k in df.items()}
        self.max_idf = math.log(n + 1) + 1.0
        self.head_total = [sum(self.idf[x] for x in h) or 1.0 for h in self.head_toks]
        self.name_total = [sum(self.idf[x] for x in n) or 1.0 for n in self.name_toks]
        self.shards = [graph.shards(t) for t in range(index.n_tables)]
        self.named = float(np.mean([bool(s) for s in self.name_toks])) if index.n_tables else 0.0
        self.folder = folder_ids(index.paths)
        self.col_table = index.col_table
        self.log_degree = np.log1p([graph.degree(t) for t in range(index.n_tables)]).astype(np.float32)

    # ------------------------------------------------------------------ question side

    def _value_hits(self, question: str) -> dict[int, float]:
        """Table → Σ specificity of the question's word n-grams (1–4) that its columns hold."""
        words = [w.strip(".,;:?!'\"()") for w in question.split()]
        words = [w for w in words if w]
        vals = self.index.values
        out: dict[int, float] = {}
        for n in range(1, 5):
            for i in range(len(words) - n + 1):
                gram = " ".join(words[i : i + n]).lower()
                if n == 1 and (gram in _STOP or len(gram) < 2):
                    continue
                hits = vals.get(gram)
                if hits is None:
                    continue
                tabs = set(self.col_table[hits].tolist())
                w = 1.0 / math.log(2 + len(tabs))
                for t in tabs:
                    out[t] = out.get(t, 0.0) + w
        return out

    def candidate_set(self, score: np.ndarray, intent_tables=(), plan_tables=()) -> np.ndarray:
        """``(C,)`` candidate tables for the bi-encoder's ``score`` over all tables (the module docstring's rule)."""
        order = np.argsort(-score, kind="stable")
        cand = dict.fromkeys(int(t) for t in order[: self.top])
        for s in order[: self.seeds].tolist():
            cand.update(dict.fromkeys(self.g.join[s]))
        cand.update(dict.fromkeys(int(t) for t in intent_tables))
        cand.update(dict.fromkeys(int(t) for t in plan_tables))
        for t in list(cand):
            cand.update(dict.fromkeys(self.shards[t]))
        return np.fromiter(cand, np.int64, len(cand))

    def candidates(self, question: str, score: np.ndarray, intent_tables=(), plan_tables=()) -> tuple[np.ndarray, np.ndarray]:
        """Candidate tables of ``question`` and their features; ``score`` is the bi-encoder's, over all tables."""
        cand = self.candidate_set(score, intent_tables, plan_tables)
        return cand, self.describe(question, cand, score, intent_tables, plan_tables)

    def describe(self, question: str, cand: np.ndarray, score: np.ndarray, intent_tables=(), plan_tables=()) -> np.ndarray:
        """``(C, len(FEATURES))`` features of the tables ``cand`` under ``score``."""
        g = self.g
        order = np.argsort(-score, kind="stable")
        rank = np.empty(len(score), np.int64)
        rank[order] = np.arange(len(score))
        best = [int(t) for t in order[: self.seeds]]
        q_toks = [t for t in dict.fromkeys(tokens(question)) if t not in _STOP]
        q_w = {t: self.idf.get(t, self.max_idf) for t in q_toks}
        q_total = sum(q_w.values()) or 1.0
        q_set = frozenset(q_toks)
        values = self._value_hits(question)
        mu, sd = float(score.mean()), float(score.std()) or 1.0
        top_score = float(score[order[0]])
        top5 = [int(t) for t in order[:5]]
        intent_set, plan_set = set(map(int, intent_tables)), set(map(int, plan_tables))
        hop = g.closure([best[0]], 2)
        clusters: dict[int, float] = {}
        for t in cand:  # a shard cluster's best score: a shard is as relevant as its best sibling
            c = int(g.shard_of[t])
            clusters[c] = max(clusters.get(c, -1.0), float(score[t]))
        cl_order = sorted(clusters.values(), reverse=True)
        folder = self._folders(cand, score, q_w, q_total)
        X = np.zeros((len(cand), len(FEATURES)), np.float32)
        for i, t in enumerate(cand.tolist()):
            s = float(score[t])
            cs = clusters[int(g.shard_of[t])]
            head, name = self.head_toks[t], self.name_toks[t]
            own = head | name
            h_total, n_total = self.head_total[t], self.name_total[t]
            joined = [u for u in top5 if u != t and u in g.join[t]]
            shards = self.shards[t]
            X[i] = (
                s, top_score - s, (s - mu) / sd, math.log1p(rank[t]), top_score - cs, math.log1p(cl_order.index(cs)),
                sum(w for x, w in q_w.items() if x in own) / q_total,
                sum(self.idf[x] for x in head & q_set) / h_total,
                sum(self.idf[x] for x in name & q_set) / n_total if name else 0.0,
                values.get(t, 0.0),
                max((g.join_score(t, u) for u in best[:1] if u != t), default=0.0),
                max((g.join_score(t, u) for u in best if u != t), default=0.0),
                hop.get(t, 3),
                len(joined),
                float(bridges(g, joined)),
                float(len(shards) > 1 and any(u != t and rank[u] < rank[t] for u in shards)),
                len(shards),
                self.log_degree[t],
                float(t in intent_set or any(u in intent_set for u in shards)),
                float(t in plan_set),
                self.named,
                *folder[i],
            )
        return X

    def _folders(self, cand: np.ndarray, score: np.ndarray, q_w: dict[str, float], q_total: float) -> np.ndarray:
        """``(C, 5)`` folder features: its best candidate's score and its rank among the folders by it, the share of
        the question's words its candidates cover, the top-two score sum, each also as a gap to the best folder."""
        out = np.zeros((len(cand), 5), np.float32)
        if self.folder is None:
            return out
        best: dict[int, float] = {}
        two: dict[int, list[float]] = {}
        toks: dict[int, set] = {}
        for t in cand.tolist():
            f, s = int(self.folder[t]), float(score[t])
            best[f] = max(best.get(f, -1.0), s)
            two[f] = sorted([*two.get(f, []), s])[-2:]
            toks.setdefault(f, set()).update(self.head_toks[t] | self.name_toks[t])
        cover = {f: sum(w for x, w in q_w.items() if x in ts) / q_total for f, ts in toks.items()}
        top2 = {f: sum(v) for f, v in two.items()}
        ranked = sorted(best, key=lambda f: -best[f])
        rank = {f: r for r, f in enumerate(ranked)}
        b, bc, b2 = best[ranked[0]], max(cover.values()), max(top2.values())
        for i, t in enumerate(cand.tolist()):
            f = int(self.folder[t])
            out[i] = (b - best[f], math.log1p(rank[f]), cover[f], bc - cover[f], b2 - top2[f])
        return out
