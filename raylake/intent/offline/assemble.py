"""Assembling the intent graph: roles, tables, trees, then each attribute and value in its place.

Steps 3 and 4 of the package docstring (:mod:`raylake.intent.offline`), as small named rules
run in order over one :class:`Assembly` (the shape of Ray Data's logical optimizer rules):
each mention gets a role (:func:`.syntax.assign_roles`); the entities' tables are ranked
(:mod:`.ranking`) and chosen jointly (:mod:`.joint`), an entity word that is a header of
another chosen table becoming its attribute; every entity still standing is a tree
(:class:`.forest.Forest`); each attribute goes to the tree whose tables hold its column —
or brings in the table joined to them that does, or the one table that spells it — and each
value to the attribute whose column holds it, else to the nearest attribute, else to a tree
of the table holding it; last the trees are joined (:mod:`.joins`) and tidied. :data:`RULES`
lists the rules; :class:`Assembler` runs them. The result is an Appendix A intent graph
(GRAFT, Sec. 3.1: entity trees, attributes, value leaves, cross-tree joins) whose every atom
records the words and the lake objects it came from, plus the tables the lake alone picked,
which the extractor pins for a second pass (:mod:`.extractor`).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from raylake.intent.lexicon import tokens
from raylake.intent.model import Attribute, IntentGraph, IntentTree, Join
from raylake.intent.offline.forest import Forest, attribute_on, drop_strays, merge_repeats
from raylake.intent.offline.joins import joins
from raylake.intent.offline.joint import JointChooser
from raylake.intent.offline.matching import Matcher
from raylake.intent.offline.ranking import Ranker
from raylake.config import IntentConfig
from raylake.intent.offline.span import Span
from raylake.intent.offline.syntax import aggregate, assign_roles, compare, ed_or_ly, owner, verb_like
from raylake.intent.offline.vocab import NAMING, YEAR


@dataclasses.dataclass
class Assembly:
    """One pass's assembly as the rules fill it: the parts they call, the question read, and
    what each rule leaves for the next (entity and attribute spans, ranked and chosen tables,
    the forest, the placed attributes, the joins)."""

    index: object
    lex: object
    cfg: IntentConfig
    matcher: Matcher
    ranker: Ranker
    chooser: JointChooser
    question: str
    lower: list[str]
    mentions: list[Span]
    values: list[Span]
    pins: list[tuple[int, int]]
    ent_spans: list[Span] = dataclasses.field(default_factory=list)
    attr_spans: list[Span] = dataclasses.field(default_factory=list)
    merged: dict[int, list[Span]] = dataclasses.field(default_factory=dict)  # id(entity span) → the spans of its lemma
    context: list[Span] = dataclasses.field(default_factory=list)
    ranked: list[list[tuple[int, float]]] = dataclasses.field(default_factory=list)
    chosen: dict[int, int] = dataclasses.field(default_factory=dict)
    alternatives: dict[int, list[int]] = dataclasses.field(default_factory=dict)
    demoted: set[int] = dataclasses.field(default_factory=set)
    forest: Forest | None = None
    attr_of: dict[int, Attribute] = dataclasses.field(default_factory=dict)  # id(span) → its attribute
    attr_own: dict[int, set[int]] = dataclasses.field(default_factory=dict)  # id(span) → columns a value must be in
    joins: list[Join] = dataclasses.field(default_factory=list)

    def table_list(self, k: int) -> list[int]:
        """Entity ``k``'s tables as its tree's evidence ranks them: the chosen one, the next
        ``runners_up`` of the joint choice (by max-marginal), then the rest by its own ranking."""
        head = ([self.chosen[k]] if k in self.chosen else []) + self.alternatives.get(k, [])[: self.cfg.runners_up]
        return head + [t for t, _ in self.ranked[k] if t not in head]


class Rule:
    """One step of the assembly: ``apply(state)`` reads and fills the :class:`Assembly`."""

    name = ""

    def apply(self, s: Assembly) -> None:
        raise NotImplementedError


class AssignRoles(Rule):
    """Each mention an entity or an attribute (:func:`.syntax.assign_roles`), one tree's worth
    of entity per lemma ('head' … 'heads' is one need), and the context the ranking reads: the
    attributes and the values some column holds (package docstring, step 3)."""

    name = "roles"

    def apply(self, s: Assembly) -> None:
        s.matcher.number_of(s.mentions, s.lower)
        assign_roles(s.mentions, s.lower, s.matcher.spelled)
        ent_spans = [m for m in s.mentions if m.role == "entity"]
        s.attr_spans = [m for m in s.mentions if m.role == "attribute"]
        heads: dict[str, Span] = {}
        for m in ent_spans:
            key = " ".join(tokens(m.text))
            if key in heads:
                s.merged[id(heads[key])].append(m)
            else:
                heads[key] = m
                s.merged[id(m)] = [m]
        s.ent_spans = list(heads.values())
        s.context = s.attr_spans + [v for v in s.values if v.columns and not v.qualifies]


class RankTables(Rule):
    """Each entity's tables, best first (:meth:`.ranking.Ranker.rank_tables`), beside the
    pinned tables, with η · holds for the generic words it owns (package docstring, step 3)."""

    name = "rank"

    def apply(self, s: Assembly) -> None:
        graph, cfg, ranker, ent_spans = s.index.graph, s.cfg, s.ranker, s.ent_spans
        held = ranker.context_tables(s.context)
        bases = [ranker.base_tables(e, held) for e in ent_spans]
        qcos = ranker.question_tables(s.question) if ent_spans and cfg.question_prior > 0 else None
        pinned = [{t: 1.0} for t, _ in s.pins]
        for k, e in enumerate(ent_spans):
            # a pinned table answers another need of the question, and the entity is sought beside
            # it — unless the value comes right after the entity's words ('the course INTRODUCTION
            # TO COMPUTER SCIENCE', 'the club named …'): then the value says which table it is
            apart = {int(graph.shard_of[t]) for t, at in s.pins
                     if not (at == e.end or (at == e.end + 1 and s.lower[e.end] in NAMING))}
            if apart:
                bases[k] = {t: v for t, v in bases[k].items() if int(graph.shard_of[t]) not in apart}
        s.ranked = [ranker.rank_tables(e, bases[k], s.context, [bases[j] for j in range(len(ent_spans)) if j != k] + pinned, qcos)
                    for k, e in enumerate(ent_spans)]
        if cfg.generic_holds > 0 and ent_spans:
            self._generic_holds(s)

    def _generic_holds(self, s: Assembly) -> None:
        # 'the names of the stores': of the tables named 'store', the one that has a name
        # (figures in the package docstring, step 3)
        cfg, ent_spans, ranked = s.cfg, s.ent_spans, s.ranked
        starts = [e.start for e in ent_spans]
        owned: dict[int, list[Span]] = {}
        for m in s.attr_spans:
            if s.matcher.specificity(m) < cfg.generic_spec and m.emb is not None:
                owned.setdefault(owner(m, starts, s.lower), []).append(m)
        for k, ms in owned.items():
            e = ent_spans[k]
            named = [t for t, _ in ranked[k][: cfg.holds_top] if e.why.get(t, ("",))[0] == "named"]
            if len(named) > 1:
                e.held_attrs = {t: cfg.generic_holds * h for t, h in s.ranker.holds(named, ms).items()}
                ranked[k] = sorted(((t, v + e.held_attrs.get(t, 0.0)) for t, v in ranked[k]), key=lambda x: (-x[1], x[0]))


class ChooseTables(Rule):
    """One table per entity, chosen jointly with the pinned tables, and the runners-up by
    max-marginal (:meth:`.joint.JointChooser.choose`; package docstring, step 3)."""

    name = "choose"

    def apply(self, s: Assembly) -> None:
        s.chosen, s.alternatives = s.chooser.choose(s.ranked, s.context, [t for t, _ in s.pins])


class DemoteHeaders(Rule):
    """'representatives in descending order of votes': 'votes' names tables of its own, but
    the election table chosen for another entity has a Votes header — the word is that
    table's attribute, not a third table (``header_of_other``; package docstring, step 3)."""

    name = "demote"

    def apply(self, s: Assembly) -> None:
        graph, cfg, matcher, ent_spans = s.index.graph, s.cfg, s.matcher, s.ent_spans
        for k, tk in s.chosen.items():
            lexical = matcher.lexical(ent_spans[k])
            by_header = ent_spans[k].why.get(tk, ("",))[0] == "header"
            if any(j != k and j not in s.demoted and (by_header or graph.shard_of[tj] != graph.shard_of[tk])
                   and matcher.header_match(lexical, graph.shards(tj)) >= cfg.header_of_other
                   for j, tj in s.chosen.items()):
                s.demoted.add(k)
        for k in sorted(s.demoted):
            ent_spans[k].role = "attribute"
            s.attr_spans.append(ent_spans[k])
        s.attr_spans.sort(key=lambda m: m.start)


