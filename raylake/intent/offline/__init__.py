"""The offline intent extractor: an Appendix A intent graph from a question, without an LLM.

It reads the question against the lake's own vocabulary (:mod:`raylake.intent.lexicon`) and value index:

1. **Values** — quoted strings, dates and numbers, capitalised spans, and any 1–4-word
   span found verbatim (normalised) in the value index. A value found in the index names
   the columns that hold it, hence the attribute it constrains: one the question names whose
   columns, as ranked for its tree, hold the value ("the club with name 'AIB'": the club
   table's own name, not among the lake's first 'name' columns; attribute F1 0.474 → 0.475
   at 400 questions, 0.473 → 0.474 at all 1,701, a second 'name' attribute no longer
   made for the value) — a column of the tree's own table or a shard of it: a value held
   only by another table's column ('the names of employees who work in the store Store
   Paris': the stores' name, 'students advised by Michael Goodrich': the faculty's) goes on
   to the tree holding it, or brings that table in (all 1,701: entity F1 0.6266 → 0.6288,
   attribute 0.5501 → 0.5524, join 0.4022 → 0.4054; end to end, raylake alone at L = 10, F1
   0.5043 → 0.5044, Sufficiency 0.4268 → 0.4274, 32 questions' tables changed; any column of
   the tree's three candidate tables instead: entity 0.6288, attribute 0.5510). Only a
   value the question quotes or capitalises brings in a table that no entity names; a bare
   number ('more than 100') or lower-case word ('gas stations') that some cell happens to
   hold constrains the nearest attribute the question names, else attaches to a named
   entity (Spider, ``python -m bench.intent_bench --limit 400``: entity F1 0.540 → 0.555;
   trees implied by a value 37 → 11, 8 right either way, by a scratch tally of the
   extracted trees against the reference entities, not in ``bench/``; the nearest attribute rather than a column of
   the table holding the value: attribute F1 0.435 → 0.446, all 1,701 questions 0.441 →
   0.450, value F1 unchanged). A lower-case word that is also a header word is a value only
   right before a word naming a table that holds it ('photo products': ``Product_Name =
   'photo'``, not the photos table; :meth:`.spans.SpanReader._names_held_value`); it then
   constrains that entity's tree where no tree holds its column, and brings in no table of
   its own (as a context value it moved other entities' choices: all 1,701 questions entity
   matches −4 against −1): 400 q value F1 0.800 → 0.809, attribute 0.510 → 0.512, entity
   0.618 → 0.618; all 1,701: value 0.784 → 0.790, attribute 0.505 → 0.506, entity 0.612 →
   0.612. A two-word name that one table holds in two columns is two values
   (:meth:`.spans.SpanReader._split_name`): all 1,701 value F1 0.790 → 0.802, attribute
   0.522 → 0.525, entity 0.613 → 0.614, join 0.386 → 0.389; 400 q value 0.810 → 0.820.
   A lower-case cue ('after', 'before', 'can') is no value, whatever some cell holds (all
   1,701: value 0.802 → 0.816, no value match lost; the word after a verb cue too, 'teachers
   that teach': 0.824, but 7 value and 2 entity matches lost). A number word after an ordered
   comparison is the number ('more than one', 'at least twice': ``> 1``, ``>= 2``): all
   1,701 value 0.816 → 0.842, entity 0.6141 → 0.6137, join 0.389 → 0.389; 400 q value
   0.835 → 0.858, entity 0.6185 → 0.6169 (5 questions' entities changed, 2 up, 3 down, by a
   scratch comparison of the per-question matches, not in ``bench/``). Nor is a lower-case
   word a verb or a plural noun reads ('who teach', 'the number of trips';
   :meth:`.spans.SpanReader._verb_or_plural`): all 1,701 value 0.842 → 0.870 (with 'movies'
   lemmatised as movie), no value match lost; 400 q 0.858 → 0.885. A bare year ('races held
   in 2009', 'made after 2000') that no attribute the question names holds constrains a year
   column (a header with the word 'year') of the question's tables — the nearest tree's first
   table, then the others', then their next candidates — not the ``Famous_Release_date`` or
   ``zip_code`` of some table holding '2009': all 1,701 attribute F1 0.5426 → 0.5448; 400 q
   0.552 → 0.558.
2. **Mentions** — the remaining content words, segmented greedily into the longest spans
   that occur together in some header; each span is matched to columns lexically (IDF
   overlap with lemmatised header tokens) and semantically (cosine with the header
   embeddings through FAISS).
3. **Entities and attributes** — a mention whose head word names tables in this lake
   (prefix of several headers or of a key, ``Festival_ID`` / ``Festival_Name``) and is
   not itself a column, or that follows "each", "of", "which", "how many", is an entity —
   so is what an attribute is 'of' ('the names of reviewers', 'the position of physicians'),
   though no header names it (the lake's keys are ``rID``, ``EmployeeID``): its table is found
   by its text and headers (all 1,701: attribute F1 0.5448 → 0.5508, entity 0.6273 → 0.6269
   with 4 more matched and 17 more trees, join 0.4045 → 0.4019; 29 questions' entities up, 23
   down by a scratch comparison; 400 q attribute 0.558 → 0.564, entity 0.641 → 0.634) —
   unless another mention follows right after it, which it then only modifies ('the date of
   the tallest perpetrator' had made 'tallest' a tree: all 1,701 entity 0.6269 → 0.6266,
   attribute 0.5511 → 0.5501, join 0.4019 → 0.4022, and end to end, raylake alone at L = 10
   — ``python -m bench.retrieval ... --budgets 10 --methods raylake`` — F1 0.503 → 0.504,
   Sufficiency 0.424 → 0.427);
   the others are attributes, attached to the entity whose candidate tables hold their
   best column — unless no chosen table has a header for the word (≥ ``min_attr_score``)
   and a table joined closely to them does (match ≥ ``neighbour_col``, match × closeness ≥
   ``neighbour_near``): that table becomes an entity of its own ("counties that have at
   least two delegates": the election table's Delegate, next to county). Otherwise the
   attribute goes to the nearest entity before it. Spider, ``python -m bench.intent_bench
   --limit 400``: entity F1 0.587 → 0.605, join 0.306 → 0.360, attribute 0.438 → 0.435
   (entity 0.605 / 0.596 at ``neighbour_col`` 0.75 / 0.85, 0.601 / 0.603 / 0.599 at
   ``neighbour_near`` 0.05 / 0.15 / 0.2); all 1,701 questions: entity 0.567 → 0.586, join
   0.300 → 0.346, attribute 0.440 → 0.441.
   A word in a verb's or an adverb's form abbreviates no table (:func:`.syntax.verbal`; of 26 wrong
   trees named by an abbreviation on 400 questions, 11 were 'participated', 'located',
   'actually' …, against none of 37 right ones, a scratch tally): 400 q entity F1 0.610 →
   0.612, join 0.374 → 0.380, attribute 0.499 unchanged; all 1,701: entity 0.593 → 0.595,
   join 0.363 → 0.367, attribute 0.497 → 0.495. Nor does a comparative before 'than'
   ('higher than 300' abbreviated a happy-hour table's ``HH_ID``), and the generic ones of
   :data:`.vocab.COMPARE` ('higher', 'larger', ...) are no mention at all — the compared attribute is
   the word before them — while 'older than' stays one (the age): 400 q entity F1 0.608 →
   0.609, attribute 0.499 → 0.501, join 0.374 → 0.376; all 1,701: entity 0.597 → 0.598,
   attribute 0.498 → 0.500, join 0.372 → 0.374.
   Words the lake spells together in one header are one mention ('total score'), except an
   entity word and a header of its own tables that none of them spells together ('artist
   names': the artist's ``Name``, not another table's ``artist_name``;
   :meth:`.spans.SpanReader._possessive_pair`): 400 q attribute F1 0.501 → 0.505, entity
   0.609 → 0.609, join 0.376 → 0.377; all 1,701: attribute 0.500 → 0.501, entity 0.598 →
   0.599, join 0.374 → 0.376. Words that name tables are an entity, not a column, unless a
   header spells them (lexical match ≥ 0.95; the embedding's likeness is not enough:
   'roller coaster' reads like ``Roller_Coaster_ID``, 'media type' like ``MediaTypeId``):
   400 q entity 0.616 → 0.618, attribute 0.510 → 0.510, join 0.380 → 0.381; all 1,701:
   entity 0.607 → 0.612, attribute 0.504 → 0.505, join 0.380 → 0.386.
   An entity's candidate tables are those its words name (abbreviations included), whose
   headers or text match it, and those holding a precise attribute or value of the question
   (the phone table of "the phone whose hardware model name is …" never says "phone").
   They are ranked with the question's other mentions as context *through the lake graph*
   (a mention counts for a table when a table close to it by join-path cost explains it)
   and with the whole question's cosine with each table's text (a database's own
   vocabulary, :meth:`.ranking.Ranker.rank_tables`), then chosen jointly: the set with
   the best scores, the cheapest join tree between them, the most mentions explained and
   no table taken twice (:meth:`.joint.JointChooser.choose`). An entity word that is a header
   of another chosen table (lexical match ≥ ``header_of_other``) is that table's attribute
   instead ("representatives in descending order of votes": the election table has Votes,
   and the lake's own votes table is not meant): entity F1 0.605 → 0.606, attribute 0.446 →
   0.456 (400 q; 0.603 / 0.606 / 0.605 entity at 0.85 / 0.95 / off); all 1,701: entity
   0.586 → 0.587, attribute 0.450 → 0.456. Once the tables are chosen, the headers of each
   entity's table candidates (the chosen table and the next two its tree lists, with their
   shards) count for every attribute word, not only the lake's best ``4·top_k`` matches kept
   for it: "the addresses of the buildings" — the chosen building table's
   ``building_address`` is not among the lake's first 32 'address' columns, and a joined
   table with an exact ``Address`` was brought in instead (the chosen tables' headers alone:
   400 q entity 0.603 → 0.605, attribute 0.479 → 0.491, join 0.364 → 0.367; all 1,701:
   entity 0.587 → 0.588, attribute 0.477 → 0.486, join 0.353 → 0.355; the next candidates:
   below). Attribute columns of the chosen tables, then of tables near them, come first, the
   header that spells the words before one whose cosine only reads like them. A header of a
   table the tree might be instead of its chosen one counts ``IntentConfig.alternative_order`` (0.75) of
   the chosen table's: a shard the chosen table unions with and, for a word every schema has,
   the tree's next candidates (at 0.5 before, as any far table). That is below the 0.8 a key
   header gets for its last word — the words are asked of the chosen table, so 'the name and
   id of artists' lists its ``ArtistId``
   before a sibling shard's exact ``id`` (shards: 400 q attribute 0.475 → 0.479; 0.471 /
   0.475 / 0.475 at 0.6 / 0.9 / 1.0; all 1,701: 0.474 → 0.477). With the next candidates'
   headers read and ordered so (ties in the tree's order of its tables), an attribute lists
   its column in each table its tree may be, the hedge the tree's own three tables make: 400
   q attribute 0.491 → 0.499 (0.493 with the headers read, generic words' candidates left at
   0.5; 0.499 / 0.501 at 0.7 / 0.85, where a candidate's exact ``Name`` would outrank the
   chosen table's ``customer_name``; 0.500 with ties by column id); all 1,701: attribute
   0.486 → 0.496, entity and join unchanged (0.588, 0.356). The gain is mostly in the
   alternatives: with ``--k 1`` attribute F1 is 0.403 → 0.405. A value constrains an
   attribute only through a column that matches the attribute's words (≥
   ``min_attr_score``): with the candidates' headers in the list, 'points' ranked the club
   table's ``name`` (cosine 0.2) among its first 8 and took 'Harlequins'.
   A word every schema has ('name', 'id') means the chosen table's own column — or, where
   that table has none, the column of the table its strongest key link (≥ ``min_bridge``)
   reaches that has one ("the names of entrepreneurs": the people table the entrepreneur
   table's People_ID joins): 400 q entity 0.606 → 0.603, attribute 0.460 → 0.474, join
   0.361 → 0.364 (0.605 / 0.461 / 0.362 when only a table that alone among the linked ones
   has the header counts); all 1,701 questions: entity 0.588 → 0.587, attribute 0.457 →
   0.473, join 0.346 → 0.353. Of 299 such trees on all 1,701 questions only 82 are a
   reference entity (a scratch tally against the reference graphs, not in ``bench/``;
   where the named entity's chosen table lacks the word, that table is often the wrong
   one), and without them the graphs score better (entity 0.6269 → 0.6315, attribute
   0.5511 → 0.5515 with the joined table's column heading the attribute's list) — but
   search needs the tree: end to end (``python -m bench.retrieval ... --budgets 10
   --methods raylake``, all 1,701), Sufficiency fell 0.424 → 0.404 (F1 0.503 → 0.505).
   Kept as a tree. Last, an attribute whose column no tree's tables hold and whose header
   only resembles its words (< ``stray_match``) is dropped, unless it carries a value or a join (:func:`.forest.drop_strays`): 400 q
   attribute 0.524 → 0.533, all 1,701: 0.514 → 0.522 (0.5218 / 0.5222 at 0.85 / 0.95);
   entity, value and join unchanged. An attribute no tree holds whose words only one table
   spells (a match ≥ 0.99 that no other table's header ties) brings that table in as a tree
   of its own (:meth:`.assemble.PlaceAttributes._sole_holder`): all 1,701 entity 0.6131 → 0.6175,
   attribute 0.5277 → 0.5280, join 0.3884 → 0.3870; 400 q entity 0.617 → 0.621, join
   0.381 → 0.379. An implied tree lists its own table first, then the shards it unions with
   (:func:`.forest.shards_first`; it was the shard cluster's lowest id, and search
   anchors a tree on its first table): all 1,701 entity 0.6175 → 0.6191.
   **Second pass.** A table the lake alone picks — the one holding a value the question
   quotes that no tree holds, or the one table whose header spells an attribute — says which
   database the question is about, but it is found only after the named entities' tables
   were chosen. Where the first pass made such a tree, the
   extraction runs again with those tables *pinned*: each counts as another entity's sure
   table in every entity's ranking (the context term) and in the joint choice's spanning
   tree, which the pinned tables join at no choice of their own. A pinned table is no
   candidate of a named entity (it answers another need; the entity is sought beside it),
   unless the value follows the entity's words ('the course INTRODUCTION TO COMPUTER
   SCIENCE', 'the club named …'). All 1,701: entity 0.6191 → 0.6209, attribute 0.5279 →
   0.5294, join 0.3870 → 0.3893; with ``--k 1`` entity 0.526 → 0.534, join 0.317 → 0.327
   (the first choice gains most). Variants: the pinned table left among the candidates
   (entity 0.6231, but by 100 fewer trees and 16 fewer matches: an entity took the pinned
   table and the question's other table was lost), the same with ``distinct`` charged for
   it (0.6230, 9 fewer matches), the pinned table never a candidate (0.6208, attribute 0.5287).
   **Runners-up and the neighbourhood.** A tree's second and third tables are the
   runners-up of the joint choice by max-marginal (:meth:`.joint.JointChooser.choose`): the
   next coherent reading of the whole question, in another database, rather than the next
   same-named table on the mention's own score — all 1,701 entity 0.6209 → 0.6225, attribute
   0.5294 → 0.5317, join 0.3893 → 0.3990 (runners-up outside the chosen shard cluster only:
   entity 0.6210). A table's ranking also reads the question against the tables around it
   (``neighbour_prior``, :meth:`.ranking.Ranker.neighbourhood_cos`): entity 0.6225 →
   0.6273, attribute 0.5324 → 0.5353, join 0.3990 → 0.4045 (ν 1.6: 0.6274; the variants in
   that method's docstring and docs/intent_history.md). An entity whose chosen table is another entity's,
   through a header of it ('singers of each country': the singer's ``Country``), is that
   table's attribute, not a tree merged into the other one and its attribute lost: attribute
   0.5317 → 0.5324. A column a tree reads twice is one attribute ('the average gpa … the
   highest average gpa', 'grape … grapes'; :func:`.forest.merge_repeats`), its words, values and
   comparisons pooled, unless the two aggregate differently: all 1,701 attribute F1 0.5353
   → 0.5426 (178 repeats; the reference reads the column twice in 12 of them), value
   0.8699 → 0.8718; 400 q attribute 0.543 → 0.552, value 0.885 → 0.890.
   **Generic words say which of the same-named tables.** A word every schema has ('name',
   'date'; specificity < 0.3) belongs by the question's syntax to an entity ('the X of the
   Y' → Y, else the nearest entity before it; :func:`.syntax.owner`), and among the tables that
   entity's word names, each gets ``generic_holds`` · holds(t) (:meth:`.ranking.Ranker.holds`) before the
   joint choice: 'the names of all stores in Khanewal District' means the store table with a
   ``Store_Name``, not the store_district table that only keys on stores (which had left
   'names' a tree of its own). All 1,701: entity 0.6288 → 0.6353,
   attribute 0.5524 → 0.5548, join 0.4054 → 0.4180, value 0.8718 → 0.8718 (η 0.15 / 0.2 /
   0.3: 0.635 / 0.634 / 0.632 entity, 0.554 / 0.554 / 0.551 attribute); 400 q entity 0.635 →
   0.637, join 0.396 → 0.410; ``--k 1`` entity 0.538 → 0.541, attribute 0.449 → 0.453. End
   to end (``python -m bench.retrieval ... --budgets 10 --methods raylake``, all 1,701)
   recall 0.614 → 0.620, precision 0.486 → 0.489, F1 0.504 → 0.509, Sufficiency 0.427 →
   0.433. Variants: 'generic' up to specificity 0.45 / 0.6, entity 0.635 / 0.636, join 0.418
   / 0.420; every attribute word so read, specific ones too, at η 0.3: entity 0.637,
   attribute 0.547 (the specific words alone: 0.629 / 0.547 — their columns already draw
   their tables in as context); every word, over any candidate and not only the named ones
   (400 q, η 0.3 / 0.8): entity 0.630 / 0.618, with spelled headers only 0.636 / 0.626 at
   0.15 / 0.4; every word credited to the chosen set as a whole, with no owner (400 q): 0.633
   / 0.634 / 0.632 at 0.15 / 0.3 / 0.6.

   Measured on 400 Spider tuning questions (``python -m bench.intent_bench --limit 400``),
   entity F1 0.444 → 0.540 and attribute F1 0.340 → 0.418 with these pieces; ``held_floor``,
   ``distinct`` and ``question_prior`` are the best of the values tried there (re-swept at
   entity F1 0.605 with every rule above: ``held_floor`` 0.6 / 0.8 → 0.599 / 0.602,
   ``distinct`` 0.1 / 0.3 → 0.597 / 0.598, ``coherence`` 0.4 / 0.6 → 0.604 / 0.605;
   ``question_prior`` 0.3 → 0.598, and 0.5 gave 0.606 — one or two entities in 910, not adopted).
4. **Joins** — entities are chained in question order (a question relates what it names);
   when the lake shows two named entities connect only through a table nobody named, a
   bridge tree for that table is inserted between them (Appendix A, rule 3) — if that table
   maps one key to another through strong links (:func:`.joins.bridge_ok`).

Aggregations (count, average, ...) and comparisons (more than, before, ...) are recognised
and kept as evidence on the attribute they apply to. Every tree, attribute and join
records the words it came from and the lake objects that support it. Deterministic.

The package (GRAFT, Sec. 3.1: an intent graph is a forest of entity trees — attributes,
value leaves — joined by cross-tree edges; Appendix A gives the LLM prompt this replaces;
docs/intent.md the overview):

- :mod:`.vocab` — word lists and patterns (cues, stopwords, quoted strings, numbers);
- :class:`raylake.config.IntentConfig` (``RaylakeContext.intent``) — the tuned weights every part reads;
- :mod:`.span` — :class:`~.span.Span`, a value or mention and what the lake says of it;
- :mod:`.syntax` — verb forms, cues, roles, whose word is whose (step 3's syntax);
- :mod:`.spans` — values and mentions read from the question (steps 1 and 2);
- :mod:`.matching` — a span's columns, tables and specificity (step 2);
- :mod:`.ranking` — an entity's candidate tables and their ranking (step 3);
- :mod:`.joint` — one table per entity chosen jointly, runners-up by max-marginal (step 3);
- :mod:`.forest` — the trees being built with their tables; merging and dropping attributes;
- :mod:`.assemble` — roles, trees, attributes and values in their place (steps 3 and 4),
  as named rules run in order (:data:`.assemble.RULES`);
- :mod:`.joins` — cross-tree joins and bridge trees (step 4);
- :mod:`.extractor` — :class:`OfflineExtractor`, the parts composed, and the second pass.
"""
from __future__ import annotations

from raylake.intent.offline.extractor import OfflineExtractor
from raylake.intent.offline.joins import bridge_ok
from raylake.config import IntentConfig
from raylake.intent.offline.span import Span
from raylake.intent.offline.vocab import AGGREGATE, COMPARE, STOP

__all__ = ["AGGREGATE", "COMPARE", "STOP", "OfflineExtractor", "Span", "bridge_ok"]
