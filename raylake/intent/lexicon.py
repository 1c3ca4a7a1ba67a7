"""The lake's own vocabulary, for reading questions against it.

Built once per loaded index: every header is split into lemmatised tokens
(``Budget_in_Billions`` → budget, billion); each token gets the columns that use it and an
IDF over tables. A table's *entity words* are the tokens that prefix several of its
headers or its key (``Festival_ID``, ``Festival_Name`` → festival): in a lake without table
names, that is how a table says what it is about.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import numpy as np

_IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman", "indices": "index", "data": "data",
              "series": "series", "species": "species", "statuses": "status", "addresses": "address", "classes": "class",
              "businesses": "business", "buses": "bus", "analyses": "analysis", "matches": "match", "branches": "branch",
              "churches": "church", "coaches": "coach", "dishes": "dish", "boxes": "box", "taxes": "tax", "wives": "wife"}
_KEEP_S = ("ss", "us", "is", "os", "ics", "news", "yes")


def lemma(word: str) -> str:
    """A crude English singular: enough to align 'departments' with 'department_ID'."""
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if len(w) <= 3 or w.endswith(_KEEP_S):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "sses", "zes")):
        return w[:-2]
    if w.endswith("s"):
        return w[:-1]
    return w


_KEY_SUFFIX = ("id", "code", "key", "no", "number", "num", "ref")
_NOT_ENTITY = {"id", "date", "is", "num", "number", "other", "type", "total"}
_TOKEN = re.compile(r"[a-z]+|\d+")


def tokens(text: str) -> list[str]:
    return [lemma(t) for t in _TOKEN.findall(text.lower())]


class Lexicon:
    def __init__(self, index):
        self.index = index
        words = index.columns["words"]
        self.col_tokens: list[tuple[str, ...]] = [tuple(tokens(w)) for w in words]
        self.token_cols: dict[str, list[int]] = defaultdict(list)
        token_tables: dict[str, set[int]] = defaultdict(set)
        for c, toks in enumerate(self.col_tokens):
            t = int(index.col_table[c])
            for tok in set(toks):
                self.token_cols[tok].append(c)
                token_tables[tok].add(t)
        n = max(1, index.n_tables)
        self.idf = {tok: math.log((n + 1) / (1 + len(ts))) + 1.0 for tok, ts in token_tables.items()}
        self.max_idf = math.log(n + 1) + 1.0
        key_like = index.columns["key_like"]
        self.table_entity_words: list[Counter] = []
        for t in range(index.n_tables):
            cnt: Counter = Counter()
            for c in index.table_columns[t]:
                toks = self.col_tokens[c]
                if len(toks) < 2:
                    continue
                if toks[-1] in _KEY_SUFFIX:
                    # the prefix of a table's own key names the table; of a foreign key, a neighbour
                    cnt[toks[0]] += 3 if key_like[c] else 1
                    if len(toks) >= 3:
                        cnt["_".join(toks[:-1])] += 3 if key_like[c] else 1
                else:
                    cnt[toks[0]] += 1
            self.table_entity_words.append(Counter({w: k for w, k in cnt.items() if k >= 2 and w not in _NOT_ENTITY}))
        self.entity_tables: dict[str, list[int]] = defaultdict(list)
        for t, cnt in enumerate(self.table_entity_words):
            for w in cnt:
                self.entity_tables[w].append(t)
        self.vocab = set(self.token_cols)

    def idf_of(self, tok: str) -> float:
        return self.idf.get(tok, self.max_idf)

    def lexical_scores(self, phrase_tokens: list[str]) -> dict[int, float]:
        """Column → IDF-weighted share of the phrase's tokens found in the column's header,
        times the share of the header the phrase covers (so 'name' ≠ 'customer name')."""
        if not phrase_tokens:
            return {}
        weight = {t: self.idf_of(t) for t in phrase_tokens}
        total = sum(weight.values())
        hits: dict[int, float] = defaultdict(float)
        for t in set(phrase_tokens):
            for c in self.token_cols.get(t, ()):
                hits[c] += weight[t]
        out = {}
        for c, w in hits.items():
            ctoks = self.col_tokens[c]
            cover = len(set(ctoks) & set(phrase_tokens)) / max(1, len(set(ctoks)))
            out[c] = (w / total) * (0.6 + 0.4 * cover)
        return out

    def entity_strength(self, t: int, word: str) -> float:
        """How clearly table ``t`` is about ``word``: 1.0 when it prefixes the table's own key."""
        return min(1.0, self.table_entity_words[t].get(word, 0) / 3.0)

    def entity_score(self, tok: str) -> float:
        """How strongly a token names tables in this lake (0 when no table is 'about' it)."""
        tables = self.entity_tables.get(tok)
        if not tables:
            return 0.0
        return min(1.0, 0.5 + 0.1 * len(tables)) if len(tables) < 60 else 0.5


def top(scores: dict[int, float], k: int) -> list[tuple[int, float]]:
    if not scores:
        return []
    items = np.array(list(scores.items()))
    order = np.argsort(-items[:, 1], kind="stable")[:k]
    return [(int(items[i, 0]), float(items[i, 1])) for i in order]