class ReadCandidateHeaders(Rule):
    """The headers of each entity's first three table candidates, and their shards, count for
    every attribute word, not only the lake's best matches kept for it ('the addresses of the
    buildings': the chosen table's ``building_address``; package docstring, step 3)."""

    name = "candidate-headers"

    def apply(self, s: Assembly) -> None:
        graph = s.index.graph
        candidates = sorted({t for k in s.chosen if k not in s.demoted for t in s.table_list(k)[:3]})
        cand_tables = [u for t in candidates for u in graph.shards(t)]
        for m in s.attr_spans:
            m.lake_columns, m.columns = m.columns, s.matcher.with_own(m, cand_tables)


class BuildTrees(Rule):
    """A tree per entity still standing, two resolving to one table (or its shards) being one
    tree, with its tables and their scores as evidence; and every table's closeness to the
    chosen ones, which the placement rules read (package docstring, step 3)."""

    name = "trees"

    def apply(self, s: Assembly) -> None:
        idx, graph, chosen, ent_spans, merged = s.index, s.index.graph, s.chosen, s.ent_spans, s.merged
        keep, seen_cluster = [], {}
        for k in range(len(ent_spans)):
            if k in s.demoted:
                continue
            if k in chosen:
                cl = int(graph.shard_of[chosen[k]])
                if cl in seen_cluster:
                    merged[id(ent_spans[seen_cluster[cl]])].extend(merged[id(ent_spans[k])])
                    continue
                seen_cluster[cl] = k
            keep.append(k)

        forest = s.forest = Forest(idx, s.lex, s.lower)
        for k in keep:
            e = ent_spans[k]
            tabs = s.table_list(k)
            scores = dict(s.ranked[k])
            forest.add_tree(IntentTree(f"t{len(forest) + 1}", e.text, [], {
                "words": [m.text for m in merged[id(e)]], "span": [e.start, e.end],
                "tables": [idx.paths[t] for t in tabs[:10]],
                "table_scores": [round(scores.get(t, 0.0), 3) for t in tabs[:10]],
                **({"why": s.ranker.why(e, tabs[0], k in chosen and len(chosen) > 1)} if tabs else {})}),
                chosen.get(k), tabs[:3], e.start)
        # closeness of every table to the chosen ones: a column near the question's tables
        # is the likelier reading of an attribute word than the same header elsewhere
        forest.near = np.zeros(idx.n_tables, np.float32)
        for t in set(chosen.values()):
            np.maximum(forest.near, s.ranker.near(t), out=forest.near)


