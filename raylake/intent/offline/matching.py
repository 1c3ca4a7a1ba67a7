"""Matching a span to the lake: its columns, the tables its words name, how specific it is.

Step 2 of the package docstring (:mod:`raylake.intent.offline`): a mention is matched to
columns lexically (IDF overlap with lemmatised header tokens, :mod:`raylake.intent.lexicon`)
and semantically (cosine with the header embeddings through FAISS), and to tables by its
words (a table's entity words, abbreviations included) and by cosine with the table text.
What it reads off a span is kept on the span (:class:`.span.Span`: ``best``, ``lexical``,
``spec``), since the role rules, every entity's ranking, the joint choice and the order of
an attribute's columns all read it. Ranking tables for an entity is :mod:`.ranking`'s.
"""
from __future__ import annotations

import numpy as np

from raylake.intent.lexicon import tokens, top
from raylake.config import IntentConfig
from raylake.intent.offline.span import Span
from raylake.intent.offline.vocab import COUNT_WORDS
from raylake.reward.psi import rescale


class Matcher:
    """The lake's reading of a span: ``match`` fills it; the other methods read it."""

    def __init__(self, index, lex, settings: IntentConfig):
        self.index = index
        self.lex = lex
        self.settings = settings

    def match(self, spans: list[Span]) -> None:
        """Columns (lexical ∪ header cosine) and tables (cosine with the table text) of each mention."""
        if not spans:
            return
        idx, top_k = self.index, self.settings.top_k
        emb = np.ascontiguousarray(idx.embedder.encode([s.text.lower() for s in spans]), np.float32)
        sims, ids = idx.faiss("columns_header").search(emb, min(top_k * 4, idx.n_columns))
        tcos = rescale(emb @ idx.emb_table.T)
        for k, (s, srow, irow) in enumerate(zip(spans, sims, ids)):
            toks = tokens(s.text)
            s.lexical = self.lex.lexical_scores(toks)
            scores = dict(s.lexical)
            for c, cos in zip(irow, srow):
                if c >= 0:
                    scores[int(c)] = max(scores.get(int(c), 0.0), float(rescale(cos)))
            s.columns = top(scores, top_k * 4)
            s.emb = emb[k]
            s.table_cos = tcos[k]
            s.head = toks[-1] if toks else ""
            compound = "_".join(toks)
            s.entity = max(self.lex.entity_score(s.head) if s.head else 0.0, self.lex.entity_score(compound) if len(toks) > 1 else 0.0,
                           max((self.lex.entity_score(w) for w in self.abbreviations(s)), default=0.0))
            s.tables = list(self.lex.entity_tables.get(compound, [])) + list(self.lex.entity_tables.get(s.head, []))

    def abbreviations(self, span: Span) -> list[str]:
        """The lake's entity words that abbreviate the span's head (``stu`` for 'students'),
        none for a verb or an adverb: 'participated' is no ``part`` table, 'actually' no
        ``all``, 'located' no ``lot``."""
        return self.lex.abbreviations(span.head) if span.head and not span.verbal else []

    def number_of(self, mentions: list[Span], lower: list[str]) -> None:
        """'number of employees' is a column (``Num_Employees``) when the lake has one, else a
        count. The count word comes first in such a header: ``room_number``, ``FlightNo``,
        ``review_count`` name or count one thing, not how many ('the number of rooms' is a
        count of the rooms; of 45 times the rule read a column on all 1,701 Spider questions,
        32 were wrong; the count word first, 30 times, 18 wrong and one right reading lost,
        ``draft_number`` — a scratch tally against the reference attributes, not in
        ``bench/``; ``python -m bench.intent_bench``: entity F1 0.6128 → 0.6130, attribute
        0.5135 → 0.5136)."""
        for m in mentions:
            if m.start < 2 or lower[m.start - 1] != "of" or lower[m.start - 2] not in ("number", "count", "total"):
                continue
            want = set(tokens(m.text))
            hits = [c for t in want for c in self.lex.token_cols.get(t, ()) if want <= set(self.lex.col_tokens[c])
                    and _counts_first(self.lex.col_tokens[c], want)]
            if hits:
                m.columns = [(c, 1.0) for c in sorted(set(hits))[: self.settings.top_k]] + [cs for cs in m.columns if cs[0] not in hits]
                m.role = "attribute"

    def table_best(self, span: Span) -> dict[int, float]:
        """Table → the span's best column score there in the lake-wide match (kept on the span:
        the held tables, every entity's ranking and the joint choice all read it)."""
        if span.best is None:
            col_table = self.index.col_table
            span.best = {}
            for c, s in span.columns if span.lake_columns is None else span.lake_columns:
                t = int(col_table[c])
                if s > span.best.get(t, 0.0):
                    span.best[t] = s
        return span.best

    def lexical(self, span: Span) -> dict[int, float]:
        """Column → lexical match of the span's words with its header (kept on the span: the
        role rules, the attribute's column order and the neighbour rules all read it)."""
        if span.lexical is None:
            span.lexical = self.lex.lexical_scores(tokens(span.text))
        return span.lexical

    def spelled(self, span: Span) -> float:
        """How nearly some header of the lake spells the span's words (its best lexical match):
        a header that only resembles them by the embedding ('located' ≈ Location) is not one."""
        return max(self.lexical(span).values(), default=0.0)

    def with_own(self, span: Span, tables) -> list[tuple[int, float]]:
        """The span's columns, plus the headers of ``tables`` (the question's candidate tables)
        its words match lexically (≥ ``min_attr_score``).

        The kept columns are the lake's best ``4·top_k`` for the words: 'name' (in 170 tables)
        or 'addresses' may miss a chosen table's own ``Name`` or ``building_address``."""
        lexical = self.lexical(span)
        have = {c for c, _ in span.columns}
        own = {int(c): lexical[int(c)] for u in tables for c in self.index.table_columns[u]
               if int(c) not in have and lexical.get(int(c), 0.0) >= self.settings.min_attr_score}
        return span.columns + list(own.items()) if own else span.columns

    def header_match(self, lexical: dict[int, float], tables) -> float:
        """The best lexical match among the headers of ``tables``."""
        return max((lexical.get(int(c), 0.0) for u in tables for c in self.index.table_columns[u]), default=0.0)

    def header_cos(self, tables, emb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The columns of ``tables`` and their headers' cosine with ``emb`` ((d,) or (d, n)),
        rescaled (:func:`rescale`): ``(cols, cos)``, ``cos`` shaped (|cols|,) or (|cols|, n)."""
        idx = self.index
        cols = np.asarray([int(c) for u in tables for c in idx.table_columns[u]], np.int64)
        return cols, rescale(idx.emb_header[cols] @ emb)

    def among(self, text: str, tables) -> list[tuple[int, float]]:
        """The columns of ``tables`` for the words ``text``, best first: ``max(lexical, rescaled
        header cosine)``, the score :meth:`match` gives a span lake-wide, here over a few tables,
        kept where it reaches ``min_attr_score`` (what any attribute mention needs). Among a plan's
        few tables a header may also spell the words loosely (:func:`_loose`: ``LName`` for 'last
        names', ``date_of_enrolment`` for 'enrollment'), which lake-wide would match too much.

        The answer's SQL reads an attribute from the plan's own columns (:mod:`raylake.fuse.answer`),
        and a span's kept columns are the lake's best few: 'first names' keeps five ``first_name``
        headers of other databases, and the plan's ``EMP_FNAME`` is found only among its tables."""
        toks = tokens(text)
        if not toks or not len(tables):
            return []
        lexical = self.lex.lexical_scores(toks)
        emb = np.asarray(self.index.embedder.encode([text.lower()]), np.float32)[0]
        cols, cos = self.header_cos(tables, emb)
        out = {int(c): max(float(s), lexical.get(int(c), 0.0), _loose(toks, self.lex.col_tokens[int(c)])) for c, s in zip(cols, cos)}
        return sorted(((c, s) for c, s in out.items() if s >= self.settings.min_attr_score), key=lambda cs: (-cs[1], cs[0]))

    def specificity(self, span: Span) -> float:
        """log(T / k) / log(T), k the tables with a column matching the span well: 'name' ≈ 0.

        Read off the lake-wide match (``lake_columns`` once the candidates' headers have joined
        ``columns``): the question's own candidates make no word rarer or commoner."""
        if span.spec is None:
            t_all = max(2, self.index.n_tables)
            columns = span.columns if span.lake_columns is None else span.lake_columns
            k = len({int(self.index.col_table[c]) for c, s in columns if s >= 0.9})
            if span.kind == "value":
                k = len({int(self.index.col_table[c]) for c, _ in columns})
            span.spec = float(np.clip(np.log(t_all / max(k, 1)) / np.log(t_all), 0.0, 1.0))
            if span.kind != "value" and len(columns) >= self.settings.top_k * 4 and columns[-1][1] >= 0.9:
                span.spec = 0.0  # more strong matches than we keep: a word every schema has
        return span.spec


def _counts_first(col_tokens, want: set[str]) -> bool:
    """A header that counts the words: a count word before them (``Num_of_Shops``, ``no_of_customers``)."""
    first = next((i for i, t in enumerate(col_tokens) if t in COUNT_WORDS), None)
    return first is not None and all(t in col_tokens[first + 1 :] for t in want)


def _loose(want: list[str], header: tuple[str, ...]) -> float:
    """The lexical score's form, ``share of the words found · (0.6 + 0.4 · share of the header
    covered)``, where a header token also finds a word it abbreviates (``l`` → last, ``dept`` →
    department: a prefix) or spells with single consonants (``enrolment`` → enrollment); such a
    find counts 0.9, so an exact header wins a tie."""
    if not want or not header:
        return 0.0
    found, used = 0.0, set()
    for w in want:
        best = 0.0
        for i, h in enumerate(header):
            hit = 1.0 if h == w else 0.9 if (len(h) < len(w) and w.startswith(h)) or _single(h) == _single(w) else 0.0
            if hit > best:
                best, at = hit, i
        if best:
            found += best
            used.add(at)
    return found / len(want) * (0.6 + 0.4 * len(used) / len(header))


def _single(word: str) -> str:
    """``word`` with doubled letters single: one spelling of 'enrollment' and 'enrolment'."""
    return "".join(ch for i, ch in enumerate(word) if i == 0 or ch != word[i - 1])
