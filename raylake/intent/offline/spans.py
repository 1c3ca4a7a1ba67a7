"""Reading the question into spans: its values first, then the mentions among the rest.

Step 1 and the segmentation of step 2 of the package docstring (:mod:`raylake.intent.offline`):
values are quoted strings, dates, numbers, number words after an ordered comparison, spans
found verbatim in the lake's value index, and capitalised spans; a lower-case word some cell
holds is no value when the question uses it as a cue, a verb or a plural noun. The remaining
content words are segmented greedily into the longest runs that occur together in one header
of the lake (GRAFT, Sec. 3.1: an intent tree's root is an entity, its children attributes,
each with optional value leaves — these spans are the candidates for all three). Matching a
span to the lake's columns and tables is :mod:`.matching`'s.
"""
from __future__ import annotations

from raylake.intent.lexicon import lemma, tokens
from raylake.config import IntentConfig
from raylake.intent.offline.span import Span
from raylake.intent.offline.syntax import compare, ed_or_ly, past_or_adverb, verbal
from raylake.intent.offline.vocab import (
    ATTR_WORDS,
    AUXILIARY,
    DATE,
    GENERIC_COMPARATIVES,
    NAME_PART_WORDS,
    NOT_VALUES,
    NUMBER,
    NUMBER_VALUES,
    NUMBER_WORDS,
    ORDERED,
    QUOTED,
    STOP,
    VERB_BEFORE,
)


