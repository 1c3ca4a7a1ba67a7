"""The intent trees of one question as they are built, with the lake tables each stands for.

GRAFT (Sec. 3.1) models a question's intent as a forest of intent trees — an entity, its
attributes, their values — joined by cross-tree edges (:mod:`raylake.intent.model`). The
assembler (:mod:`.assemble`) adds trees for the named entities, then attributes and values,
and implied trees for tables the lake alone picks (a value only one table holds, a bridge:
:mod:`.joins`); :class:`Forest` keeps, beside each tree, the table chosen for it, its first
candidates and where its words start, which the placement rules and the joins read. The
clean-ups after placement (:func:`merge_repeats`, :func:`drop_strays`) are here too; their
figures are in the package docstring (:mod:`raylake.intent.offline`, step 3).
"""
from __future__ import annotations

import numpy as np

from raylake.intent.lexicon import tokens
from raylake.intent.model import Attribute, IntentTree, Join
from raylake.intent.offline.span import Span
from raylake.intent.offline.syntax import owner


class Forest:
    """One question's trees, each with its chosen table (``table``), its first three candidate
    tables (``tables``) and the token its words start at (``start``; 10⁶ for an implied tree).

    ``near`` is the closeness of every lake table to the chosen ones (set by the assembler)
    and ``pin_at`` the implied trees the lake alone picked → the token where their value
    starts (−1: a header), for the second pass (package docstring, step 3)."""

    def __init__(self, index, lex, lower: list[str]):
        self.index = index
        self.lex = lex
        self.lower = lower
        self.trees: list[IntentTree] = []
        self.table: list[int | None] = []
        self.tables: list[list[int]] = []
        self.start: list[int] = []
        self.near: np.ndarray | None = None
        self.pin_at: dict[int, int] = {}
        self._n_attr = 0  # attribute ids run across the trees: a1, a2, ...

    def __len__(self) -> int:
        return len(self.trees)

    def add_tree(self, tree: IntentTree, table: int | None, tables: list[int], start: int) -> int:
        """Add ``tree``; returns its index."""
        self.trees.append(tree)
        self.table.append(table)
        self.tables.append(tables)
        self.start.append(start)
        return len(self.trees) - 1

    def implied_tree(self, t: int, words: str, why: str) -> int:
        """A tree for table ``t``, which no entity of the question names; returns its index."""
        name = table_name(self.index, self.lex, t, [x.entity for x in self.trees])
        tree = IntentTree(f"t{len(self.trees) + 1}", name, [], {
            "words": [words] if words else [], "implied": why,
            "tables": [self.index.paths[u] for u in shards_first(self.index, t)][:10]})
        return self.add_tree(tree, t, [t], 10**6)

    def add_attr(self, k: int, name: str, cols, words, values=(), extra=None) -> Attribute:
        """A new attribute of tree ``k``, its evidence the words and the first five ``cols``."""
        idx = self.index
        self._n_attr += 1
        ev = {"words": words, "columns": [[idx.columns["path"][c], idx.columns["name"][c], round(float(s), 3)] for c, s in cols[:5]]}
        ev.update(extra or {})
        a = Attribute(f"a{self._n_attr}", name, list(values), ev)
        self.trees[k].attributes.append(a)
        return a

    def in_tree(self, k: int, c: int, first: bool = False) -> bool:
        """Is column ``c`` in tree ``k``'s first table (``first``) or first three, shards counted?"""
        shard_of = self.index.graph.shard_of
        t = int(self.index.col_table[c])
        return any(shard_of[t] == shard_of[u] for u in self.tables[k][: 1 if first else 3])

    def home(self, span: Span) -> tuple[int | None, float]:
        """The tree whose chosen table holds one of the span's columns, before one that merely
        ranks it, and the column's score."""
        best, best_s = None, 0.0
        for k in range(len(self.trees)):
            s = max((sc * (1.0 if self.in_tree(k, c, True) else 0.9) for c, sc in span.columns if self.in_tree(k, c)), default=0.0)
            if s > best_s + 1e-9:
                best, best_s = k, s
        return best, best_s

    def nearest_tree(self, span: Span) -> int | None:
        """The tree a word belongs to by the question's syntax (:func:`.syntax.owner`)."""
        return owner(span, self.start, self.lower)

    def taken(self) -> set[int]:
        """Shard clusters the trees already hold (implied trees join them as they are made)."""
        return {int(self.index.graph.shard_of[u]) for u in self.table if u is not None}