class PlaceAttributes(Rule):
    """Each attribute mention on its tree — the one whose tables hold its column, the named
    one's for a word every schema has — or on a tree made for the table joined to them that
    holds it, or for the one table that spells it (implied trees); fills ``attr_of`` and
    ``attr_own`` (package docstring, step 3)."""

    name = "attributes"

    def apply(self, s: Assembly) -> None:
        """``attr_own``: by the span's id, its readings among its columns as ranked for its tree
        (first 8, ≥ ``min_attr_score``) that are its tree's own table's or a shard's: where a
        value it constrains must be held."""
        idx, graph, cfg, matcher, forest, lower = s.index, s.index.graph, s.cfg, s.matcher, s.forest, s.lower
        for m in s.attr_spans:
            if verb_like(m, lower) and matcher.spelled(m) < 0.95:
                # 'named', 'taught', 'located': the question's verbs, unless a header spells exactly
                # that ('opened', Opened) — spells, not resembles: the embedding reads 'located'
                # as Location
                continue
            if forest.trees and matcher.specificity(m) < cfg.generic_spec:
                k, sc = forest.nearest_tree(m), 1.0  # 'name', 'id': every table has one; the question's syntax says whose
                t_n = self._neighbour_own(s, m, k) if k is not None else None
                if t_n is not None:
                    k = forest.implied_tree(t_n, m.text, "attribute of the named one held by a table joined to it")
            else:
                t_n = self._neighbour_holding(s, m)
                if t_n is not None:
                    k, sc = forest.implied_tree(t_n, m.text, "attribute held by a table joined to the named ones"), 1.0
                else:
                    k, sc = forest.home(m)
            if k is None or sc < 0.5:
                if (m.columns[0][1] if m.columns else 0.0) < cfg.min_attr_score:
                    continue  # no header in the lake says this: a verb or filler, not a data need
                k2 = forest.nearest_tree(m)
                if k2 is None and m.columns and matcher.specificity(m) > cfg.generic_spec:
                    t = int(idx.col_table[m.columns[0][0]])
                    k2 = forest.implied_tree(t, m.text, "attribute without a named entity")
                elif k2 is not None and matcher.specificity(m) > cfg.generic_spec and not ed_or_ly(lower[m.end - 1]):
                    t = self._sole_holder(s, m)
                    if t is not None and int(graph.shard_of[t]) not in forest.taken():
                        k2 = forest.implied_tree(t, m.text, "attribute only one table holds")
                        forest.pin_at[k2] = -1
                k = k2
            if k is None:
                continue
            extra = {}
            agg = aggregate(lower, m.start)
            if agg:
                extra["aggregate"] = agg
            cols = _ranked_cols(s, k, m)
            s.attr_of[id(m)] = forest.add_attr(k, m.text, cols, m.text, extra=extra)
            s.attr_own[id(m)] = {c for c, score in cols[:8] if score >= cfg.min_attr_score and forest.in_tree(k, c, True)}

    def _neighbour_holding(self, s: Assembly, span: Span) -> int | None:
        """'counties that have at least two delegates': no chosen table has a Delegate, the
        election table joined to county does — the question needs that table too."""
        idx, graph, cfg, forest = s.index, s.index.graph, s.cfg, s.forest
        if any(forest.in_tree(k, c, True) for k in range(len(forest)) for c, sc in span.columns if sc >= cfg.min_attr_score):
            return None
        held_clusters = forest.taken()
        best, best_v = None, 0.0
        for c, sc in span.columns:
            t = int(idx.col_table[c])
            if sc < cfg.neighbour_col or int(graph.shard_of[t]) in held_clusters:
                continue
            v = sc * float(forest.near[t])
            if v > best_v:
                best, best_v = t, v
        return best if best_v >= cfg.neighbour_near else None

    def _neighbour_own(self, s: Assembly, span: Span, k: int) -> int | None:
        """'the names of entrepreneurs': the entrepreneur table has no Name; the people table
        its People_ID joins to does. A word every schema has is the tree's own column — or,
        where the tree's table has none, that of the table its strongest key link (≥
        ``min_bridge``) reaches that has one (figures in the package docstring, step 3)."""
        graph, cfg, matcher, forest = s.index.graph, s.cfg, s.matcher, s.forest
        t0 = forest.table[k]
        if t0 is None:
            return None
        lexical = matcher.lexical(span)
        if matcher.header_match(lexical, graph.shards(t0)) >= cfg.min_attr_score:
            return None
        held_clusters = forest.taken()
        linked = sorted((-score, t) for u in graph.shards(t0) for t, op, score in graph.neighbours(u, cfg.min_bridge)
                        if op == "join" and int(graph.shard_of[t]) not in held_clusters)
        for _, t in linked:
            if matcher.header_match(lexical, [t]) >= cfg.neighbour_col:
                return t
        return None

    def _sole_holder(self, s: Assembly, span: Span) -> int | None:
        """The one table (shards counted as one) whose header spells an attribute's words
        (match ≥ ``sole_match``) where no other table's header matches as well: "the number of
        scientists involved for each project" — no chosen table has a scientist, the
        assignment table's ``Scientist`` alone spells it, so that table is part of the
        answer even though no join path the lake found reaches it closely (which
        :meth:`_neighbour_holding` asks). Of the 62 trees this makes on all 1,701 questions, 36
        are a reference entity (a scratch tally); a past form ('registered', 5 wrong trees)
        is the question's verb, however a header spells it, and makes none."""
        best = max((sc for _, sc in span.columns), default=0.0)
        if best < s.cfg.sole_match:
            return None
        tables = [int(s.index.col_table[c]) for c, sc in span.columns if sc >= best - 1e-9]
        return tables[0] if len({int(s.index.graph.shard_of[t]) for t in tables}) == 1 else None


