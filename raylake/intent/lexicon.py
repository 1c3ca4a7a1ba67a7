"""The lake's own vocabulary, for reading questions against it.

Built once per loaded index: every header is split into lemmatised tokens
(``Budget_in_Billions`` → budget, billion); each token gets the columns that use it and an
IDF over tables. A table's *entity words* are the tokens that prefix several of its
headers or its key (``Festival_ID``, ``Festival_Name`` → festival), or that name it from
outside: the headers referencing its bare ``id`` key (``station_id`` → station). In a lake
without table names, that is how a table says what it is about. Glued headers are split
where the lake spells the parts apart (``customerid``, ``fname``), and short entity words
that abbreviate a question's word (``stu`` for student) are found by :meth:`Lexicon.abbreviations`.
Where the lake names its files (``pets_1/Has_Pet.csv``), the file name is a third source
(:func:`name_entity_words`); a neutral name (``t0321.csv``) adds nothing, so such a lake reads
exactly as before.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import numpy as np

from raylake.index.profile import KEY_WORDS
from raylake.lake.names import stem_words

_IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman", "indices": "index", "data": "data",
              "series": "series", "species": "species", "statuses": "status", "addresses": "address", "classes": "class",
              "businesses": "business", "buses": "bus", "analyses": "analysis", "matches": "match", "branches": "branch",
              "churches": "church", "coaches": "coach", "dishes": "dish", "boxes": "box", "taxes": "tax", "wives": "wife",
              "ids": "id", "movies": "movie", "calories": "calorie", "cookies": "cookie", "goalies": "goalie",
              "rookies": "rookie", "zombies": "zombie", "prairies": "prairie"}
_KEEP_S = ("ss", "us", "is", "os", "ics", "news", "yes")


def lemma(word: str) -> str:
    """A crude English singular: enough to align 'departments' with 'department_ID'.

    Words of three letters keep their 's' ('gas', 'bus', 'has'), save 'ids': "customer ids"
    is the ``customer_id`` header, one mention, not a customer and some table's bare ``id``
    (Spider, ``python -m bench.intent_bench``, all 1,701: attribute F1 0.506 → 0.514, entity
    0.612 → 0.613; 400 questions: attribute 0.512 → 0.523, entity 0.618 → 0.619). Nouns in
    '-ie' keep it ('movies' → movie, not 'movy', which no header spells, so 'movies' was read
    as some cell's value; all 1,701: value 0.842 → 0.847; entity 0.6137 → 0.6131, 11 more
    trees, one more right)."""
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


_NOT_ENTITY = {"id", "date", "is", "num", "number", "other", "type", "total"}
_TOKEN = re.compile(r"[a-z]+|\d+")
_POSSESSIVE = re.compile(r"(?<=[a-z])'s\b")


def tokens(text: str) -> list[str]:
    """Lemmatised word tokens; a possessive ``'s`` is no word (``employee's`` → employee)."""
    return [lemma(t) for t in _TOKEN.findall(_POSSESSIVE.sub("", text.lower()))]


class Lexicon:
    def __init__(self, index):
        self.index = index
        words = index.columns["words"]
        self.col_tokens: list[tuple[str, ...]] = [tuple(tokens(w)) for w in words]
        self.col_tokens = _split_glued(self.col_tokens)
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
        key_like, n_rows = index.columns["key_like"], index.columns["n_rows"]
        self.table_entity_words: list[Counter] = []
        for t in range(index.n_tables):
            cnt: Counter = Counter()
            own_key = _own_keys(index.table_columns[t], key_like, n_rows)
            for c in index.table_columns[t]:
                toks = self.col_tokens[c]
                if len(toks) < 2:
                    continue
                if toks[-1] in KEY_WORDS:
                    # the prefix of a table's own key names the table; of a foreign key, a neighbour
                    cnt[toks[0]] += 3 if c in own_key else 1
                    if len(toks) >= 3:
                        cnt["_".join(toks[:-1])] += 3 if c in own_key else 1
                else:
                    cnt[toks[0]] += 1
            cnt.update(name_entity_words(index.paths[t]))
            self.table_entity_words.append(cnt)
        self.referenced: dict[int, dict[str, list[int]]] = {}  # table -> word -> the tables whose headers name it so
        self._referenced_words(index, index.graph)
        self.table_entity_words = [Counter({w: k for w, k in cnt.items() if k >= 2 and w not in _NOT_ENTITY})
                                   for cnt in self.table_entity_words]
        self.entity_tables: dict[str, list[int]] = defaultdict(list)
        for t, cnt in enumerate(self.table_entity_words):
            for w in cnt:
                self.entity_tables[w].append(t)
        self.vocab = set(self.token_cols)
        whole = {toks[0] for toks in self.col_tokens if len(toks) == 1}
        # short entity words that never stand alone as a header: 'stu' (StuID), 'emp', 'dept'
        self._short = sorted(w for w in self.entity_tables if 2 <= len(w) <= 4 and w not in whole and w.isalpha())
        self._abbrev: dict[str, list[str]] = {}

    def abbreviations(self, word: str) -> list[str]:
        """Entity words of this lake that abbreviate ``word``: short (2–4 letters), never a
        whole header, the same first letter and a subsequence of ``word`` at least two letters
        longer (``stu`` → student, ``dept`` → department, ``crs`` → course)."""
        if word not in self._abbrev:
            out = []
            for w in self._short:
                if w[0] == word[:1] and len(word) >= len(w) + 2 and _subsequence(w, word):
                    out.append(w)
            self._abbrev[word] = out
        return self._abbrev[word]

    def _referenced_words(self, index, graph, slack: float = 0.05, min_score: float = 0.6) -> None:
        """Name tables after the headers that reference them: a table whose key is a bare
        ``id`` (``station``: id, name, lat, …) never says what it is, but ``status.station_id``
        and ``trip.start_station_id`` → ``station.id`` do. Each table referencing a generic key
        through a join link at most ``slack`` below that key's best (and at least ``min_score``)
        names it by the word before the key suffix (``station``; of several words, the one most
        such tables use): one such table weighs 2 (as two of the table's own headers starting
        with the word), two or more weigh 3 (as its own key). Weaker links are the lake's many
        chance id overlaps and name nothing."""
        col_of = index.col_index
        paths = index.paths
        for t in range(index.n_tables):
            refs: dict[int, list[tuple[float, int, str]]] = defaultdict(list)  # key column -> (score, table, word)
            for u, links in graph.join[t].items():
                for link in links:
                    if link.dst_table != t or link.score < min_score:
                        continue  # links are stored from the referencing side to the key
                    k = col_of.get((paths[t], link.dst_column))
                    r = col_of.get((paths[u], link.src_column))
                    if k is None or r is None or not index.columns["key_like"][k]:
                        continue
                    key_toks, ref_toks = self.col_tokens[k], self.col_tokens[r]
                    if not key_toks or not all(x in KEY_WORDS for x in key_toks):
                        continue
                    if len(ref_toks) < 2 or ref_toks[-1] not in KEY_WORDS or ref_toks[-2] in KEY_WORDS:
                        continue
                    refs[k].append((link.score, u, ref_toks[-2]))
            cnt = self.table_entity_words[t]
            for found in refs.values():
                best = max(s for s, _, _ in found)
                per_word: dict[str, set[int]] = defaultdict(set)
                for s, u, w in found:
                    if s >= best - slack:
                        per_word[w].add(u)
                if per_word:  # one name per key: the word most referencing tables use
                    w, us = max(per_word.items(), key=lambda x: (len(x[1]), x[0]))
                    cnt[w] += 1 + min(2, len(us))
                    self.referenced.setdefault(t, {})[w] = sorted(us)

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
        for t in sorted(set(phrase_tokens)):  # one order whatever the hash seed: float sums must not follow it
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


def name_entity_words(path: str) -> Counter:
    """The entity words a meaningful file name gives its table, weighed as header evidence is.

    The stem's words as one compound name the table as its own key does (3: ``Has_Pet`` →
    ``has_pet``, ``Student`` → ``student``); of two or more words, the first is a modifier the
    table refers to, counted as a foreign key's prefix is (1: ``Apartment_Bookings`` refers to
    apartments), so it names the table only where headers agree. The last word is not taken as
    the compound's head noun: in exports it is often a kind shared by many tables (``_history``,
    ``_report``, ``_stats``), and on the named Spider lake it added nothing (docs/intent.md).
    Folders are not read: they group tables (a database, a source system) and name none of them.
    A neutral stem (no token is a word, :func:`~raylake.lake.names.stem_words`: ``t0321``, a hash)
    gives nothing, so a lake of neutral names reads exactly as before. Digits are dropped.
    """
    toks = [lemma(w) for w in stem_words(path)]
    if not toks:
        return Counter()
    out = Counter({"_".join(toks): 3})
    if len(toks) >= 2:
        out[toks[0]] += 1
    return out


_GLUED_TAIL = ("id", "name", "date", "type", "code", "detail", "number", "count", "price", "status", "year")
NAME_PARTS = {"f": "first", "l": "last", "m": "middle"}  # the glued name parts: fname, lname, mname


def _own_keys(columns, key_like, n_rows) -> set[int]:
    """The columns that may be the table's own key: the unique ones (``key_like``). A table
    without rows has nothing unique, and every key-named column passes for a key there: its
    one key-named column is its own key (``SongId`` of an empty songs table), several are
    links to others — an empty lap-times table (``raceId``, ``driverId``, ``lap``, ...) is no
    more about drivers or races than a filled one, whose ``driverId`` repeats. Spider (71
    header-only files), ``python -m bench.intent_bench --limit 400``: entity F1 0.609 →
    0.614, attribute 0.505 → 0.507, join 0.377 → 0.378 (0.613 / 0.505 / 0.378 taking the
    first key-named column as the own key); all 1,701: entity 0.599 → 0.606, attribute
    0.501 → 0.502, join 0.376 → 0.379."""
    if any(n_rows[c] for c in columns):
        return {int(c) for c in columns if key_like[c]}
    keys = [int(c) for c in columns if key_like[c]]
    return set(keys) if len(keys) == 1 else set()


def _split_glued(col_tokens: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Headers written without separators, split where the lake itself spells the parts
    apart: ``customerid`` → customer id and ``productname`` → product name when ``customer``
    and ``product`` are tokens of other headers; ``fname`` / ``lname`` → first / last name.
    ``valid`` stays whole (``val`` is no token of this lake)."""
    vocab = {t for toks in col_tokens for t in toks}
    out = []
    for toks in col_tokens:
        split: list[str] = []
        for t in toks:
            for tail in _GLUED_TAIL:
                head = t[: -len(tail)]
                if t.endswith(tail) and head:
                    if tail == "name" and head in NAME_PARTS:
                        split += [NAME_PARTS[head], tail]
                        break
                    if len(head) >= 3 and head in vocab:
                        split += [head, tail]
                        break
            else:
                split.append(t)
        out.append(tuple(split))
    return out


def _subsequence(short: str, word: str) -> bool:
    it = iter(word)
    return all(ch in it for ch in short)


def top(scores: dict[int, float], k: int) -> list[tuple[int, float]]:
    if not scores:
        return []
    items = np.array(list(scores.items()))
    order = np.argsort(-items[:, 1], kind="stable")[:k]
    return [(int(items[i, 0]), float(items[i, 1])) for i in order]