def table_name(index, lex, t: int, taken=()) -> str:
    """A name for a table nobody named: its own entity word, else its first headers' words."""
    ew = lex.table_entity_words[t]
    taken = {" ".join(tokens(x)) for x in taken}
    if ew:
        word = ew.most_common(1)[0][0].replace("_", " ")
        if word not in taken:
            return word
    words = [index.columns["words"][c] for c in index.table_columns[t][:4]]
    return " ".join(words) or index.paths[t]


def shards_first(index, t: int) -> list[int]:
    """``t``, then the rest of its shard cluster, the strongest union link first: the
    evidence's first table is the one chosen (search anchors a tree on it), not the
    cluster's lowest id — a cluster may also hold a look-alike table of another database."""
    union = index.graph.union[t]
    rest = [u for u in index.graph.shards(t) if u != t]
    return [t] + sorted(rest, key=lambda u: (-(union[u].score if u in union else 0.0), u))


def attribute_on(tree: IntentTree, path: str, column: str) -> Attribute | None:
    """The tree's attribute whose first column is ``path``'s ``column``, if it has one."""
    return next((a for a in tree.attributes if a.evidence.get("columns") and a.evidence["columns"][0][:2] == [path, column]), None)


def merge_repeats(trees: list[IntentTree]) -> None:
    """One attribute per column a tree reads: a second mention whose first column is an
    earlier attribute's ('the average gpa … the highest average gpa', 'grape … grapes') adds
    its words, values and comparisons to it rather than a second node for the same need —
    unless the two aggregate differently ('the minimum and the maximum price' asks two
    things of one column). The attribute is named by the mention whose words match the
    column best ('older than 60 … their age' is 'age'), with that mention's columns: search
    scores an attribute by its name."""
    for t in trees:
        first: dict[tuple, Attribute] = {}
        kept = []
        for a in t.attributes:
            cols = a.evidence.get("columns")
            key = tuple(cols[0][:2]) if cols else None
            into = first.get(key) if key else None
            agg, into_agg = a.evidence.get("aggregate"), into.evidence.get("aggregate") if into else None
            if into is None or (agg and into_agg and agg != into_agg):
                if into is None and key:
                    first[key] = a
                kept.append(a)
                continue
            words = a.evidence.get("words", a.name)
            if cols[0][2] > into.evidence["columns"][0][2]:
                # named by the words that match the column best ('age', not 'older'): search reads the name
                words, into.evidence["words"] = into.evidence.get("words", into.name), words
                into.name, into.evidence["columns"] = a.name, cols
            into.evidence.setdefault("also", []).append(words)
            into.values.extend(v for v in a.values if v not in into.values)
            if a.evidence.get("compare"):
                into.evidence.setdefault("compare", {}).update(a.evidence["compare"])
            if agg and not into_agg:
                into.evidence["aggregate"] = agg
        t.attributes[:] = kept


def drop_strays(trees: list[IntentTree], joins: list[Join], stray_match: float) -> None:
    """Drop an attribute that no tree's tables hold and whose header only resembles its
    words (match < ``stray_match``): it names no table the question is about, and its
    column is a guess. One that constrains a value, or that a join uses, stays.

    Spider, all 1,701 questions (a scratch tally, not in ``bench/``): of 625 attributes
    whose first column lies outside every tree's first three tables, 141 were right; of
    the 163 of them below 0.9 without a value, 13."""
    used = {(j.from_tree, j.from_attribute) for j in joins} | {(j.to_tree, j.to_attribute) for j in joins}
    held = {p for t in trees for p in t.evidence.get("tables", [])[:3]}
    for t in trees:
        t.attributes[:] = [a for a in t.attributes if a.values or (t.tree_id, a.attribute_id) in used
                           or a.evidence.get("role") == "key" or not a.evidence.get("columns")
                           or a.evidence["columns"][0][0] in held or a.evidence["columns"][0][2] >= stray_match]
