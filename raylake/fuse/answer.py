"""The offline answer: one DuckDB query over the fused plan, written from the intent graph.

:func:`answer_query` turns a question's intent graph (:mod:`raylake.intent.model`, with the
offline extractor's evidence) and its fused plan (:func:`raylake.fuse.fuse`) into
``SELECT … FROM fused``, runs it, and returns the rows. The grammar, in the order the
clauses are written:

- **columns** — an attribute resolves to a fused column ``<part>.<column>`` (fusion's own
  names, :attr:`Fused.names`): the first of its evidence columns the plan holds, else the
  plan header that best matches its words (:data:`ColumnMatch`: the index's lexical and header-
  embedding match through the engine; its tree's own tables first). An attribute
  with no value leaf, not implied (a join key the extractor added), is *asked*.
- **filters** — each value leaf is ``column <op> value``, ``op`` from the attribute's
  ``evidence.compare`` (``=`` when none; ``!= > >= < <=``; ``between`` over two values).
  Numbers compare as numbers (``TRY_CAST … AS DOUBLE``), text trimmed and case-folded — the
  lake's CSVs keep no types, and the printed SQL (DuckDB's CSV typing) and the executed one
  (raylake's reader) must agree. A value's column must be able to hold it (:meth:`~raylake.fuse.plan_columns.PlanColumns.fit`):
  a text compared with ``=`` one of its cells, a number a column of numbers; else the plan
  column that can. One-value ``=`` terms of two attributes on one column are one OR term (a cell
  equals one value at a time). A lower-case word no plan column holds and the question does not
  quote is no filter (a warning says so): the extractor found it in other tables' cells.
- **aggregates** — ``evidence.aggregate`` (``count avg sum max min``); 'how many <entity>'
  is ``count(*)``, and a question that opens 'How many' with no 'each/per/every', superlative or
  second request is that one count (no asked column beside it; its counted noun needs no column). A ``count`` on a column whose header already is a count (``num_…``,
  ``…_number``) is the column. ``max``/``min`` beside other asked columns and no group-by
  is a superlative: ``ORDER BY col DESC|ASC LIMIT 1`` ('the name of the oldest …').
- **group-by** — with an aggregate, the other asked columns; 'each/per/every <entity>'
  with none asked groups by that entity's name column (else its first column).
- **order / limit / distinct** — 'order(ed)/sort(ed) by …' (``DESC`` on 'descending'),
  'top N' / 'first N', 'distinct/different/unique'. A sort key the question names only after
  the cue ('the names of the hosts in ascending order of age') orders the rows and is not shown.
- **most counted** — 'the most / fewest / largest number of <entity>' ('the department with the
  smallest number of professors'): ``GROUP BY`` the asked columns ``ORDER BY count(DISTINCT <its
  row>) ASC|DESC, <the asked columns> LIMIT 1`` (ties: the same row every run).
- **counted entities** — a number the question puts right before an entity's noun ('parts with
  more than 2 faults', 'at least two delegates', 'two or more enzymes') counts that entity's rows
  per answer row: ``GROUP BY`` the asked columns ``HAVING count(DISTINCT <its row>) <op> N``, not a
  filter on whichever column the number was attached to (a column the noun names itself,
  ``num_faults``, stays a filter). A number before a noun that names neither its attribute nor
  its column ('projects with at least two documents'), or hung on a column of text, counts the
  join's rows per answer row (``HAVING count(*)``) when no entity of the graph is that noun.

Cardinality: a part the answer reads nothing from is only joined; when its join repeats
rows, the query reads ``SELECT DISTINCT`` of the parts it does read, and says so in the
warnings. A part the answer reads that multiplies the rows of the asked entity's table is
reported too (its aggregates count an entity once per match).

Set operations — 'not' as a set difference over the asked table's rows, 'both' as an
intersection — are :mod:`raylake.fuse.setops`'s.

Limits (each gives ``answer = None`` with a reason, never a guessed answer): a set difference
over two tables' columns or beside a counted entity, 'both' beside an aggregate, a group or an
order, an attribute or value no plan column holds, a ``without``/``none`` comparison, nothing
asked and no aggregate, a fusion that left no rows to read. No nested queries or LIKE; HAVING
only on counted rows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa

from raylake.fuse.fuse import Fused
from raylake.fuse.plan_columns import ColumnMatch, PlanColumns, Unanswerable, number, quote, words
from raylake.fuse.setops import difference, set_operation

_AGGS = ("count", "avg", "sum", "max", "min")
_OPS = {"=", "!=", ">", ">=", "<", "<="}
_GROUP_CUE = ("each", "per", "every")
# 'the most <noun>', 'the largest number of <noun>': the direction its count is ordered in ('fewest': ascending);
# the adjectives count only before 'number of' ('the highest price' is an attribute's maximum)
_MOST = {"most": "DESC", "largest": "DESC", "highest": "DESC", "greatest": "DESC", "maximum": "DESC", "biggest": "DESC",
         "fewest": "ASC", "least": "ASC", "smallest": "ASC", "lowest": "ASC", "minimum": "ASC"}
# words after a number that measure or join rather than name what is counted ('older than 30 years', '2 and 3')
_NOT_COUNTED = {"years", "year", "days", "hours", "minutes", "seconds", "months", "weeks", "dollars", "euros", "percent",
                "meters", "metres", "km", "miles", "kg", "pounds", "points", "and", "or", "in", "of", "the", "a", "to",
                "than", "for", "with", "at", "on", "by", "from", "as", "is", "are", "was", "were"}
# words before 'number of' that leave it a count ('the number of', 'total number of')
_STOP_BEFORE_NUMBER = {"the", "a", "an", "total", "and", "of", "with", "by", "in", "on", "for", "what", "is", "are", "their",
                       "its", "each", "find", "show", "list", "give", "return", "count", "largest", "smallest", "highest",
                       "lowest", "greatest", "average", "maximum", "minimum", "same", "least", "most", "combined", "overall"}
# a question that is one count: 'How many …' (but 'how many … each …', '… with the most …', '… List the number and …' group)
_ONE_COUNT = re.compile(r"\s*how many\b", re.I)
_MORE_ASKED = re.compile(r"\b(most|least|fewest|largest|smallest|highest|lowest|list|show|return|give)\b", re.I)
_COUNT_HEADER = {"num", "number", "count", "no", "nb", "total"}
_NUMBER_WORDS = {w: n for n, w in enumerate(["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"], 1)}
_LIMIT = re.compile(r"\b(?:top|first)\s+(\d+|" + "|".join(_NUMBER_WORDS) + r")\b", re.I)
_ORDER = re.compile(r"\b(?:order(?:ed)?|sort(?:ed)?|rank(?:ed)?)\b(?:\s+\w+){0,4}?\s+(?:by|of)\s+(.*)$", re.I)


@dataclass
class QueryAnswer:
    """The answer rows (``columns``, ``rows``; at most ``max_rows`` kept, ``total_rows`` counted),
    the SQL that computes them, or ``rows is None`` with the ``reason`` the grammar could not
    express the question. ``source`` says what wrote the SQL: ``offline`` (this grammar) or
    ``llm`` (the NL2SQL agent, :mod:`raylake.fuse.nl2sql`, whose ``turns`` log each query it tried)."""

    sql: str | None
    columns: list[str] = field(default_factory=list)
    rows: list[list] | None = None
    total_rows: int = 0
    warnings: list[str] = field(default_factory=list)
    reason: str | None = None
    source: str = "offline"
    turns: list[dict] = field(default_factory=list)

    def to_json(self) -> dict | None:
        if self.rows is None:
            return None
        return {"columns": self.columns, "rows": self.rows, "total_rows": self.total_rows, "warnings": self.warnings}


def _quoted(parts: list[str]) -> set[str]:
    """The column names that SQL fragments quote (the inverse of :func:`~raylake.fuse.plan_columns.quote`)."""
    return {c.replace('""', '"') for c in re.findall(r'"((?:[^"]|"")*)"', " ".join(parts))}


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _as_cell(x):
    return x if x is None or isinstance(x, (int, float, str, bool)) else str(x)


class _Writer(PlanColumns):
    """Writes the query's clauses from the graph, reading its attributes' columns as :class:`PlanColumns` does."""

    def __init__(self, question: str, graph, fused: Fused, match: ColumnMatch | None = None):
        super().__init__(question, graph, fused, match)
        self.lower = re.findall(r"[a-z0-9']+", question.lower())
        self.sort_only = None  # set by order()

    def names_value(self, attr) -> bool:
        """'the club with name 'AIB'': the word right before a value names the filter, not an asked column."""
        said = re.findall(r"[a-z0-9']+", str(attr.evidence.get("words") or attr.name).lower())
        values = [v.lower() for t in self.graph.trees for a in t.attributes for v in a.values]
        if not said or not values:
            return False
        n = len(said)
        for i in range(len(self.lower) - n + 1):
            if self.lower[i : i + n] == said:
                after = " ".join(self.lower[i + n : i + n + 6]).replace("'", "")
                if any(after.startswith(v.replace("'", "")) or after.startswith("of " + v) for v in values):
                    return True
        return False

    def counted(self, tree, attr, value: str):
        """The entity tree whose rows ``value`` counts, when the question says '<value> <its noun>'
        ('more than 2 faults', 'two or more enzymes') and the attribute's own column is not named by
        that noun; else None."""
        for nxt in self.after_number(value):
            if words(nxt[0]) & words(attr.name):
                continue  # '2 part names': the attribute is what the number is about
            header = words((self.column(tree, attr) or "").rsplit(".", 1)[-1])
            for other in self.graph.trees:
                if other is not tree and words(other.entity) & words(nxt[0]) and not header & words(other.entity):
                    return other
        return None

    def after_number(self, value: str) -> list[list[str]]:
        """The words after each place the question says the whole number ``value`` ('2', 'two'),
        past 'or more' and the upper bound of 'between 2 and 3'; none for other numbers."""
        n = number(value)
        if n is None or n != int(n) or n < 0:
            return []
        said = {str(int(n))} | {w for w, k in _NUMBER_WORDS.items() if k == n}
        out = []
        for i, tok in enumerate(self.lower):
            if tok not in said:
                continue
            nxt = self.lower[i + 1 : i + 6]
            if nxt[:2] in (["or", "more"], ["or", "fewer"], ["or", "less"]):
                nxt = nxt[2:]
            elif nxt[:1] in (["and"], ["to"]) and len(nxt) > 1 and (nxt[1].isdigit() or nxt[1] in _NUMBER_WORDS):
                nxt = nxt[2:]  # the lower bound of 'between 2 and 3 players'
            if nxt:
                out.append(nxt)
        return out

    def counts_rows(self, value: str, op: str, col: str | None, attr) -> bool:
        """Whether the whole number ``value``, compared by ``op``, counts rows: an ordered comparison
        ('at least two documents', 'more than one appointment') said right before a word some plan
        header holds (``Document_ID``, ``AppointmentID``; not 'but', 'have', a unit as '30 years'),
        where that word names neither the attribute nor its column, or the column holds no numbers;
        before any such word when no plan column holds the attribute ('built at least 3 bridges').
        A quoted number ("600") is a value."""
        if op not in (">", ">=", "<", "<=") or self.quoted(value):
            return False
        named = words(attr.name) | words((col or "").rsplit(".", 1)[-1])
        nouns = [nxt[0] for nxt in self.after_number(value) if nxt[0].isalpha() and nxt[0] not in _NOT_COUNTED
                 and (col is None or self.by_words(nxt[0], list(self.names)))]
        return bool(nouns) and (col is None or not self.numeric(col) or not any(words(n) & named for n in nouns))

    def how_many(self) -> bool:
        """'how many', 'number of', 'count' — but not the 'number of' of an attribute's name ('the name
        and phone number of patients': an attribute of the graph, or a word of a plan header, ``Phone``)."""
        text = self.question.lower()
        names = [a.name.lower() for t in self.graph.trees for a in t.attributes]
        for m in re.finditer(r"\bhow many\b|\bnumber of\b|\bcount\b", text):
            before = re.findall(r"[a-z0-9']+", text[: m.start()])[-1:]
            if m.group() == "number of" and before and before[0] not in _STOP_BEFORE_NUMBER and (
                    any(n.endswith(f"{before[0]} number") for n in names) or self.by_words(before[0], list(self.names))):
                continue  # a header the plan holds ('Phone'), not a count
            return True
        return False

    def most_counted(self, asked_trees) -> tuple[object, str] | None:
        """(entity tree, 'DESC'|'ASC') for 'the most <noun>' / 'the fewest <noun>' / 'the largest number of
        <noun>' where the noun is an entity other than the asked ones ('the department with the smallest
        number of professors'); else None."""
        for i, tok in enumerate(self.lower):
            if tok not in _MOST or (tok == "least" and i and self.lower[i - 1] == "at"):
                continue  # 'at least 2' is a comparison
            nxt = self.lower[i + 1 : i + 5]
            counts = nxt[:2] in (["number", "of"], ["amount", "of"], ["count", "of"])
            if tok not in ("most", "fewest", "least") and not counts:
                continue  # 'the highest price', 'the largest city': an attribute's extreme, not a count
            nxt = nxt[2:] if counts else nxt
            if not nxt:
                continue
            for tree in self.graph.trees:
                if all(tree is not t for t in asked_trees) and words(tree.entity) & words(nxt[0]):
                    return tree, _MOST[tok]
        return None

    def counts(self, tree) -> str:
        """``count(DISTINCT ROW(<the tree's table's columns>))``: its rows, each once however the joins repeat
        them; ``count(*)``, the join's rows, when the plan holds none of the tables the extractor gave the
        entity (measured: more often right than declining the count; the query then reads ``fused`` as is)."""
        tabs = self.own_tables(tree) if tree is not None else []
        return f"count(DISTINCT ROW({', '.join(quote(c) for c in self.names[tabs[0]].values())}))" if tabs else "count(*)"

    def notes(self) -> list[str]:
        """The warnings the clauses leave: values read as no filter."""
        return [f"'{v}' is held by no column of the plan and not quoted in the question: read as no filter"
                for v in self.ignored]

    def filters(self) -> list[str]:
        """The WHERE terms, one per value leaf (two '=' values of one attribute: one OR term).
        ``self.terms`` keeps each term's column and values (where the question says them),
        ``self.either`` each OR term with its one-value terms (an intersection's operands)."""
        out = []
        self.terms: list[tuple[str, str, list[str]]] = []
        self.either: list[tuple[str, list[str]]] = []
        self.having: list[tuple[object, str, str]] = []  # (counted tree, op, number)
        self.count_only: set[int] = set()  # attributes whose every value is a count: asked, not filtered
        self.ignored: list[str] = []  # values no plan column holds and the question does not name (unheld)
        self.unheld_only: set[int] = set()  # attributes whose every value was ignored
        for tree in self.graph.trees:
            for attr in tree.attributes:
                if not attr.values:
                    continue
                compare = attr.evidence.get("compare", {})
                values = [v for v in attr.values if not (compare.get(v, "=") in ("=", "!=") and self.unheld(v))]
                self.ignored += [v for v in attr.values if v not in values]
                if not values:
                    self.unheld_only.add(id(attr))  # its words still name a column: asked, like any attribute
                    continue
                ops = [compare.get(v, "=") for v in values]
                counted = [(self.counted(tree, attr, v), v) for v in values]
                if all(c for c, _ in counted) and all(op in _OPS | {"between"} for op in ops):
                    if "between" in ops and len(values) == 2:
                        lo, hi = sorted(values, key=lambda v: float(v))
                        self.having += [(counted[0][0], ">=", lo), (counted[0][0], "<=", hi)]
                    else:
                        self.having += [(c, op, v) for (c, v), op in zip(counted, ops)]
                    self.count_only.add(id(attr))
                    continue
                col = self.fit(attr, self.column(tree, attr), values, ops)
                counts = [self.counts_rows(v, op, col, attr) for v, op in zip(values, ops)]
                # 'projects with at least two documents', the number hung on a column that is no count of
                # documents: the join's rows per answer row (count(*)), as when the counted entity is not planned
                self.having += [(None, op, v) for v, op, c in zip(values, ops, counts) if c]
                values = [v for v, c in zip(values, counts) if not c]
                ops = [op for op, c in zip(ops, counts) if not c]
                if not values:
                    self.count_only.add(id(attr))
                    continue
                if col is None:
                    raise Unanswerable(f"no column of the plan holds the attribute '{attr.name}' the value "
                                       f"{values[0]!r} constrains")
                if "between" in ops and len(values) == 2:
                    lo, hi = sorted(values, key=lambda v: (number(v) is None, number(v) or 0, v))
                    out.append(f"{self.cmp(col, '>=', lo)} AND {self.cmp(col, '<=', hi)}")
                    self.terms.append((out[-1], col, list(values)))
                    continue
                terms = []
                for v, op in zip(values, ops):
                    if op not in _OPS:
                        raise Unanswerable(f"the comparison '{op}' on '{attr.name}' is not in the offline grammar")
                    terms.append(self.cmp(col, op, v))
                eq = [(t, v) for t, op, v in zip(terms, ops, values) if op == "="]
                rest = [(t, [v]) for t, op, v in zip(terms, ops, values) if op != "="]
                if len(eq) > 1:  # two values of one attribute: either one ('in 2009 or 2010')
                    rest.append(("(" + " OR ".join(t for t, _ in eq) + ")", [v for _, v in eq]))
                    self.either.append((rest[-1][0], [t for t, _ in eq]))
                else:
                    rest += [(t, [v]) for t, v in eq]
                out += [t for t, _ in rest]
                self.terms += [(t, col, vs) for t, vs in rest]
        return self.either_on_one_column(out)

    def either_on_one_column(self, out: list[str]) -> list[str]:
        """Two attributes' one-value ``=`` terms on one column are one OR term: a cell equals one
        value at a time, so their AND is empty, and 'players from Maryland or Duke college' read as
        two attributes (one given the wrong column, :meth:`fit` finding the right one) means either
        ('both …': the intersection of the two, :func:`~raylake.fuse.setops.set_operation`)."""
        eq: dict[str, list[int]] = {}
        for i, (term, col, values) in enumerate(self.terms):
            if len(values) == 1 and term == self.cmp(col, "=", values[0]):
                eq.setdefault(col, []).append(i)
        drop = set()
        for col, idx in eq.items():
            if len(idx) < 2:
                continue
            terms = [self.terms[i][0] for i in idx]
            merged = "(" + " OR ".join(terms) + ")"
            self.terms[idx[0]] = (merged, col, [self.terms[i][2][0] for i in idx])
            self.either.append((merged, terms))
            out[out.index(terms[0])] = merged
            drop.update(idx[1:])
        for i in sorted(drop, reverse=True):
            out.remove(self.terms[i][0])
            del self.terms[i]
        return out

    @staticmethod
    def cmp(col: str, op: str, value: str) -> str:
        n = number(value)
        if n is not None:
            return f"TRY_CAST({quote(col)} AS DOUBLE) {op} {n!r}"
        if op in ("=", "!="):
            return f"lower(trim(CAST({quote(col)} AS VARCHAR))) {op} {_lit(value.strip().lower())}"
        return f"CAST({quote(col)} AS VARCHAR) {op} {_lit(value)}"

    def group_tree(self):
        """The tree of the entity after 'each', 'per' or 'every', if any."""
        for i, w in enumerate(self.lower):
            if w in _GROUP_CUE:
                nxt = set(self.lower[i + 1 : i + 4])
                for tree in self.graph.trees:
                    if words(tree.entity) & {x[:-1] if x.endswith("s") else x for x in nxt}:
                        return tree
        return None

    def order(self, asked: list[tuple]) -> str | None:
        """'… in ascending order of the age of the host': ``ORDER BY`` the asked column the cue names.
        ``self.sort_only`` is that column's entry when the question names it only after the cue: a sort
        key, not something asked for ('the names of the hosts in order of age' shows names)."""
        self.sort_only = None
        m = _ORDER.search(self.question)
        if not m:
            return None
        tail = words(m.group(1))
        direction = " DESC" if re.search(r"\b(descending|decreasing|desc)\b", self.question, re.I) else ""
        for entry in asked:
            _tree, attr, col, agg = entry
            if words(attr.name) & tail or words(col.rsplit(".", 1)[-1]) & tail:
                expr = f"{agg}(TRY_CAST({quote(col)} AS DOUBLE))" if agg in ("avg", "sum", "max", "min") else quote(col)
                if agg is None and not words(attr.name) & words(self.question[: m.start()]):
                    self.sort_only = entry
                return f"ORDER BY {expr}{direction}"
        return None