class PlaceValues(Rule):
    """Each value on the attribute whose column holds it, else a year column of the
    question's tables, else the nearest attribute, else a tree of the table holding it
    (package docstring, step 1)."""

    name = "values"

    def apply(self, s: Assembly) -> None:
        idx, forest, attr_spans, attr_of, attr_own = s.index, s.forest, s.attr_spans, s.attr_of, s.attr_own

        def nearest_attr(v: Span) -> Attribute | None:
            near = [m for m in attr_spans if id(m) in attr_of]
            if not near:
                return None
            return attr_of[id(min(near, key=lambda m: (abs(m.start - v.start), m.start > v.start)))]

        for v in s.values:
            op = compare(s.lower, v.start)
            target = None
            if v.columns:
                held = {c for c, _ in v.columns}
                for m in attr_spans:
                    # the attribute's columns as ranked for its tree: 'club with name AIB' — the
                    # club table's own name holds AIB, though not among the lake's first 'name's.
                    # Only a column of the tree's table (or a shard of it) will do: in 'the first
                    # and last name of the students advised by … Goodrich' the name that holds
                    # Goodrich is the faculty table's, a table of its own, not the students'
                    if id(m) in attr_of and attr_own[id(m)] & held:
                        target = attr_of[id(m)]
                        break
                target = target or self._year_attr(s, v)
                if target is None:
                    span = Span(v.start, v.end, v.text, columns=v.columns)
                    k, _ = forest.home(span)
                    if v.qualifies and k is None:
                        k = next((j for j in range(len(forest)) if forest.start[j] == v.end), k)
                    if k is None and forest.trees and (len({int(idx.col_table[c]) for c in held}) > 2 or not v.named):
                        # a common value, or a bare number ('more than 100') or lower-case word
                        # ('gas', 'belong') that some cell happens to hold: no reason to bring in
                        # a table for it, nor to make another table's column that holds it an
                        # attribute — it constrains the nearest attribute the question names
                        # (figures in the package docstring, step 1)
                        target = nearest_attr(v)
                        k = None if target else forest.nearest_tree(span)
                    if target is None:
                        if k is None:
                            k = forest.implied_tree(int(idx.col_table[v.columns[0][0]]), v.text, "value held by an unnamed table")
                            forest.pin_at[k] = v.start
                        cols = _ranked_cols(s, k, span)
                        target = forest.add_attr(k, idx.columns["words"][cols[0][0]], cols, v.text, extra={"from_value": True})
            else:
                target = self._year_attr(s, v) or nearest_attr(v)
            if target is None:
                if not forest.trees:
                    forest.add_tree(IntentTree("t1", "record", [], {"implied": "a value without any entity"}), None, [], 0)
                target = forest.add_attr(len(forest) - 1, "value", [], v.text)
            target.values.append(v.text)
            if op:
                target.evidence.setdefault("compare", {})[v.text] = op

    def _year_attr(self, s: Assembly, v: Span) -> Attribute | None:
        """'races held in 2009', 'made after 2000': a bare year constrains a year column of the
        question's tables — the nearest tree's first table, then the others', then their next
        candidates — not the release date or zip code of some table that holds '2009'."""
        forest = s.forest
        if v.named or not YEAR.fullmatch(v.text) or not forest.trees:
            return None
        idx, graph, lex = s.index, s.index.graph, s.lex
        k0 = forest.nearest_tree(v)
        order = [k0] + sorted((k for k in range(len(forest)) if k != k0), key=lambda k: abs(forest.start[k] - v.start))
        for depth in (1, 3):
            for k in order:
                cols = [c for u in forest.tables[k][:depth] for x in graph.shards(u) for c in idx.table_columns[x]
                        if "year" in lex.col_tokens[int(c)]]
                if cols:
                    c = int(min(cols, key=lambda c: (lex.col_tokens[int(c)] != ("year",), int(c))))
                    have = attribute_on(forest.trees[k], idx.columns["path"][c], idx.columns["name"][c])
                    return have or forest.add_attr(k, idx.columns["words"][c], [(c, 1.0)], v.text, extra={"from_value": True})
        return None


