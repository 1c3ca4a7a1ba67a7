"""The fused plan's columns for an intent graph's attributes: which column an attribute is read from.

:class:`PlanColumns` is what the offline answer (:mod:`raylake.fuse.answer`) knows of the plan:
the fused table's column names per lake table (:attr:`Fused.names`), which part each belongs to,
and the columns' cells. An attribute resolves to the first of its evidence columns the plan holds
(the extractor ranks the lake's columns, and the plan is only a few of its tables), else to the
plan header that best matches its words (:data:`ColumnMatch`; the engine passes the index's
lexical and header-embedding match, :meth:`raylake.search.engine.Engine.plan_columns`), its
tree's own tables first. A value's column must be able to hold it (:meth:`PlanColumns.fit`).
"""
from __future__ import annotations

import re
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from raylake.fuse.fuse import Fused

# (words, plan table paths) -> [(path, column, score)], best first: the plan's columns for an attribute's words
ColumnMatch = Callable[[str, list[str]], list[tuple[str, str, float]]]


class Unanswerable(Exception):
    """The grammar cannot express the question over this plan; the message is the reason."""


def quote(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def words(text: str) -> set[str]:
    """A header's or a phrase's words, camel case split, lower case, a plural's 's' dropped."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in re.findall(r"[a-z0-9]+", text.lower())}


def number(v: str) -> float | None:
    """``v`` as a number, or None where it is text."""
    try:
        return float(v)
    except ValueError:
        return None


class PlanColumns:
    """The fused plan's columns as the graph's attributes read them.

    Args:
        question: the question's text (what it quotes or capitalises).
        graph: its :class:`raylake.intent.model.IntentGraph`.
        fused: the plan fused by :func:`raylake.fuse.fuse`.
        match: how an attribute's words find a plan column (:data:`ColumnMatch`); ``None``:
            :meth:`by_words`.
    """

    def __init__(self, question: str, graph, fused: Fused, match: ColumnMatch | None = None):
        self.question, self.graph, self.fused = question, graph, fused
        self.match = match or self.by_words
        self._matches: dict[str, list[tuple[str, str, float]]] = {}
        self._numeric: dict[str, bool] = {}
        self.present = set(fused.table.column_names)
        self.names = {p: {c: n for c, n in cols.items() if n in self.present} for p, cols in fused.names.items()}
        self.part = {n: p["label"] for p in fused.parts for m in p["tables"] for n in fused.names.get(m, {}).values()}
        self._texts: dict[str, pa.ChunkedArray] = {}

    def own_tables(self, tree) -> list[str]:
        """The tables the extractor gave the tree's entity that the plan holds."""
        return [p for p in tree.evidence.get("tables", []) if self.names.get(p)]

    def tree_tables(self, tree) -> list[str]:
        """:meth:`own_tables`, else every plan table."""
        return self.own_tables(tree) or [p for p in self.names if self.names[p]]

    def column(self, tree, attr) -> str | None:
        """The fused column of ``attr``: the first of its evidence columns the plan holds, else the
        best :attr:`match` among the tree's own plan tables, else among all of them; where the match
        finds none good enough, a header sharing a word (:meth:`by_words`: 'state names' is
        ``state_province_county``) rather than no answer."""
        for path, col, *_ in attr.evidence.get("columns", []):
            name = self.names.get(path, {}).get(col)
            if name:
                return name
        own = set(self.own_tables(tree))
        found = [(path in own, score, self.names[path][col]) for path, col, score in
                 self.matches(attr.name) or self.by_words(attr.name, list(self.names)) if col in self.names.get(path, {})]
        return max(found, key=lambda f: f[:2])[2] if found else None

    def matches(self, text: str) -> list[tuple[str, str, float]]:
        """:attr:`match` of ``text`` over the plan's tables, once per text: an attribute's column is
        read by several clauses, and the engine's match ranks the lake's headers."""
        if text not in self._matches:
            self._matches[text] = self.match(text, list(self.names))
        return self._matches[text]

    def by_words(self, text: str, paths: list[str]) -> list[tuple[str, str, float]]:
        """The :data:`ColumnMatch` without a lake index: the plan headers sharing words with ``text``
        (Jaccard of :func:`words`). The engine passes the index's matcher instead
        (:meth:`raylake.intent.offline.matching.Matcher.among`: abbreviations, header embeddings)."""
        want = words(text)
        found = [(p, c, len(want & words(c)) / len(want | words(c))) for p in paths for c in self.names.get(p, {})] if want else []
        return sorted([f for f in found if f[2] > 0], key=lambda f: -f[2])

    def entity_column(self, tree) -> str | None:
        """The column naming an entity: its table's header with 'name' (or 'title'), else its first."""
        for path in self.tree_tables(tree)[:1]:
            cols = list(self.names[path].items())
            for col, name in cols:
                if words(col) & {"name", "title"}:
                    return name
            return cols[0][1] if cols else None
        return None

    def fit(self, attr, col: str | None, values: list[str], ops: list[str]) -> str | None:
        """``col`` if it can hold the attribute's ``values``, else the plan column that can: a text value
        compared with ``=``/``!=`` must be one of the column's cells (trimmed, case-folded: 'Sigma' is
        a brand, not a lens's name), a number needs a column of numbers ('assigned in 2016' is no
        gender). Any plan column holding the text will do; a column of numbers must also match the
        attribute's words (:attr:`match`) or a word right before the number (:meth:`before`: 'total
        score smaller than 315' is ``Total``), as numbers are everywhere. ``col`` when none fits."""
        texts = [v for v, op in zip(values, ops) if number(v) is None and op in ("=", "!=")]
        numeric = any(number(v) is not None for v in values)
        if not texts and not numeric:
            return col

        def fits(c: str) -> bool:
            return all(self.holds(c, v) for v in texts) and (not numeric or self.numeric(c))

        if col is not None and fits(col):
            return col
        paths = list(self.names)
        matched = [self.names[p][c] for p, c, _ in self.matches(attr.name) if c in self.names.get(p, {})]
        if numeric and not texts:  # the words right before the number ('with total score smaller than 315')
            near = [w for v in values for w in reversed(self.before(v))]
            matched += [self.names[p][c] for w in near for p, c, _ in self.by_words(w, paths)]
        rest = [n for p in self.names for n in self.names[p].values()] if texts else []
        return next((c for c in matched + rest if fits(c)), col)

    def before(self, value: str, n: int = 4) -> list[str]:
        """The ``n`` words before the first place the question says ``value``."""
        m = re.search(r"(?<![\w.])" + re.escape(value.strip()) + r"(?![\w])", self.question, re.I)
        return re.findall(r"[a-z0-9']+", self.question[: m.start()].lower())[-n:] if m else []

    def unheld(self, value: str) -> bool:
        """A lower-case word the question does not quote or capitalise, which no column of the plan
        holds: the extractor found it in the lake's value index, in other tables ('the clubs the
        student belongs to': a cell 'belong' elsewhere). As a filter it would empty the answer, so
        it is dropped and the answer says so; a value the question names is kept, whatever it empties."""
        if number(value) is not None or self.named(value):
            return False
        return not any(self.holds(c, value) for c in self.part if c in self.present)

    def named(self, value: str) -> bool:
        """Whether the question quotes ``value``, writes it with a capital, or does not say it as such
        (a number the extractor read from 'two'): a value the user chose, not a word to second-guess."""
        said = list(re.finditer(re.escape(value.strip()), self.question, re.I))
        return not said or self.quoted(value) or any(any(ch.isupper() for ch in m.group()) for m in said)

    def quoted(self, value: str) -> bool:
        """Whether the question puts ``value`` in quotes."""
        return any(self.question[max(0, m.start() - 1) : m.start()] in ("'", '"', "‘", "“")
                   for m in re.finditer(re.escape(value.strip()), self.question, re.I))

    def texts(self, col: str) -> pa.ChunkedArray:
        """``col``'s cells as trimmed, case-folded text (computed once: a plan's filters look up
        several values, and a fused table may hold a million rows)."""
        if col not in self._texts:
            column = self.fused.table.column(col)
            try:
                text = pc.cast(column, pa.string())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a nested or odd type: its Python text
                text = pa.chunked_array([pa.array([None if x is None else str(x) for x in column.to_pylist()], pa.string())])
            self._texts[col] = pc.utf8_lower(pc.utf8_trim_whitespace(text))
        return self._texts[col]

    def holds(self, col: str, value: str) -> bool:
        """Whether ``value`` (trimmed, case-folded) is one of ``col``'s cells."""
        return bool(pc.any(pc.equal(self.texts(col), value.strip().lower())).as_py())

    def numeric(self, col: str) -> bool:
        """Whether ``col`` holds numbers: a numeric type, or 9 in 10 of its first 10,000 non-empty
        cells parse as numbers (the lake's CSVs keep no types; a stray 'N/A' does not make text)."""
        if col not in self._numeric:  # asked of a column by every value and candidate that tries it
            kind = self.fused.table.column(col).type
            if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
                self._numeric[col] = True
            else:
                vals = [x for x in self.texts(col).slice(0, 10_000).to_pylist() if x]
                self._numeric[col] = bool(vals) and sum(number(x) is not None for x in vals) >= 0.9 * len(vals)
        return self._numeric[col]

    def part_of(self, column: str) -> str:
        return self.part[column]