def answer_query(question: str, graph, fused: Fused, max_rows: int = 1_000, run: bool = True,
                 match: ColumnMatch | None = None) -> QueryAnswer:
    """The answer to ``question`` as a DuckDB query over the fused plan (module docstring).

    Args:
        question: the question's text (cues the graph does not hold: group-by, order, limit).
        graph: its :class:`raylake.intent.model.IntentGraph`.
        fused: the plan fused by :func:`raylake.fuse.fuse`; the query reads its table as ``fused``.
        max_rows: answer rows kept (``SearchConfig.max_answer_rows``); all are counted.
        run: ``False`` writes the SQL without executing it (``raylake ask --sql-only``).
        match: how an attribute's words find a plan column its evidence does not name
            (:data:`ColumnMatch`; the engine passes the index's); ``None``: shared header words.

    Returns a :class:`QueryAnswer` whose ``sql`` is self-contained: ``WITH fused AS (<the
    fusion's SQL over the lake files>) SELECT …``.
    """
    import duckdb

    w = _Writer(question, graph, fused, match)
    try:
        if graph is None or not graph.trees:
            raise Unanswerable("no intent graph")
        where = w.filters()
        setop = set_operation(question, graph, w)
        if fused.table.num_rows == 0 and not (setop and setop[0] == "except"):
            raise Unanswerable("the fused plan has no rows")
        how_many = w.how_many()
        group_tree = w.group_tree()
        # 'How many classes has the professor whose last name is Graztevski?': one number, not one per name
        # (of the 94 tuning questions that open 'How many' with no group cue, the gold SQL of 5 groups, each
        # with a superlative or a second request)
        one_count = bool(_ONE_COUNT.match(question)) and group_tree is None and not _MORE_ASKED.search(question)
        asked = []  # (tree, attribute, fused column, aggregate)
        for tree in graph.trees:
            for attr in tree.attributes:
                ev = attr.evidence
                if id(attr) in w.count_only and (not ev.get("words") or ev.get("aggregate") == "count" and not how_many
                                                 or w.column(tree, attr) is None):
                    continue  # the attribute only carried the count's number ('more than one appointment')
                if (attr.values and id(attr) not in w.count_only | w.unheld_only) or ev.get("implied") or ev.get("from_value"):
                    continue
                if w.names_value(attr):
                    continue
                col = w.column(tree, attr)
                if col is None and one_count:
                    continue  # 'How many members of club X …?': the noun counted, which needs no column
                if col is None:
                    raise Unanswerable(f"no column of the plan holds the asked attribute '{attr.name}'")
                agg = ev.get("aggregate")
                if agg == "count" and words(col.rsplit(".", 1)[-1]) & _COUNT_HEADER:
                    agg = None  # 'the number of employees' is the num_employees column, not a count
                asked.append((tree, attr, col, agg if agg in _AGGS else None))
        asked = list({a[2] + "|" + str(a[3]): a for a in asked}.values())
        text = question.lower()
        plain = [a for a in asked if a[3] is None]
        aggs = [a for a in asked if a[3] is not None]
        order = w.order(asked)
        limit = None
        m = _LIMIT.search(question)
        if m:
            limit = int(_NUMBER_WORDS.get(m.group(1).lower(), m.group(1)))
        select, group = [], []
        superlative = [a for a in aggs if a[3] in ("max", "min")]
        if superlative and plain and group_tree is None and not order:
            _t, _a, col, agg = superlative[0]
            order, limit = f"ORDER BY TRY_CAST({quote(col)} AS DOUBLE) {'DESC' if agg == 'max' else 'ASC'}", 1
            aggs = [a for a in aggs if a is not superlative[0] and a[3] not in ("max", "min")]
        if how_many and not any(a[3] == "count" for a in aggs):
            # 'how many players …': the count of the entity's rows, not of an attribute that follows
            plain = [a for a in plain if a[1].evidence.get("words")]
            aggs = [a for a in aggs if a[3] != "count"] + [(None, None, None, "count")]
        if one_count and not order:
            plain = []
        if aggs:
            if not plain and group_tree is not None:
                col = w.entity_column(group_tree)
                if col:
                    plain = [(group_tree, None, col, None)]
            group = [quote(a[2]) for a in plain]
        having = []
        if w.having:  # 'parts with more than 2 faults': per answer row, the faults' rows counted
            if not plain and not aggs:
                keep = next((t for t in graph.trees if all(t is not c for c, _, _ in w.having)), graph.trees[0])
                col = w.entity_column(keep)
                if col is None:
                    raise Unanswerable("the question counts an entity per row, but no column names the rows it counts for")
                plain = [(keep, None, col, None)]
            group = [quote(a[2]) for a in plain]
            having = [f"{w.counts(counted)} {op} {int(float(n))}" for counted, op, n in w.having]
        most = None
        if plain and not order and group_tree is None and not having and all(a[3] == "count" for a in aggs):
            most = w.most_counted([a[0] for a in plain])
        if most:  # 'the department with the most professors': one row, the one counting most of them
            aggs, group = [], [quote(a[2]) for a in plain]
            # the group's columns break ties: the same question gets the same row every time
            order, limit = f"ORDER BY {w.counts(most[0])} {most[1]}, {', '.join(group)}", 1
        distinct = "DISTINCT " if re.search(r"\b(distinct|different|unique)\b", text) and not group else ""
        if any(a is w.sort_only for a in plain) and len(plain) > 1 and not group and not aggs and not distinct:
            plain = [a for a in plain if a is not w.sort_only]  # sorted by, not shown
        select = [quote(a[2]) for a in plain]
        for _t, _a, col, agg in aggs:
            if agg == "count":
                select.append("count(*)")
            else:
                select.append(f"{agg}(TRY_CAST({quote(col)} AS DOUBLE))")
        if not select:
            if graph.trees and not where:
                raise Unanswerable("the question asks for no attribute the grammar can project")
            col = w.entity_column(graph.trees[0])
            if col is None:
                raise Unanswerable("the question asks for no attribute the grammar can project")
            select = [quote(col)]

        con = duckdb.connect()
        con.register("fused", fused.table)
        if setop and having:
            raise Unanswerable("a counted entity beside 'not' or 'both': the grammar does not combine the two")
        if setop and setop[0] == "except":
            read_cols = [a[2] for a in plain + aggs if a[2]] or ([w.entity_column(graph.trees[0])] if graph.trees else [])
            source, where, k = difference(w, fused, where, [c for c in read_cols if c], setop[1])
            con.register(f"q{k}", fused.part_tables[k])
            sql = _clauses(f"SELECT {distinct}{', '.join(select)}\nFROM {source}", where, group, order, limit)
            full = "WITH " + ",\n".join(fused.ctes + [f"fused AS (\n{fused.final}\n)"]) + "\n" + sql
            return _run(con, sql, full, run, max_rows, w.notes())
        if setop and (aggs or group or order or limit):
            raise Unanswerable("'both' beside an aggregate, a group or an order: the grammar intersects plain rows only")

        # cardinality: parts the answer reads, and whether only-joined parts repeat their rows
        read = {w.part_of(a[2]) for a in plain + aggs if a[2]}
        entity = next(iter(w.tree_tables(graph.trees[0])), None)
        ent_cols = [n for n in fused.names.get(entity, {}).values() if n in w.present] if entity else []
        if ent_cols and any(a[3] == "count" for a in aggs):
            read.add(w.part_of(ent_cols[0]))  # 'how many players …': the players are what is counted
        read |= {w.part_of(c) for c in _quoted(where + having + ([order] if most else []))}
        warnings, source = w.notes(), "fused"
        # the de-duplicated source holds the read parts' columns only: use it when the query names no other
        read_cols = [c for c in fused.table.column_names if w.part.get(c) in read]
        referenced = _quoted(select + where + group + having + [order or ""])
        counts_join = any("count(*)" in h for h in having + [order or ""])  # the join's rows are what is counted
        if read_cols and len(read) < len(fused.parts) and referenced <= set(read_cols) and not counts_join:
            proj = ", ".join(quote(c) for c in read_cols)
            n_distinct = con.sql(f"SELECT count(*) FROM (SELECT DISTINCT {proj} FROM fused)").fetchall()[0][0]
            if n_distinct < fused.table.num_rows:
                others = [p["label"] for p in fused.parts if p["label"] not in read]
                warnings.append(f"the joins of {', '.join(others)} (read for no answer column) repeat rows: {fused.table.num_rows} "
                                f"fused rows hold {n_distinct} distinct rows of the parts the answer reads, each read once")
                source = f"(SELECT DISTINCT {proj} FROM fused) AS fused"
        if ent_cols and (aggs or how_many) and len(read) > 1:
            proj = ", ".join(quote(c) for c in ent_cols)
            n_all = con.sql(f"SELECT count(*) FROM {source}").fetchall()[0][0]
            n_ent = con.sql(f"SELECT count(*) FROM (SELECT DISTINCT {proj} FROM {source})").fetchall()[0][0]
            if n_ent < n_all:
                warnings.append(f"a join multiplies the rows of {entity}: {n_all} rows for {n_ent} of its rows, so "
                                "an aggregate counts each of them once per match")

        if ent_cols:
            part = next(p for p in fused.parts if p["label"] == w.part_of(ent_cols[0]))
            proj = ", ".join(quote(c) for c in ent_cols)
            kept = con.sql(f"SELECT count(*) FROM (SELECT DISTINCT {proj} FROM fused)").fetchall()[0][0]
            if kept < part["rows"]:
                warnings.append(f"only {kept} of the {part['rows']} rows of {part['label']} match the plan's joins; "
                                "the answer reads those")
        if setop:  # 'both A and B': the rows of A intersected with the rows of B ('either' holds their terms)
            either, operands = w.either[0]
            base = [t for t in where if t != either]
            sql = "\nINTERSECT\n".join(_clauses(f"SELECT {', '.join(select)}\nFROM {source}", base + [op], [], None, None)
                                        for op in operands)
        else:
            sql = _clauses(f"SELECT {distinct}{', '.join(select)}\nFROM {source}", where, group, order, limit, having)
        full = f"WITH fused AS (\n{fused.sql}\n)\n{sql}" if fused.sql else sql
        return _run(con, sql, full, run, max_rows, warnings)
    except Unanswerable as exc:
        return QueryAnswer(None, reason=str(exc))