def _ranked_cols(s: Assembly, k: int | None, span: Span) -> list[tuple[int, float]]:
    """The span's columns in the order tree ``k`` reads them: its tables' columns first
    ('name' of this entity, not any 'name'), the header that spells the words before one
    that only reads like them."""
    if k is None:
        return span.columns
    idx, graph, matcher, cfg, forest = s.index, s.index.graph, s.matcher, s.cfg, s.forest
    tables = forest.tables[k]
    cols = span.columns
    lexical = matcher.lexical(span) if span.kind == "mention" else {}
    if span.kind == "mention" and tables:
        # the entities' candidates were read into the attribute words already; an implied
        # tree's table, and the span the value rule builds, were not
        cols = matcher.with_own(span, graph.shards(tables[0]))
    # a word every schema has ('name', 'id') means the tree's own column, not a near table's
    generic = span.kind == "mention" and matcher.specificity(span) < cfg.generic_spec
    far = cfg.far_generic if generic else cfg.far_order
    near = cfg.alternative_order if generic else cfg.near_order

    # header cosine saturates ('concert name' ~ Concert_ID at 1.0, as Concert_Name): in the
    # order, the header that spells the words beats one that only reads like them
    # (`python -m bench.intent_bench --limit 400`: attribute F1 0.456 → 0.460; as a tie-break only, 0.4575)
    def order(c: int, v: float) -> float:
        return max(lexical.get(c, 0.0), cfg.semantic_order * v) if lexical else v

    first = tables[0] if tables else -1

    def weight(c: int) -> float:
        t = int(idx.col_table[c])
        if t == first:
            return 1.0
        if forest.in_tree(k, c, True):
            # a shard the chosen table unions with: the chosen table's own 'ArtistId'
            # (0.8 for 'id') before the shard's exact 'id' (figures: package docstring, step 3)
            return cfg.alternative_order
        return max(near if forest.in_tree(k, c) else far, min(cfg.near_order, far + cfg.near_cols * forest.near[t]))

    def rank(c: int) -> int:
        # ties go to the table the tree ranks higher
        cl = graph.shard_of[int(idx.col_table[c])]
        return next((i for i, u in enumerate(tables) if graph.shard_of[u] == cl), len(tables))

    return sorted(cols, key=lambda cs: (-order(*cs) * weight(cs[0]), rank(cs[0]), cs[0]))


