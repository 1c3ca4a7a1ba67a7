"""Grounding an intent graph in the lake: the tables and columns an LLM's graph means.

An LLM writes the Appendix A graph in its own words ('Physician', 'certificate') and knows
nothing of the lake; search anchors a tree on the table its evidence names first
(:mod:`raylake.search.support`), and the intent benchmark matches atoms through the tables
and columns their evidence records. :func:`ground` fills that evidence with the offline
extractor's own machinery (:mod:`.offline`), so both extractors are read the same way:

- each tree's entity is ranked against the lake's tables on its own words (naming, header
  and table-text matches, :meth:`~raylake.intent.offline.ranking.Ranker.base_tables`), with the graph's
  attributes and values as context and the question's cosine with each table
  (:meth:`~raylake.intent.offline.ranking.Ranker.rank_tables`), plus η · how well each table holds the tree's own
  attributes (:meth:`~raylake.intent.offline.ranking.Ranker.holds`; below), and the trees' tables are chosen *jointly*
  (:meth:`~raylake.intent.offline.joint.JointChooser.choose`: the cheapest join tree between them, no table taken
  twice) — the LLM's structure, the lake's coherence;
- each attribute's columns are ranked with the tree's chosen table (and its shards) first:
  an attribute with values prefers a column of that table holding them, then one it has
  for the words, then the lake's best match elsewhere;
- the graph itself — trees, attributes, values, joins — is the LLM's, unchanged.

The LLM's words carry no positions in the question, so nothing here reads the question's
syntax: the offline extractor's role rules (which word is an entity, which one only modifies
it) are the LLM's job. Evidence: a tree gets ``words`` (its entity), ranked ``tables`` and
``table_scores``, ``why`` for the first; an attribute ``words`` and ranked ``columns``, and
``role: "key"`` when the graph only joins on it (a join attribute without values: the
Appendix A examples write their join keys, ``club_id``, as attributes; the offline
extractor's are implied keys, and the intent benchmark scores neither as an attribute).

**The tree's own attributes.** The graph says whose each attribute is ('department' has a
creation year, 'head' a born state), which tells apart the lake's many same-named tables: of
its 'department's, the one with a ``Creation`` column. A tree's 30 best-ranked tables get
η · holds(t) over its attributes with values, those not only joined on, and join keys named
after something ('club_id'; a bare 'id' is in every table). Spider, the gold SQL's own
structure and words grounded (``python -m bench.intent_bench --extractor gold-words``), all
1,701 questions: entity / attribute / join F1 0.712 / 0.654 / 0.516 without it, 0.752 /
0.731 / 0.554 at η = 0.6, 0.757 / 0.735 / 0.560 at η = 1.0; 400 questions (``--limit 400``)
0.712 / 0.669 at η = 0, 0.746 / 0.726 at 0.3, 0.759 / 0.739 at 0.6, 0.763 / 0.740 at 1.0,
0.765 / 0.747 at 1.5. η = 0.6: an LLM paraphrases the headers the gold SQL spells, and a
larger weight trusts a cosine of paraphrased words over the entity's own name more. Each
attribute weighted by its specificity, as the offline context term weighs words, scored
lower (400 questions 0.745 / 0.707 at η = 0.6): even 'name' tells a table that has one from
one that has not; the bare 'id' keys counted as well, 0.720 / 0.704.
"""
from __future__ import annotations

from raylake.intent.lexicon import tokens
from raylake.intent.model import IntentGraph
from raylake.intent.offline import OfflineExtractor, Span

_BARE_KEY = {"id", "key", "code", "no", "num", "number"}  # a key named by these says nothing of whose it is