def _clauses(head: str, where: list[str], group: list[str], order: str | None, limit: int | None,
             having: list[str] = ()) -> str:
    sql = head
    if where:
        sql += "\nWHERE " + " AND ".join(where)
    if group:
        sql += "\nGROUP BY " + ", ".join(group)
    if having:
        sql += "\nHAVING " + " AND ".join(having)
    if order:
        sql += "\n" + order
    if limit:
        sql += f"\nLIMIT {int(limit)}"
    return sql


def _run(con, sql: str, full: str, run: bool, max_rows: int, warnings: list[str]) -> QueryAnswer:
    """Execute ``sql`` on ``con`` (``full``: the same, self-contained, as the answer shows it)."""
    import duckdb

    if not run:
        con.close()
        return QueryAnswer(full, warnings=warnings)
    try:
        rel = con.sql(sql)
        columns = list(rel.columns)
        table = rel.arrow()
    except duckdb.Error as exc:  # a query the grammar wrote wrong: no answer beats a traceback
        con.close()
        return QueryAnswer(full, reason=f"the answer query failed in DuckDB ({type(exc).__name__}); please report it", warnings=warnings)
    if not isinstance(table, pa.Table):
        table = table.read_all()
    con.close()
    rows = [[_as_cell(x) for x in r.values()] for r in table.slice(0, max_rows).to_pylist()]
    return QueryAnswer(full, columns, rows, table.num_rows, warnings)