class SpanReader:
    """``values(...)`` and ``mentions(...)`` of a question, as :class:`.span.Span` lists."""

    def __init__(self, index, lex, settings: IntentConfig):
        self.index = index
        self.lex = lex
        self.settings = settings

    # ------------------------------------------------------------------ values

    def values(self, question, words, lower, used) -> list[Span]:
        """The question's values, in question order; marks their tokens in ``used``.

        Args:
            question: the question's text.
            words: its tokens as ``(text, start char, end char)``.
            lower: the tokens lower-cased.
            used: one flag per token, set here for the tokens a value covers.
        """
        out: list[Span] = []
        lake_values = self.index.values

        def cover(a: int, b: int) -> tuple[int, int] | None:
            idx = [i for i, (_, s, e) in enumerate(words) if s >= a and e <= b]
            return (idx[0], idx[-1] + 1) if idx else None

        for m in QUOTED.finditer(question):
            text = next(g for g in m.groups() if g is not None).strip()
            span = cover(m.start(), m.end())
            if text and span:
                out.append(Span(span[0], span[1], text, "value", named=True))
        for rx in (DATE, NUMBER):
            for m in rx.finditer(question):
                span = cover(m.start(), m.end())
                if span and not any(v.start <= span[0] < v.end for v in out):
                    out.append(Span(span[0], span[1], m.group(0), "value"))
        # 'more than one record', 'at least two courses': a counted number, as the SQL writes it
        for i, w in enumerate(lower):
            if w in NUMBER_VALUES and not any(v.start <= i < v.end for v in out) and compare(lower, i) in ORDERED:
                out.append(Span(i, i + 1, NUMBER_VALUES[w], "value"))
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
                hits = lake_values.get(text)
                if hits is None or len(hits) > 40:
                    continue
                capital = words[i][0][:1].isupper() and i > 0
                qualifies = False
                if not capital and all(lemma(w) in self.lex.vocab or w in STOP for w in span_words):
                    # header words ('ship', 'status') that also occur as values somewhere
                    qualifies = size == 1 and self._names_held_value(i, lower, hits)
                    if not qualifies:
                        continue
                if text in NUMBER_WORDS:
                    continue
                if not capital and size == 1 and (text in NOT_VALUES or (not qualifies and self._verb_or_plural(i, lower, hits))):
                    continue  # 'after 2000', 'who teach', 'the number of trips': a cue, a verb, a plural noun
                out.append(Span(i, i + size, " ".join(w for w, _, _ in words[i : i + size]), "value", named=capital,
                                qualifies=qualifies))
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
                raw = question[words[i][1] : words[j - 1][2]]
                if raw != text and raw.lower() in lake_values:
                    text = raw  # the value as written ('Computer Info. Systems'), punctuation included
                toks = tokens(text)
                # a capitalised header word ('Show the Name of ...') is not a value
                if not all(t in self.lex.vocab for t in toks) or j - i >= 2:
                    out.append(Span(i, j, text, "value", named=True))
                    for k in range(i, j):
                        used[k] = True
                i = j
            else:
                i += 1
        for v in out:
            hits = lake_values.get(v.text.lower().strip(), [])
            # a number held by hundreds of columns says nothing about which one it constrains
            if len(hits) <= (4 if NUMBER.fullmatch(v.text) else self.settings.top_k * 4):
                v.columns = [(int(c), 1.0) for c in hits]
        out = [part for v in out for part in self._split_name(v)]
        return sorted(out, key=lambda s: s.start)

    def _verb_or_plural(self, i: int, lower: list[str], hits) -> bool:
        """A lower-case word some cell holds that the question uses as a verb or a plural noun
        is no value: after a subject or an auxiliary ('tracks that belong to', 'who teach',
        'did not leave'), a past form ('nominated', 'won'), or a plural ('the number of
        trips': the trip table, whose headers never say 'trip', not a cell 'trips') — a
        plural stays a value beside a header word of a column holding it ('the category
        tools'). Spider, all 1,701 (``python -m bench.intent_bench``, with 'he' / 'she' as
        stopwords, after the 'movies' lemma): value precision 0.802 → 0.844, no value match
        lost; by a scratch tally of the lower-case one-word values
        before, 196 of 287 were wrong and none of the 91 right ones was a plural, a past
        form or after such a word."""
        w = lower[i]
        if lemma(w) != w:
            around = {lemma(lower[j]) for j in (i - 1, i + 1) if 0 <= j < len(lower)}
            if all(around.isdisjoint(self.lex.col_tokens[int(c)]) for c in hits):
                return True
        if past_or_adverb(w):
            return True
        before = lower[i - 1] if i else ""
        return before in VERB_BEFORE or (before == "not" and i > 1 and lower[i - 2] in AUXILIARY)

    def _split_name(self, v: Span) -> list[Span]:
        """A two-word name no cell holds whole, whose words one table holds apart ("Aaron
        Turon": ``fname`` and ``lname`` of the authors table), is two values, each on the
        columns of the tables holding both (Spider: 11 such questions, the gold SQL of all 11
        compares both words, by a scratch tally, not in ``bench/``)."""
        words = v.text.split()
        if v.columns or not v.named or len(words) != 2 or v.end - v.start != 2:
            return [v]
        hits = [self.index.values.get(w.lower()) for w in words]
        if any(h is None or len(h) > self.settings.top_k * 4 for h in hits):
            return [v]
        col_table = self.index.col_table
        both = {int(col_table[c]) for c in hits[0]} & {int(col_table[c]) for c in hits[1]}
        if not both:
            return [v]
        return [Span(v.start + i, v.start + i + 1, w, "value", named=True,
                     columns=[(int(c), 1.0) for c in h if int(col_table[c]) in both])
                for i, (w, h) in enumerate(zip(words, hits))]

    def _names_held_value(self, i: int, lower: list[str], hits) -> bool:
        """'photo products', 'history department': a lower-case word before a word that names
        tables, held as a value by one of those tables, is that value (``Product_Name =
        'photo'``), not a table of its own (the lake's photos table) — unless it reads as a
        verb ('reported problems')."""
        w = lower[i]
        if i + 1 >= len(lower) or lower[i + 1] in STOP or ed_or_ly(w):
            return False
        named = set(self.lex.entity_tables.get(lemma(lower[i + 1]), ()))
        return bool(named) and any(int(self.index.col_table[int(c)]) in named for c in hits)

    # ------------------------------------------------------------------ mentions

    def mentions(self, words, lower, used) -> list[Span]:
        """The content words outside the values, segmented greedily into the longest runs (up
        to three words) that one header of the lake spells together — unless they are an
        entity word and a header of its own tables (:meth:`_possessive_pair`). A name part
        coordinated with another before their shared head ('first and last names') is a
        mention of that head too ('first names')."""
        spans: list[Span] = []
        n = len(words)

        def content(k: int) -> bool:
            # 'first'/'last' order results ('the first 5'), except in 'first name'
            w = lower[k]
            if w in GENERIC_COMPARATIVES and k + 1 < n and lower[k + 1] == "than":
                return False
            return (w not in STOP or w in ATTR_WORDS or (w in NAME_PART_WORDS and k + 1 < n and lower[k + 1] in ATTR_WORDS)
                    or shares_head(k)) and not w.isdigit()

        def shares_head(k: int) -> bool:
            # 'first and last names': 'first' is a mention of the head it shares, 'first names'
            return (k + 3 < n and lower[k] in NAME_PART_WORDS and lower[k + 1] in ("and", "or")
                    and lower[k + 2] in NAME_PART_WORDS and lower[k + 3] in ATTR_WORDS)

        i = 0
        while i < n:
            if used[i] or not content(i):
                i += 1
                continue
            j = i
            while j < n and not used[j] and content(j):
                j += 1
            run = list(range(i, j))
            k = 0
            while k < len(run):
                best = 1
                for size in (3, 2):
                    if k + size > len(run):
                        continue
                    toks = [lemma(lower[x]) for x in run[k : k + size]]
                    if self._cohesive(toks) and not self._possessive_pair(toks):
                        best = size
                        break
                a, b = run[k], run[k] + best
                text = " ".join(w for w, _, _ in words[a:b])
                spans.append(Span(a, b, text + " " + words[a + 3][0] if best == 1 and shares_head(a) else text))
                spans[-1].verbal = verbal(spans[-1], lower)
                k += best
            i = j
        return spans

    def _possessive_pair(self, toks: list[str]) -> bool:
        """'artist names': an entity word and a header of the tables it names, which no header
        of those tables spells together (``artist_name`` is another table's) — two mentions,
        the artist and its ``Name``, not one compound."""
        if len(toks) != 2:
            return False
        ent, attr = toks
        own = [t for t in self.lex.entity_tables.get(ent, ()) if self.lex.entity_strength(t, ent) >= 1.0]
        cols = [self.lex.col_tokens[c] for t in own for c in self.index.table_columns[t]]
        return any(attr in ct for ct in cols) and not any(ent in ct and attr in ct for ct in cols)

    def _cohesive(self, toks: list[str]) -> bool:
        """Do these tokens occur together in one header somewhere in the lake?"""
        cols = None
        for t in toks:
            c = set(self.lex.token_cols.get(t, ()))
            cols = c if cols is None else cols & c
            if not cols:
                return False
        return bool(cols)