def ground(graph: IntentGraph, question: str, extractor: OfflineExtractor) -> IntentGraph:
    """``graph`` with lake evidence on every tree and attribute (in place; also returned).

    Args:
        graph: an intent graph whose trees and attributes name things in words only (an
            LLM's); evidence already there is kept, the lake's is added to it.
        question: the question the graph answers (its cosine with each table's text is one
            term of the table ranking).
        extractor: the offline extractor over the lake's index, whose matching is reused.
    """
    ex, idx, cfg = extractor, extractor.index, extractor.settings
    if not graph.trees:
        return graph
    ents = [Span(0, 0, t.entity, role="entity") for t in graph.trees]
    attrs = [[Span(0, 0, a.name, role="attribute") for a in t.attributes] for t in graph.trees]
    ex.matcher.match(ents + [s for row in attrs for s in row])
    hits = {v: ex.values.get(v.lower().strip(), []) for t in graph.trees for a in t.attributes for v in a.values}
    values = [Span(0, 0, v, "value", named=True, columns=[(int(c), 1.0) for c in hits[v]])
              for t in graph.trees for a in t.attributes for v in a.values
              if 0 < len(hits[v]) <= cfg.top_k * 4]  # a value held everywhere says nothing of where
    context = [s for row in attrs for s in row if s.columns] + values
    held = ex.ranker.context_tables(context)
    bases = [ex.ranker.base_tables(e, held) for e in ents]
    qcos = ex.ranker.question_tables(question) if cfg.question_prior > 0 else None
    ranked = [ex.ranker.rank_tables(e, bases[k], context, [bases[j] for j in range(len(ents)) if j != k], qcos)
              for k, e in enumerate(ents)]
    # an attribute the graph only joins on is a key, as the offline extractor's implied ones
    keys = {j.from_attribute for j in graph.joins} | {j.to_attribute for j in graph.joins}
    # a key the graph names after its entity ('club_id') says which table holds it; a bare 'id' does not
    for k, tree in enumerate(graph.trees):
        own_attrs = [s for a, s in zip(tree.attributes, attrs[k])
                     if a.values or a.attribute_id not in keys or not set(tokens(a.name)) <= _BARE_KEY]
        ents[k].held_attrs = {t: cfg.ground_holds * h for t, h in ex.ranker.holds([t for t, _ in ranked[k][: cfg.holds_top]], own_attrs).items()}
        ranked[k] = sorted(((t, v + ents[k].held_attrs.get(t, 0.0)) for t, v in ranked[k]), key=lambda x: (-x[1], x[0]))
    chosen, alternatives = ex.chooser.choose(ranked, context)
    for k, tree in enumerate(graph.trees):
        head = ([chosen[k]] if k in chosen else []) + alternatives.get(k, [])[: cfg.runners_up]
        tabs = head + [t for t, _ in ranked[k] if t not in head]
        scores = dict(ranked[k])
        tree.evidence.update({"words": [tree.entity], "tables": [idx.paths[t] for t in tabs[:10]],
                              "table_scores": [round(scores.get(t, 0.0), 3) for t in tabs[:10]]})
        if tabs:
            tree.evidence["why"] = ex.ranker.why(ents[k], tabs[0], k in chosen and len(chosen) > 1)
        own = idx.graph.shards(tabs[0]) if tabs else []
        for a, span in zip(tree.attributes, attrs[k]):
            holding = {int(c) for v in a.values for c in hits[v] if int(idx.col_table[c]) in own}
            a.evidence.update({"words": a.name, "columns": [
                [idx.columns["path"][c], idx.columns["name"][c], round(float(s), 3)] for c, s in _columns(ex, span, holding, own)[:5]]})
            if a.attribute_id in keys and not a.values:
                a.evidence["role"] = "key"
    return graph


def _columns(ex: OfflineExtractor, span: Span, holding: set[int], own: list[int]) -> list[tuple[int, float]]:
    """The attribute's columns, best first: a column of the tree's table holding one of its
    values (``holding``), then the tree's table's columns its words match (≥
    ``min_attr_score``, lexically or by header cosine: the lake's best matches for 'first
    name' are some of its hundred ``Fname`` columns, not necessarily this table's), then the
    lake's matches elsewhere. ``own``: the tree's table and its shards."""
    idx = ex.index
    scores = dict(span.columns)
    if own:
        own_cols, cos = ex.matcher.header_cos(own, span.emb)
        lexical = ex.matcher.lexical(span)
        for c, v in zip(own_cols, cos):
            scores[int(c)] = max(scores.get(int(c), 0.0), float(v), lexical.get(int(c), 0.0))
    own_set = set(own)
    for c in holding:
        scores.setdefault(c, 0.0)

    def key(cs):
        c, s = cs
        return (c not in holding, not (int(idx.col_table[c]) in own_set and s >= ex.settings.min_attr_score), -s, c)

    return sorted(scores.items(), key=key)