class MergeRepeats(Rule):
    """A column a tree reads twice is one attribute, its words, values and comparisons pooled
    (:func:`.forest.merge_repeats`; package docstring, step 3)."""

    name = "merge-repeats"

    def apply(self, s: Assembly) -> None:
        merge_repeats(s.forest.trees)


class JoinTrees(Rule):
    """The trees chained over the lake's cheapest join paths, with bridge trees
    (:func:`.joins.joins`; package docstring, step 4)."""

    name = "joins"

    def apply(self, s: Assembly) -> None:
        s.joins = joins(s.forest, s.cfg)


class DropStrays(Rule):
    """An attribute no tree's tables hold whose header only resembles its words is dropped,
    unless it carries a value or a join (:func:`.forest.drop_strays`; package docstring, step 3)."""

    name = "drop-strays"

    def apply(self, s: Assembly) -> None:
        drop_strays(s.forest.trees, s.joins, s.cfg.stray_match)


class KeyBareTrees(Rule):
    """A tree left without an attribute gets its implied key, 'id', as a join's bare end does
    (:func:`.joins.joins`); after step 4, which the package docstring gives no number of its own."""

    name = "bare-keys"

    def apply(self, s: Assembly) -> None:
        for k, t in enumerate(s.forest.trees):
            if not t.attributes:
                s.forest.add_attr(k, "id", [], "", extra={"implied": True, "role": "key"})


#: The assembly, in order: each rule reads what the ones before it left in the :class:`Assembly`.
RULES: tuple[Rule, ...] = (
    AssignRoles(), RankTables(), ChooseTables(), DemoteHeaders(), ReadCandidateHeaders(), BuildTrees(),
    PlaceAttributes(), PlaceValues(), MergeRepeats(), JoinTrees(), DropStrays(), KeyBareTrees(),
)


class Assembler:
    """``assemble(...) -> (graph, pins)`` from a question's spans: :data:`RULES` run in order
    (see the module docstring)."""

    def __init__(self, index, lex, settings: IntentConfig, matcher: Matcher, ranker: Ranker, chooser: JointChooser):
        self.index = index
        self.lex = lex
        self.settings = settings
        self.matcher = matcher
        self.ranker = ranker
        self.chooser = chooser
        self.rules = RULES

    def assemble(self, question, words, lower, mentions, values, pins) -> tuple[IntentGraph, list[tuple[int, int]]]:
        """The question's intent graph from its mentions and values (matched, :mod:`.matching`),
        with ``pins`` (table, token where its value starts or −1) fixed; returns the graph and
        the tables this pass pinned."""
        s = Assembly(self.index, self.lex, self.settings, self.matcher, self.ranker, self.chooser,
                     question, lower, mentions, values, pins)
        for rule in self.rules:
            rule.apply(s)
        forest = s.forest
        if not forest.trees:
            # nothing matched: the rules after placement leave an empty forest as it is
            return IntentGraph([IntentTree("t1", question.strip()[:60] or "record", [], {"implied": "nothing in the question matched the lake"})], []), []
        return IntentGraph(forest.trees, s.joins), sorted({(forest.table[k], at) for k, at in forest.pin_at.items()})
