"""The offline intent extractor: an Appendix A intent graph from a question, without an LLM.

It reads the question against the lake's own vocabulary (:mod:`.lexicon`) and value index:

1. **Values** — quoted strings, dates and numbers, capitalised spans, and any 1–4-word
   span found verbatim (normalised) in the value index. A value found in the index names
   the columns that hold it, hence the attribute it constrains.
2. **Mentions** — the remaining content words, segmented greedily into the longest spans
   that occur together in some header; each span is matched to columns lexically (IDF
   overlap with lemmatised header tokens) and semantically (cosine with the header
   embeddings through FAISS).
3. **Entities and attributes** — a mention whose head word names tables in this lake
   (prefix of several headers or of a key, ``Festival_ID`` / ``Festival_Name``) and is
   not itself a column, or that follows "each", "of", "which", "how many", is an entity;
   the others are attributes, attached to the entity whose candidate tables hold their
   best column, else to the nearest entity before them.
4. **Joins** — entities are chained in question order (a question relates what it names);
   when the lake shows two named entities connect only through a table nobody named, a
   bridge tree for that table is inserted between them (Appendix A, rule 3).

Aggregations (count, average, ...) and comparisons (more than, before, ...) are recognised
and kept as evidence on the attribute they apply to. Every tree, attribute and join
records the words it came from and the lake objects that support it. Deterministic.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from raylake.intent.lexicon import Lexicon, lemma, tokens, top
from raylake.intent.model import Attribute, IntentGraph, IntentTree, Join

STOP = set(
    """a an the of in on at to for from by with without and or but not no nor is are was were be been being has have had
    do does did what which who whom whose where when why how show list find give return tell display get provide
    me us all any each every some that this these those their there them they its it his her as than then also
    please i we you your our my whom whose if into onto per out up down about over under same other another
    there's one ones only just both either neither very more most less least many much number numbers count
    distinct different unique total average mean maximum minimum max min sum order ordered sort sorted descending ascending
    alphabetical alphabetically top bottom first last highest lowest largest smallest greatest biggest fewest least
    such whose whom whether between including included include based associated related corresponding respectively
    name names""".split()
)
# 'name' is a stopword for segmentation only; it is kept as an attribute (see _ATTR_WORDS)
_ATTR_WORDS = {"name", "names"}
AGGREGATE = {"average": "avg", "mean": "avg", "total": "sum", "sum": "sum", "maximum": "max", "max": "max", "highest": "max",
             "largest": "max", "biggest": "max", "greatest": "max", "most": "max", "oldest": "max", "minimum": "min",
             "min": "min", "lowest": "min", "smallest": "min", "least": "min", "fewest": "min", "youngest": "min",
             "count": "count", "number": "count", "many": "count"}
COMPARE = [("more than", ">"), ("greater than", ">"), ("larger than", ">"), ("higher than", ">"), ("bigger than", ">"),
           ("at least", ">="), ("at most", "<="), ("less than", "<"), ("fewer than", "<"), ("lower than", "<"),
           ("smaller than", "<"), ("above", ">"), ("over", ">"), ("below", "<"), ("under", "<"), ("before", "<"),
           ("after", ">"), ("between", "between"), ("not", "!="), ("without", "none")]
_NUMBER_WORDS = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "once", "twice"}
_ENTITY_CUES = {"each", "every", "of", "which", "many", "per", "all", "whose", "by"}

_QUOTED = re.compile(r"""(?:'([^']+)'|"([^"]+)"|“([^”]+)”)""")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?\b")
_NUMBER = re.compile(r"(?<![\w.-])[+-]?\d+(?:\.\d+)?(?![\w-])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*|\d+(?:\.\d+)?")


@dataclass
class _Span:
    start: int  # token index
    end: int  # exclusive
    text: str
    kind: str = "mention"  # mention | value
    columns: list[tuple[int, float]] = field(default_factory=list)
    entity: float = 0.0
    tables: list[int] = field(default_factory=list)


class OfflineExtractor:
    """``OfflineExtractor(index).extract(question) -> IntentGraph`` (see module docstring)."""

    def __init__(self, index, lexicon: Lexicon | None = None, top_k: int = 8):
        self.index = index
        self.lex = lexicon or Lexicon(index)
        self.top_k = top_k
        self.values = index.values

    # ------------------------------------------------------------------ public

    def __call__(self, question: str) -> IntentGraph:
        return self.extract(question)

    def extract(self, question: str) -> IntentGraph:
        words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(question)]
        lower = [w.lower() for w, _, _ in words]
        used = [False] * len(words)
        values = self._values(question, words, lower, used)
        mentions = self._mentions(words, lower, used)
        self._match(mentions)
        return self._assemble(question, words, lower, mentions, values)

    # ------------------------------------------------------------------ values

    def _values(self, question, words, lower, used) -> list[_Span]:
        out: list[_Span] = []

        def cover(a: int, b: int) -> tuple[int, int] | None:
            idx = [i for i, (_, s, e) in enumerate(words) if s >= a and e <= b]
            return (idx[0], idx[-1] + 1) if idx else None

        for m in _QUOTED.finditer(question):
            text = next(g for g in m.groups() if g is not None).strip()
            span = cover(m.start(), m.end())
            if text and span:
                out.append(_Span(span[0], span[1], text, "value"))
        for rx in (_DATE, _NUMBER):
            for m in rx.finditer(question):
                span = cover(m.start(), m.end())
                if span and not any(v.start <= span[0] < v.end for v in out):
                    out.append(_Span(span[0], span[1], m.group(0), "value"))
        for v in out:
            for i in range(v.start, v.end):
                used[i] = True
        # spans found verbatim in the value index, longest first
        n = len(words)
        for size in (4, 3, 2, 1):
            for i in range(0, n - size + 1):
                if any(used[i : i + size]):
                    continue
                span_words = lower[i : i + size]
                if all(w in STOP for w in span_words) or span_words[0] in STOP or span_words[-1] in STOP:
                    continue
                text = " ".join(span_words)
                hits = self.values.get(text)
                if hits is None or len(hits) > 40:
                    continue
                capital = words[i][0][:1].isupper() and i > 0
                if not capital and all(lemma(w) in self.lex.vocab or w in STOP for w in span_words):
                    continue  # header words ('ship', 'status') that also occur as values somewhere
                if text in _NUMBER_WORDS:
                    continue
                out.append(_Span(i, i + size, " ".join(w for w, _, _ in words[i : i + size]), "value"))
                for j in range(i, i + size):
                    used[j] = True
        # capitalised spans not at the start of the question (names, places, titles)
        i = 1
        while i < n:
            w = words[i][0]
            if not used[i] and w[:1].isupper() and lower[i] not in STOP:
                j = i + 1
                while j < n and not used[j] and (words[j][0][:1].isupper() or (lower[j] in ("of", "de", "and", "the") and j + 1 < n and words[j + 1][0][:1].isupper())):
                    j += 1
                text = " ".join(x for x, _, _ in words[i:j])
                toks = tokens(text)
                # a capitalised header word ('Show the Name of ...') is not a value
                if not all(t in self.lex.vocab for t in toks) or j - i >= 2:
                    out.append(_Span(i, j, text, "value"))
                    for k in range(i, j):
                        used[k] = True
                i = j
            else:
                i += 1
        for v in out:
            v.columns = [(int(c), 1.0) for c in self.values.get(v.text.lower().strip(), [])[: self.top_k * 4]]
        return sorted(out, key=lambda s: s.start)

    # ------------------------------------------------------------------ mentions

    def _mentions(self, words, lower, used) -> list[_Span]:
        spans: list[_Span] = []
        i, n = 0, len(words)
        while i < n:
            if used[i] or (lower[i] in STOP and lower[i] not in _ATTR_WORDS) or lower[i].isdigit():
                i += 1
                continue
            j = i
            while j < n and not used[j] and (lower[j] not in STOP or lower[j] in _ATTR_WORDS) and not lower[j].isdigit():
                j += 1
            run = list(range(i, j))
            k = 0
            while k < len(run):
                best = 1
                for size in (3, 2):
                    if k + size <= len(run) and self._cohesive([lemma(lower[x]) for x in run[k : k + size]]):
                        best = size
                        break
                a, b = run[k], run[k] + best
                spans.append(_Span(a, b, " ".join(w for w, _, _ in words[a:b])))
                k += best
            i = j
        return spans

    def _cohesive(self, toks: list[str]) -> bool:
        """Do these tokens occur together in one header somewhere in the lake?"""
        cols = None
        for t in toks:
            c = set(self.lex.token_cols.get(t, ()))
            cols = c if cols is None else cols & c
            if not cols:
                return False
        return bool(cols)

    def _match(self, spans: list[_Span]) -> None:
        if not spans:
            return
        emb = self.index.embedder.encode([s.text.lower() for s in spans])
        fi = self.index.faiss("columns_header")
        sims, ids = fi.search(np.ascontiguousarray(emb, np.float32), min(self.top_k * 4, self.index.n_columns))
        for s, srow, irow in zip(spans, sims, ids):
            toks = tokens(s.text)
            scores = self.lex.lexical_scores(toks)
            for c, cos in zip(irow, srow):
                if c >= 0:
                    scores[int(c)] = max(scores.get(int(c), 0.0), float(np.clip((cos - 0.3) / 0.5, 0.0, 1.0)))
            s.columns = top(scores, self.top_k * 4)
            head = toks[-1] if toks else ""
            s.entity = self.lex.entity_score(head) if head else 0.0
            s.tables = list(self.lex.entity_tables.get(head, []))[:50]

    # ------------------------------------------------------------------ graph

    def _assemble(self, question, words, lower, mentions, values) -> IntentGraph:
        def cue_before(span: _Span) -> bool:
            return span.start > 0 and lower[span.start - 1] in _ENTITY_CUES

        def is_column_name(span: _Span) -> bool:
            return bool(span.columns) and span.columns[0][1] >= 0.95 and len(tokens(span.text)) >= 2

        entities: list[_Span] = []
        attrs: list[_Span] = []
        for m in mentions:
            if m.text.lower() in _ATTR_WORDS:
                attrs.append(m)
            elif m.entity >= 0.5 and not is_column_name(m) or (cue_before(m) and m.entity > 0):
                entities.append(m)
            else:
                attrs.append(m)
        tree_tables: list[set[int]] = []
        trees: list[IntentTree] = []
        for k, e in enumerate(entities):
            tables = set(e.tables) | {int(self.index.col_table[c]) for c, s in e.columns[:4] if s >= 0.6}
            tree_tables.append(tables)
            trees.append(IntentTree(f"t{k + 1}", e.text, [], {"words": e.text, "span": [e.start, e.end], "tables": [self.index.paths[t] for t in sorted(tables)][:10]}))

        def new_tree_for(span: _Span) -> int:
            c = span.columns[0][0] if span.columns else None
            t = int(self.index.col_table[c]) if c is not None else None
            name = span.text
            if t is not None and self.lex.table_entity_words[t]:
                name = self.lex.table_entity_words[t].most_common(1)[0][0]
            tree_tables.append({t} if t is not None else set())
            trees.append(IntentTree(f"t{len(trees) + 1}", name, [], {"words": span.text, "implied": True, "tables": [self.index.paths[t]] if t is not None else []}))
            entities.append(span)
            return len(trees) - 1

        def home(span: _Span) -> int:
            best, best_s = None, 0.0
            for k, tabs in enumerate(tree_tables):
                s = max((sc for c, sc in span.columns if int(self.index.col_table[c]) in tabs), default=0.0)
                if s > best_s:
                    best, best_s = k, s
            if best is not None and best_s >= 0.5:
                return best
            before = [k for k, e in enumerate(entities) if e.start <= span.start]
            if before:
                return before[-1]
            if entities:
                return 0
            return new_tree_for(span)

        n_attr = 0

        def add_attr(tree: int, name: str, span: _Span | None, values=(), evidence=None) -> Attribute:
            nonlocal n_attr
            n_attr += 1
            ev = dict(evidence or {})
            if span is not None:
                ev.setdefault("words", span.text)
                ev.setdefault("columns", [[self.index.columns["path"][c], self.index.columns["name"][c], round(s, 3)] for c, s in span.columns[:5]])
                agg = self._aggregate(lower, span.start)
                if agg:
                    ev["aggregate"] = agg
            a = Attribute(f"a{n_attr}", name, list(values), ev)
            trees[tree].attributes.append(a)
            return a

        attr_of_span: dict[int, Attribute] = {}
        for m in attrs:
            if m.text.lower() in _ATTR_WORDS and not m.columns:
                continue
            k = home(m)
            attr_of_span[id(m)] = add_attr(k, m.text, m)
        for v in values:
            compare = self._compare(lower, v.start)
            target = None
            if v.columns:
                # the attribute mention whose candidate columns hold this value
                held = {c for c, _ in v.columns}
                for m in attrs:
                    if id(m) in attr_of_span and any(c in held for c, _ in m.columns[:8]):
                        target = attr_of_span[id(m)]
                        break
                if target is None:
                    c = v.columns[0][0]
                    span = _Span(v.start, v.end, self.index.columns["words"][c], columns=v.columns[:8])
                    k = home(span) if trees else new_tree_for(span)
                    target = add_attr(k, self.index.columns["words"][c], None, evidence={"words": v.text, "columns": [[self.index.columns["path"][c], self.index.columns["name"][c], 1.0]], "from_value": True})
            else:
                near = [m for m in attrs if id(m) in attr_of_span]
                if near:
                    near.sort(key=lambda m: (abs(m.start - v.start), m.start > v.start))
                    target = attr_of_span[id(near[0])]
            if target is None:
                if not trees:
                    tree_tables.append(set())
                    trees.append(IntentTree("t1", "record", [], {"implied": True}))
                    entities.append(v)
                target = add_attr(len(trees) - 1, "value", None, evidence={"words": v.text})
            target.values.append(v.text)
            if compare:
                target.evidence.setdefault("compare", {})[v.text] = compare
        if not trees:
            return IntentGraph([IntentTree("t1", question.strip()[:60] or "record", [], {"implied": True})], [])
        for k, t in enumerate(trees):
            if not t.attributes:
                add_attr(k, "id", None, evidence={"implied": True, "role": "key"})
        joins = self._joins(trees, tree_tables, entities)
        return IntentGraph(trees, joins)

    def _joins(self, trees, tree_tables, entities) -> list[Join]:
        order = sorted(range(len(trees)), key=lambda k: entities[k].start if k < len(entities) else 0)
        joins = []
        for x, y in zip(order, order[1:]):
            a, b = trees[x], trees[y]
            ka = next((at for at in a.attributes if at.name == "id"), None) or a.attributes[0]
            kb = next((at for at in b.attributes if at.name == "id"), None) or b.attributes[0]
            joins.append(Join(a.tree_id, ka.attribute_id, b.tree_id, kb.attribute_id, {"words": f"{a.entity} … {b.entity}", "reason": "question order"}))
        return joins

    @staticmethod
    def _aggregate(lower: list[str], start: int) -> str | None:
        window = lower[max(0, start - 3) : start]
        if "how" in window and "many" in window:
            return "count"
        for w in reversed(window):
            if w in AGGREGATE:
                return AGGREGATE[w]
        return None

    @staticmethod
    def _compare(lower: list[str], start: int) -> str | None:
        window = " ".join(lower[max(0, start - 3) : start])
        for phrase, op in COMPARE:
            if window.endswith(phrase) or f" {phrase} " in f" {window} ":
                return op
        return None
