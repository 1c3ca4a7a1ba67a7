"""The offline intent extractor: an Appendix A intent graph from a question, without an LLM.

It reads the question against the lake's own vocabulary (:mod:`.lexicon`) and value index:

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
   'photo'``, not the photos table; :meth:`OfflineExtractor._names_held_value`); it then
   constrains that entity's tree where no tree holds its column, and brings in no table of
   its own (as a context value it moved other entities' choices: all 1,701 questions entity
   matches −4 against −1): 400 q value F1 0.800 → 0.809, attribute 0.510 → 0.512, entity
   0.618 → 0.618; all 1,701: value 0.784 → 0.790, attribute 0.505 → 0.506, entity 0.612 →
   0.612. A two-word name that one table holds in two columns is two values
   (:meth:`OfflineExtractor._split_name`): all 1,701 value F1 0.790 → 0.802, attribute
   0.522 → 0.525, entity 0.613 → 0.614, join 0.386 → 0.389; 400 q value 0.810 → 0.820.
   A lower-case cue ('after', 'before', 'can') is no value, whatever some cell holds (all
   1,701: value 0.802 → 0.816, no value match lost; the word after a verb cue too, 'teachers
   that teach': 0.824, but 7 value and 2 entity matches lost). A number word after an ordered
   comparison is the number ('more than one', 'at least twice': ``> 1``, ``>= 2``): all
   1,701 value 0.816 → 0.842, entity 0.6141 → 0.6137, join 0.389 → 0.389; 400 q value
   0.835 → 0.858, entity 0.6185 → 0.6169 (5 questions' entities changed, 2 up, 3 down, by a
   scratch comparison of the per-question matches, not in ``bench/``). Nor is a lower-case
   word a verb or a plural noun reads ('who teach', 'the number of trips';
   :meth:`OfflineExtractor._verb_or_plural`): all 1,701 value 0.842 → 0.870 (with 'movies'
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
   A word in a verb's or an adverb's form abbreviates no table (:func:`_verbal`; of 26 wrong
   trees named by an abbreviation on 400 questions, 11 were 'participated', 'located',
   'actually' …, against none of 37 right ones, a scratch tally): 400 q entity F1 0.610 →
   0.612, join 0.374 → 0.380, attribute 0.499 unchanged; all 1,701: entity 0.593 → 0.595,
   join 0.363 → 0.367, attribute 0.497 → 0.495. Nor does a comparative before 'than'
   ('higher than 300' abbreviated a happy-hour table's ``HH_ID``), and the generic ones of
   :data:`COMPARE` ('higher', 'larger', ...) are no mention at all — the compared attribute is
   the word before them — while 'older than' stays one (the age): 400 q entity F1 0.608 →
   0.609, attribute 0.499 → 0.501, join 0.374 → 0.376; all 1,701: entity 0.597 → 0.598,
   attribute 0.498 → 0.500, join 0.372 → 0.374.
   Words the lake spells together in one header are one mention ('total score'), except an
   entity word and a header of its own tables that none of them spells together ('artist
   names': the artist's ``Name``, not another table's ``artist_name``;
   :meth:`OfflineExtractor._possessive_pair`): 400 q attribute F1 0.501 → 0.505, entity
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
   vocabulary, :meth:`OfflineExtractor._rank_tables`), then chosen jointly: the set with
   the best scores, the cheapest join tree between them, the most mentions explained and
   no table taken twice (:meth:`OfflineExtractor._choose`). An entity word that is a header
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
   table the tree might be instead of its chosen one counts ``_ALTERNATIVE_ORDER`` (0.75) of
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
   only resembles its words (< ``stray_match``) is dropped, unless it carries a value or a join (:meth:`OfflineExtractor._drop_strays`): 400 q
   attribute 0.524 → 0.533, all 1,701: 0.514 → 0.522 (0.5218 / 0.5222 at 0.85 / 0.95);
   entity, value and join unchanged. An attribute no tree holds whose words only one table
   spells (a match ≥ 0.99 that no other table's header ties) brings that table in as a tree
   of its own (:meth:`OfflineExtractor._sole_holder`): all 1,701 entity 0.6131 → 0.6175,
   attribute 0.5277 → 0.5280, join 0.3884 → 0.3870; 400 q entity 0.617 → 0.621, join
   0.381 → 0.379. An implied tree lists its own table first, then the shards it unions with
   (:meth:`OfflineExtractor._shards_first`; it was the shard cluster's lowest id, and search
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
   runners-up of the joint choice by max-marginal (:meth:`OfflineExtractor._choose`): the
   next coherent reading of the whole question, in another database, rather than the next
   same-named table on the mention's own score — all 1,701 entity 0.6209 → 0.6225, attribute
   0.5294 → 0.5317, join 0.3893 → 0.3990 (runners-up outside the chosen shard cluster only:
   entity 0.6210). A table's ranking also reads the question against the tables around it
   (``neighbour_prior``, :meth:`OfflineExtractor._neighbourhood_cos`): entity 0.6225 →
   0.6273, attribute 0.5324 → 0.5353, join 0.3990 → 0.4045 (ν 1.6: 0.6274; the variants in
   that method's docstring and docs/intent_history.md). An entity whose chosen table is another entity's,
   through a header of it ('singers of each country': the singer's ``Country``), is that
   table's attribute, not a tree merged into the other one and its attribute lost: attribute
   0.5317 → 0.5324. A column a tree reads twice is one attribute ('the average gpa … the
   highest average gpa', 'grape … grapes'; :func:`_merge_repeats`), its words, values and
   comparisons pooled, unless the two aggregate differently: all 1,701 attribute F1 0.5353
   → 0.5426 (178 repeats; the reference reads the column twice in 12 of them), value
   0.8699 → 0.8718; 400 q attribute 0.543 → 0.552, value 0.885 → 0.890.
   **Generic words say which of the same-named tables.** A word every schema has ('name',
   'date'; specificity < 0.3) belongs by the question's syntax to an entity ('the X of the
   Y' → Y, else the nearest entity before it; :func:`_owner`), and among the tables that
   entity's word names, each gets ``generic_holds`` · holds(t) (:meth:`_holds`) before the
   joint choice: 'the names of all stores in Khanewal District' means the store table with a
   ``Store_Name``, not the store_district table that only keys on stores (which had left
   'names' a tree of its own). All 1,701: entity 0.6288 → 0.6353,
   attribute 0.5524 → 0.5548, join 0.4054 → 0.4180, value 0.8718 → 0.8718 (κ 0.15 / 0.2 /
   0.3: 0.635 / 0.634 / 0.632 entity, 0.554 / 0.554 / 0.551 attribute); 400 q entity 0.635 →
   0.637, join 0.396 → 0.410; ``--k 1`` entity 0.538 → 0.541, attribute 0.449 → 0.453. End
   to end (``python -m bench.retrieval ... --budgets 10 --methods raylake``, all 1,701)
   recall 0.614 → 0.620, precision 0.486 → 0.489, F1 0.504 → 0.509, Sufficiency 0.427 →
   0.433. Variants: 'generic' up to specificity 0.45 / 0.6, entity 0.635 / 0.636, join 0.418
   / 0.420; every attribute word so read, specific ones too, at κ 0.3: entity 0.637,
   attribute 0.547 (the specific words alone: 0.629 / 0.547 — their columns already draw
   their tables in as context); every word, over any candidate and not only the named ones
   (400 q, κ 0.3 / 0.8): entity 0.630 / 0.618, with spelled headers only 0.636 / 0.626 at
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
   maps one key to another through strong links (:func:`bridge_ok`).

Aggregations (count, average, ...) and comparisons (more than, before, ...) are recognised
and kept as evidence on the attribute they apply to. Every tree, attribute and join
records the words it came from and the lake objects that support it. Deterministic.
"""
from __future__ import annotations

import itertools
import re
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from raylake.config import RaylakeContext
from raylake.intent.lexicon import NAME_PARTS, Lexicon, lemma, tokens, top
from raylake.intent.model import Attribute, IntentGraph, IntentTree, Join

STOP = set(
    """a an the of in on at to for from by with without and or but not no nor is are was were be been being has have had
    do does did what which who whom whose where when why how show list find give return tell display get provide
    me us all any each every some that this these those their there them they its it his her as than then also
    please i we you your our my he she him whom whose if into onto per out up down about over under same other another
    there's one ones only just both either neither very more most less least many much number numbers count
    distinct different unique total average mean maximum minimum max min sum order ordered sort sorted descending ascending
    alphabetical alphabetically top bottom first last highest lowest largest smallest greatest biggest fewest least
    such whose whom whether between including included include based associated related corresponding respectively
    name names""".split()
)
# 'name' is a stopword for segmentation only; it is kept as an attribute (see _ATTR_WORDS)
_ATTR_WORDS = {"name", "names"}
_NAME_PARTS = set(NAME_PARTS.values())  # 'first name', as the lexicon splits 'fname'
AGGREGATE = {"average": "avg", "mean": "avg", "total": "sum", "sum": "sum", "maximum": "max", "max": "max", "highest": "max",
             "largest": "max", "biggest": "max", "greatest": "max", "most": "max", "oldest": "max", "minimum": "min",
             "min": "min", "lowest": "min", "smallest": "min", "least": "min", "fewest": "min", "youngest": "min",
             "count": "count", "number": "count", "many": "count"}
COMPARE = [("more than", ">"), ("greater than", ">"), ("larger than", ">"), ("higher than", ">"), ("bigger than", ">"),
           ("at least", ">="), ("at most", "<="), ("less than", "<"), ("fewer than", "<"), ("lower than", "<"),
           ("smaller than", "<"), ("above", ">"), ("over", ">"), ("below", "<"), ("under", "<"), ("before", "<"),
           ("after", ">"), ("between", "between"), ("not", "!="), ("without", "none")]
# the number words, as the SQL writes the number ('more than one' is > 1)
_NUMBER_VALUES = {w: str(n) for n, w in enumerate(["one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                                    "ten"], 1)} | {"once": "1", "twice": "2"}
_NUMBER_WORDS = set(_NUMBER_VALUES)
_DETERMINERS = {"the", "all", "each", "every", "its", "their", "a", "an"}
_ORDERED = {">", ">=", "<", "<="}
_COMPARATIVE = re.compile(r"\b([a-z]+er) than$")
# 'score higher than 300': the compared attribute is the word before; 'older than' names one
_GENERIC_COMPARATIVES = {p.split()[0] for p, _ in COMPARE if p.endswith(" than")}
_SMALLER = {"younger", "smaller", "lower", "fewer", "shorter", "cheaper", "earlier", "lighter", "narrower", "thinner",
            "poorer", "slower", "weaker", "closer", "nearer"}
_NAMING = {"named", "called", "titled"}
_COUNT_WORDS = {"num", "number", "count", "no", "total", "nb"}
# a mention this specific or less is a word every schema has ('name', 'id'): see _specificity
_GENERIC_SPEC = 0.3
# weight of a header's cosine, against its lexical match, in the order of an attribute's columns
_SEMANTIC_ORDER = 0.9
# weight of a header of a table the tree might be instead of its chosen one (a shard it unions
# with; for a word every schema has, its next candidates too), against the chosen table's own
_ALTERNATIVE_ORDER = 0.75
_ENTITY_CUES = {"each", "every", "of", "which", "many", "per", "all", "whose", "by"}

# words before which a one-word mention reads as a verb ('who built', 'can interact'), and
# irregular past forms the -ed rule misses: a question's verbs are no data needs
_VERB_CUES = {"who", "that", "which", "can", "cannot", "could", "did", "do", "does", "to", "not", "never", "have", "has",
              "had", "was", "were", "been", "will", "would", "should", "must", "may", "might", "also"}
# words before which a one-word mention is a verb for certain ('did not participate'), unlike
# 'which' / 'who', which also come before the things a question names ('which authors')
_AUXILIARY = {"did", "do", "does", "don't", "doesn't", "didn't", "not", "never", "can", "cannot", "could", "will", "would",
              "should", "must", "may", "might"}
_IRREGULAR_PAST = {"built", "made", "taught", "won", "held", "got", "wrote", "ran", "used", "bought", "sold", "led", "paid",
                   "gave", "took", "saw", "flew", "drove", "kept", "left", "met", "lost", "spent", "found", "became"}
# words before which a lower-case word a cell holds is a verb, not that value ('tracks that
# belong to'): unlike a mention ('which authors'), a value after 'which'/'who' is rare; a bare
# 'not' is no sign ('milk but not cat'), 'did not' is (see _verb_or_plural)
_VERB_BEFORE = {"who", "that", "which", "they", "he", "she", "it"} | (_AUXILIARY - {"not"})
# lower-case words that some cell holds ('before', 'can') but a question uses as a cue
_NOT_VALUES = {p for p, _ in COMPARE if " " not in p} | _AUXILIARY

# a single quote opens after no letter and closes before none: "the scientists' names, their
# projects' names" quotes nothing
_QUOTED = re.compile(r"""(?:(?<!\w)'([^']+)'(?!\w)|"([^"]+)"|“([^”]+)”)""")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?\b")
_YEAR = re.compile(r"(?:1[89]|20)\d\d")
_NUMBER = re.compile(r"(?<![\w.-])[+-]?\d+(?:\.\d+)?(?![\w-])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*|\d+(?:\.\d+)?")


@dataclass
class _Span:
    start: int  # token index
    end: int  # exclusive
    text: str
    kind: str = "mention"  # mention | value
    named: bool = False  # a value quoted or capitalised in the question (not a bare number or a lower-case word)
    columns: list[tuple[int, float]] = field(default_factory=list)
    lake_columns: list[tuple[int, float]] | None = None  # the lake-wide match alone, once the candidates' headers join columns
    entity: float = 0.0
    tables: list[int] = field(default_factory=list)
    head: str = ""
    role: str = ""  # entity | attribute, once decided
    table_cos: np.ndarray | None = None
    spec: float | None = None  # specificity, see OfflineExtractor._specificity
    best: dict | None = None  # table -> best column score, see OfflineExtractor._table_best
    lexical: dict | None = None  # column -> lexical header match of the words, see OfflineExtractor._lexical
    emb: np.ndarray | None = None  # (d,) the words' embedding, set by OfflineExtractor._match
    why: dict = field(default_factory=dict)  # table -> (source, detail) of its own score (entities), see _why
    parts: dict = field(default_factory=dict)  # table -> (own, context, question, neighbourhood) score terms (entities)
    verbal: bool = False  # one word read as a verb or adverb: no abbreviation names a table by it
    qualifies: bool = False  # a lower-case value before the word naming the tables that hold it ('photo products')
    held_attrs: dict | None = None  # table -> κ · holds term of its ranking (entities), see OfflineExtractor._holds


class OfflineExtractor:
    """``OfflineExtractor(index).extract(question) -> IntentGraph`` (see module docstring)."""

    def __init__(self, index, lexicon: Lexicon | None = None, top_k: int = 8, min_attr_score: float = 0.55,
                 max_bridge_hops: int = 1, min_join: float | None = None, coherence: float = 0.5, joint_context: float = 0.1,
                 joint_width: int = 6, max_joint: int = 3000, max_cost: float = 1.5,
                 near_context: float = 0.15, max_context: float = 0.45, near_scale: float = 0.15,
                 near_cols: float = 0.4, near_cache: int = 4096, held_floor: float = 0.7,
                 distinct: float = 0.2, question_prior: float = 0.4, min_bridge: float = 0.84,
                 joint_near: int = 3, joint_near_min: float = 0.15, neighbour_col: float = 0.8,
                 neighbour_near: float = 0.1, header_of_other: float = 0.9, stray_match: float = 0.9,
                 sole_match: float = 0.99, runners_up: int = 2, neighbour_prior: float = 0.8,
                 neighbour_top: int = 32, generic_holds: float = 0.1, holds_top: int = 30):
        self.index = index
        self.lex = lexicon or Lexicon(index)
        self.top_k = top_k  # candidate columns kept per mention (× 4)
        self.min_attr_score = min_attr_score  # an attribute mention needs a header at least this similar
        self.max_bridge_hops = max_bridge_hops  # unnamed tables allowed between two named entities
        self.min_join = RaylakeContext.get_current().search.min_join if min_join is None else min_join  # weakest lake join link a join may use
        self.min_bridge = min_bridge  # weakest link into or out of a bridge table (see bridge_ok)
        self.coherence = coherence  # λ: weight of the chosen tables' join-path cost (their MST) in the joint choice
        self.joint_context = joint_context  # μ: credit per attribute/value mention the chosen tables explain
        self.joint_width = joint_width  # candidate tables per entity in the joint choice
        self.joint_near = joint_near  # ... plus this many ranked lower but close to another entity's top 2 tables
        self.joint_near_min = joint_near_min  # closeness such a table needs (exp(−cost/τ): one link of score ≈ 0.75)
        self.neighbour_col = neighbour_col  # header match an attribute word needs to bring in the table holding it ...
        self.neighbour_near = neighbour_near  # ... with match × closeness to a chosen table at least this
        self.header_of_other = header_of_other  # an entity word this close to a header of another chosen table is its attribute
        self.stray_match = stray_match  # an attribute outside every tree's tables needs a header this close (see _drop_strays)
        self.sole_match = sole_match  # a header this close, in one table only, brings that table in (see _sole_holder)
        self.max_joint = max_joint  # most table sets tried (the width shrinks with many entities)
        self.runners_up = runners_up  # a tree's tables after the chosen one taken from the joint choice's max-marginals
        self.max_cost = max_cost  # path cost of two tables the lake does not connect within 2 links
        self.near_context = near_context  # μ of the neighbourhood context in an entity's table ranking
        self.max_context = max_context  # cap of that context bonus (a table's own name counts most)
        self.near_scale = near_scale  # τ: closeness = exp(−cost/τ); gold table pairs cost ~0.15, random ones ~0.5
        self.near_cols = near_cols  # weight of closeness to the chosen tables when ranking an attribute's columns
        self.near_cache = near_cache  # closeness rows kept (LRU): one float32 per lake table each
        self.question_prior = question_prior  # ρ: weight of the whole question's cosine with a table's text
        self.neighbour_prior = neighbour_prior  # ν: ... and with its join neighbours' texts (closeness-weighted mean)
        self.neighbour_top = neighbour_top  # candidates per entity that get that term (best on the others; bounds Dijkstras)
        self.distinct = distinct  # cost of resolving two entity mentions to one table (a question names two things)
        self.held_floor = held_floor  # own score of a table that holds a precise attribute/value but is not named
        self.generic_holds = generic_holds  # κ: of the tables an entity word names, the one holding its generic words ('name') (see _holds)
        self.holds_top = holds_top  # an entity's (or a grounded tree's) best-ranked tables read for that
        self._costs = None  # sparse join-cost matrix of the lake graph, built on first use
        self._near_cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self.values = index.values

    # ------------------------------------------------------------------ public

    def __call__(self, question: str) -> IntentGraph:
        return self.extract(question)

    def extract(self, question: str) -> IntentGraph:
        """The question's intent graph; a second pass where the first pinned tables (module docstring, step 3)."""
        graph, pins = self._extract(question, ())
        if pins:
            graph, _ = self._extract(question, pins)
        return graph

    def ground(self, graph: IntentGraph, question: str) -> IntentGraph:
        """Lake evidence for a graph written elsewhere (an LLM's): :func:`raylake.intent.ground.ground`."""
        from raylake.intent.ground import ground

        return ground(graph, question, self)

    def _extract(self, question: str, pins) -> tuple[IntentGraph, list[tuple[int, int]]]:
        """One pass with ``pins`` (table, token where its value starts or −1) fixed; returns the
        graph and the tables this pass pinned."""
        words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(question)]
        lower = [w.lower() for w, _, _ in words]
        used = [False] * len(words)
        values = self._values(question, words, lower, used)
        mentions = self._mentions(words, lower, used)
        self._match(mentions)
        return self._assemble(question, words, lower, mentions, values, pins)

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
                out.append(_Span(span[0], span[1], text, "value", named=True))
        for rx in (_DATE, _NUMBER):
            for m in rx.finditer(question):
                span = cover(m.start(), m.end())
                if span and not any(v.start <= span[0] < v.end for v in out):
                    out.append(_Span(span[0], span[1], m.group(0), "value"))
        # 'more than one record', 'at least two courses': a counted number, as the SQL writes it
        for i, w in enumerate(lower):
            if w in _NUMBER_VALUES and not any(v.start <= i < v.end for v in out) and self._compare(lower, i) in _ORDERED:
                out.append(_Span(i, i + 1, _NUMBER_VALUES[w], "value"))
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
                qualifies = False
                if not capital and all(lemma(w) in self.lex.vocab or w in STOP for w in span_words):
                    # header words ('ship', 'status') that also occur as values somewhere
                    qualifies = size == 1 and self._names_held_value(i, lower, hits)
                    if not qualifies:
                        continue
                if text in _NUMBER_WORDS:
                    continue
                if not capital and size == 1 and (text in _NOT_VALUES or (not qualifies and self._verb_or_plural(i, lower, hits))):
                    continue  # 'after 2000', 'who teach', 'the number of trips': a cue, a verb, a plural noun
                out.append(_Span(i, i + size, " ".join(w for w, _, _ in words[i : i + size]), "value", named=capital,
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
                if raw != text and raw.lower() in self.values:
                    text = raw  # the value as written ('Computer Info. Systems'), punctuation included
                toks = tokens(text)
                # a capitalised header word ('Show the Name of ...') is not a value
                if not all(t in self.lex.vocab for t in toks) or j - i >= 2:
                    out.append(_Span(i, j, text, "value", named=True))
                    for k in range(i, j):
                        used[k] = True
                i = j
            else:
                i += 1
        for v in out:
            hits = self.values.get(v.text.lower().strip(), [])
            # a number held by hundreds of columns says nothing about which one it constrains
            if len(hits) <= (4 if _NUMBER.fullmatch(v.text) else self.top_k * 4):
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
        if _past_or_adverb(w):
            return True
        before = lower[i - 1] if i else ""
        return before in _VERB_BEFORE or (before == "not" and i > 1 and lower[i - 2] in _AUXILIARY)

    def _split_name(self, v: _Span) -> list[_Span]:
        """A two-word name no cell holds whole, whose words one table holds apart ("Aaron
        Turon": ``fname`` and ``lname`` of the authors table), is two values, each on the
        columns of the tables holding both (Spider: 11 such questions, the gold SQL of all 11
        compares both words, by a scratch tally, not in ``bench/``)."""
        words = v.text.split()
        if v.columns or not v.named or len(words) != 2 or v.end - v.start != 2:
            return [v]
        hits = [self.values.get(w.lower()) for w in words]
        if any(h is None or len(h) > self.top_k * 4 for h in hits):
            return [v]
        col_table = self.index.col_table
        both = {int(col_table[c]) for c in hits[0]} & {int(col_table[c]) for c in hits[1]}
        if not both:
            return [v]
        return [_Span(v.start + i, v.start + i + 1, w, "value", named=True,
                      columns=[(int(c), 1.0) for c in h if int(col_table[c]) in both])
                for i, (w, h) in enumerate(zip(words, hits))]

    def _names_held_value(self, i: int, lower: list[str], hits) -> bool:
        """'photo products', 'history department': a lower-case word before a word that names
        tables, held as a value by one of those tables, is that value (``Product_Name =
        'photo'``), not a table of its own (the lake's photos table) — unless it reads as a
        verb ('reported problems')."""
        w = lower[i]
        if i + 1 >= len(lower) or lower[i + 1] in STOP or _ed_or_ly(w):
            return False
        named = set(self.lex.entity_tables.get(lemma(lower[i + 1]), ()))
        return bool(named) and any(int(self.index.col_table[int(c)]) in named for c in hits)

    # ------------------------------------------------------------------ mentions

    def _mentions(self, words, lower, used) -> list[_Span]:
        spans: list[_Span] = []
        n = len(words)

        def content(k: int) -> bool:
            # 'first'/'last' order results ('the first 5'), except in 'first name'
            w = lower[k]
            if w in _GENERIC_COMPARATIVES and k + 1 < n and lower[k + 1] == "than":
                return False
            return (w not in STOP or w in _ATTR_WORDS or (w in _NAME_PARTS and k + 1 < n and lower[k + 1] in _ATTR_WORDS)) and not w.isdigit()

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
                spans.append(_Span(a, b, " ".join(w for w, _, _ in words[a:b])))
                spans[-1].verbal = _verbal(spans[-1], lower)
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

    # ------------------------------------------------------------------ lake matching

    def _match(self, spans: list[_Span]) -> None:
        """Columns (lexical ∪ header cosine) and tables (cosine with the table text) of each mention."""
        if not spans:
            return
        idx = self.index
        emb = np.ascontiguousarray(idx.embedder.encode([s.text.lower() for s in spans]), np.float32)
        sims, ids = idx.faiss("columns_header").search(emb, min(self.top_k * 4, idx.n_columns))
        tcos = _rescale(emb @ idx.emb_table.T)
        for k, (s, srow, irow) in enumerate(zip(spans, sims, ids)):
            toks = tokens(s.text)
            s.lexical = self.lex.lexical_scores(toks)
            scores = dict(s.lexical)
            for c, cos in zip(irow, srow):
                if c >= 0:
                    scores[int(c)] = max(scores.get(int(c), 0.0), float(_rescale(cos)))
            s.columns = top(scores, self.top_k * 4)
            s.emb = emb[k]
            s.table_cos = tcos[k]
            s.head = toks[-1] if toks else ""
            compound = "_".join(toks)
            s.entity = max(self.lex.entity_score(s.head) if s.head else 0.0, self.lex.entity_score(compound) if len(toks) > 1 else 0.0,
                           max((self.lex.entity_score(w) for w in self._abbreviations(s)), default=0.0))
            s.tables = list(self.lex.entity_tables.get(compound, [])) + list(self.lex.entity_tables.get(s.head, []))

    def _abbreviations(self, span: _Span) -> list[str]:
        """The lake's entity words that abbreviate the span's head (``stu`` for 'students'),
        none for a verb or an adverb: 'participated' is no ``part`` table, 'actually' no
        ``all``, 'located' no ``lot``."""
        return self.lex.abbreviations(span.head) if span.head and not span.verbal else []

    def _number_of(self, mentions: list[_Span], lower: list[str]) -> None:
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
                m.columns = [(c, 1.0) for c in sorted(set(hits))[: self.top_k]] + [cs for cs in m.columns if cs[0] not in hits]
                m.role = "attribute"

    @staticmethod
    def _table_best(span: _Span, col_table) -> dict[int, float]:
        """Table → the span's best column score there in the lake-wide match (kept on the span:
        the held tables, every entity's ranking and the joint choice all read it)."""
        if span.best is None:
            span.best = {}
            for c, s in span.columns if span.lake_columns is None else span.lake_columns:
                t = int(col_table[c])
                if s > span.best.get(t, 0.0):
                    span.best[t] = s
        return span.best

    def _lexical(self, span: _Span) -> dict[int, float]:
        """Column → lexical match of the span's words with its header (kept on the span: the
        role rules, the attribute's column order and the neighbour rules all read it)."""
        if span.lexical is None:
            span.lexical = self.lex.lexical_scores(tokens(span.text))
        return span.lexical

    def _spelled(self, span: _Span) -> float:
        """How nearly some header of the lake spells the span's words (its best lexical match):
        a header that only resembles them by the embedding ('located' ≈ Location) is not one."""
        return max(self._lexical(span).values(), default=0.0)

    def _with_own(self, span: _Span, tables) -> list[tuple[int, float]]:
        """The span's columns, plus the headers of ``tables`` (the question's candidate tables)
        its words match lexically (≥ ``min_attr_score``).

        The kept columns are the lake's best ``4·top_k`` for the words: 'name' (in 170 tables)
        or 'addresses' may miss a chosen table's own ``Name`` or ``building_address``."""
        lexical = self._lexical(span)
        have = {c for c, _ in span.columns}
        own = {int(c): lexical[int(c)] for u in tables for c in self.index.table_columns[u]
               if int(c) not in have and lexical.get(int(c), 0.0) >= self.min_attr_score}
        return span.columns + list(own.items()) if own else span.columns

    def _header_match(self, lexical: dict[int, float], tables) -> float:
        """The best lexical match among the headers of ``tables``."""
        return max((lexical.get(int(c), 0.0) for u in tables for c in self.index.table_columns[u]), default=0.0)

    def _specificity(self, span: _Span) -> float:
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
            if span.kind != "value" and len(columns) >= self.top_k * 4 and columns[-1][1] >= 0.9:
                span.spec = 0.0  # more strong matches than we keep: a word every schema has
        return span.spec

    # ------------------------------------------------------------------ roles

    def _roles(self, mentions: list[_Span], lower: list[str]) -> None:
        n = len(lower)
        starts = {m.start for m in mentions}
        ends = {m.end: m for m in mentions}
        for m in mentions:
            if m.role:
                continue
            j = m.start - 1
            while j > 0 and lower[j] in _DETERMINERS:
                j -= 1
            # 'the names of reviewers', 'the position of physicians': what an attribute is 'of' is a thing
            of_attr = j > 0 and lower[j] == "of" and j in ends and ends[j].role == "attribute"
            best = m.columns[0][1] if m.columns else 0.0
            nxt = m.end
            of_follows = nxt < n and lower[nxt] in ("of", "for") and any(s > nxt for s in starts)
            possessive = lower[m.end - 1].endswith("'s")
            is_column = self._spelled(m) >= 0.95 and (len(tokens(m.text)) >= 2 or m.entity < 0.5)
            cue = m.start > 0 and lower[m.start - 1] in _ENTITY_CUES
            if m.text.lower() in _ATTR_WORDS:
                m.role = "attribute"
            elif possessive and m.entity > 0:
                m.role = "entity"
            elif of_attr and not m.verbal and m.end not in starts:
                # though no header names it: the table text and headers find its table ('the date of
                # the tallest perpetrator': a word right before another mention modifies it, and is none)
                m.role = "entity"
            elif of_follows and best >= 0.6 and (m.entity < 0.5 or best >= 0.9):
                m.role = "attribute"  # 'the X of the Y': X describes Y (unless X names tables and no header is X)
            elif (m.entity >= 0.5 and not is_column) or (cue and m.entity > 0) or (nxt < n and lower[nxt] == "whose"):
                m.role = "entity"  # 'the phone whose …' names a thing even where no header says 'phone'
            else:
                m.role = "attribute"

    # ------------------------------------------------------------------ entities → tables

    def _why(self, e: _Span, t: int, joint: bool) -> dict:
        """The terms of the first table's score, for the evidence: own (and from what), context,
        question, neighbourhood."""
        own, ctx, q, near = e.parts.get(t, (0.0, 0.0, 0.0, 0.0))
        src = e.why.get(t, ("",))
        if src[0] == "held":
            source = "holds a precise attribute or value of the question"
        elif src[0] == "named":
            by = self.lex.referenced.get(t, {}).get(src[1])
            how = f"by the headers of {', '.join(self.index.paths[u] for u in by[:2])} referencing it" if by else "by its headers"
            source = f"named {src[1]!r} {how}" + (" (abbreviated)" if src[2] else "")
        elif src[0] == "header":
            source = f"header {self.index.columns['name'][src[1]]!r}"
        else:
            source = "table text" if src[0] == "text" else ""
        out = {"own": round(own, 3), "from": source, "context": round(ctx, 3), "question": round(q, 3),
               "neighbourhood": round(near, 3)}
        if e.held_attrs is not None:
            out["attributes"] = round(e.held_attrs.get(t, 0.0), 3)
        if joint:
            out["chosen"] = "jointly with the other entities"
        return out

    def _holds(self, tables: list[int], spans: list[_Span]) -> dict[int, float]:
        """How well each table holds a set of attribute words: the mean over ``spans`` of the
        best match among the table's and its shards' headers, header cosine (rescaled) or
        lexical match, in [0, 1]:

            holds(t) = 1/|A| · Σ_{a ∈ A} max_{c ∈ cols(t)} max(cos(a, c), lex(a, c))

        Of several tables named alike, the one that has what is asked of the entity is meant.
        Two rankings add κ · holds(t): the offline extractor's, for the generic words the
        question's syntax gives an entity, among the tables its word names
        (``generic_holds``, module docstring step 3); and the grounding of an LLM's graph,
        whose trees list their own attributes (:func:`raylake.intent.ground.ground`).

        Args:
            tables: the candidate tables to score.
            spans: attribute words, embedded by :meth:`_match`.

        Returns ``{table: holds}``; empty without words.
        """
        if not spans:
            return {}
        emb = np.stack([s.emb for s in spans]).T  # (d, |A|)
        lexical = [self._lexical(s) for s in spans]
        out = {}
        for t in tables:
            shards = self.index.graph.shards(t)
            cols, cos = self._header_cos(shards, emb)  # cos: (|cols|, |A|)
            if not len(cols):
                continue
            out[t] = sum(max(float(cos[:, i].max()), self._header_match(lex, shards), 0.0)
                         for i, lex in enumerate(lexical)) / len(spans)
        return out

    def _header_cos(self, tables, emb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The columns of ``tables`` and their headers' cosine with ``emb`` ((d,) or (d, n)),
        rescaled (:func:`_rescale`): ``(cols, cos)``, ``cos`` shaped (|cols|,) or (|cols|, n)."""
        idx = self.index
        cols = np.asarray([int(c) for u in tables for c in idx.table_columns[u]], np.int64)
        return cols, _rescale(idx.emb_header[cols] @ emb)

    def _context_tables(self, context: list[_Span], min_spec: float = 0.5, min_col: float = 0.9) -> dict[int, float]:
        """Tables holding what the question says precisely: a value it quotes, or a header an
        attribute mention matches (score ≥ ``min_col``) that few tables have (specificity ≥
        ``min_spec``) — each with ``held_floor`` × that score as a candidate for every entity."""
        out: dict[int, float] = {}
        for s in context:
            if self._specificity(s) < min_spec:
                continue
            for t, b in self._table_best(s, self.index.col_table).items():
                if b >= min_col:
                    out[t] = max(out.get(t, 0.0), self.held_floor * b)
        return out

    def _base_tables(self, e: _Span, held: dict[int, float] | None = None) -> dict[int, float]:
        """Candidate tables of an entity mention on its own words: naming (the word prefixes the
        table's key, ``Festival_ID``) ∨ 0.6 × its best column ∨ 0.9 × cosine with the table text
        ∨ the ``held`` floor of a table holding a precise attribute or value of the question
        (:meth:`_context_tables`): the phone table (``Hardware_Model_name``, …) never says
        "phone", but "the phone whose hardware model name is …" means it."""
        idx, lex = self.index, self.lex
        toks = tokens(e.text)
        cand: dict[int, float] = {}

        def put(t: int, v: float, why: tuple) -> None:
            if v > cand.get(t, 0.0):
                cand[t] = v
                e.why[t] = why  # worded by _why, for the chosen table only

        for t, v in (held or {}).items():
            put(t, v, ("held",))
        # an entity word that abbreviates the mention ('stu' for 'student') names a table as surely
        # as one that spells it: weighting it w instead, `python -m bench.intent_bench --limit 400`
        # gave entity F1 0.564 / 0.581 / 0.586 / 0.587 at w = 0.75 / 0.85 / 0.95 / 1.0 (all 1,701:
        # 0.561 at 0.85, 0.566 at 0.95, 0.568 at 1.0) — in a lake whose keys are abbreviated, it is the name
        words = [(w, False) for w in sorted({e.head, "_".join(toks)})]
        words += [(w, True) for w in self._abbreviations(e)]
        for w, abbreviated in words:
            for t in lex.entity_tables.get(w, ()):
                put(t, lex.entity_strength(t, w), ("named", w, abbreviated))
        for c, s in e.columns[:16]:
            put(int(idx.col_table[c]), 0.6 * s, ("header", c))
        if e.table_cos is not None:
            k = min(10, len(e.table_cos) - 1)
            for t in np.argpartition(-e.table_cos, k)[: k + 1]:
                put(int(t), 0.9 * float(e.table_cos[t]), ("text",))
        return {t: v for t, v in cand.items() if v > 0}

    def _near(self, t: int) -> np.ndarray:
        """closeness(t, ·) = exp(−cheapest join-path cost) over the lake graph (0 beyond
        ``max_cost``; shards of one table at 1): one C Dijkstra per table, the last
        ``near_cache`` rows kept (a long-running service meets every table of a large lake)."""
        row = self._near_cache.get(t)
        if row is not None:
            self._near_cache.move_to_end(t)
        else:
            if self._costs is None:
                self._costs = _cost_matrix(self.index.graph, self.min_join)
            # the cost matrix is symmetric, so directed=True is the undirected distance without
            # scipy re-symmetrising the whole matrix on every call
            d = dijkstra(self._costs, directed=True, indices=t, limit=self.max_cost)
            row = np.where(np.isfinite(d), np.exp(-d / self.near_scale), 0.0).astype(np.float32)
            self._near_cache[t] = row
            if len(self._near_cache) > self.near_cache:
                self._near_cache.popitem(last=False)
        return row

    def _question_tables(self, question: str) -> np.ndarray:
        """(T,) rescaled cosine of the whole question with each table's text: the question's
        words together (a database's own vocabulary) tell same-named tables apart."""
        q = np.ascontiguousarray(self.index.embedder.encode([question.lower()]), np.float32)
        return _rescale(q @ self.index.emb_table.T)[0]

    def _neighbourhood_cos(self, ts: np.ndarray, qcos: np.ndarray) -> np.ndarray:
        """(|ts|,) how much each table's join neighbourhood, outside its own shard cluster,
        reads like the question:

            Σ_u closeness(t, u) · q(u) / (1 + Σ_u closeness(t, u)),   u ∉ cluster(t)

        a closeness-weighted mean of the rescaled cosines ``qcos`` shrunk towards 0 by one
        table's worth of prior weight. Without the table's own cosine (that is the question
        term's) and without the shrinkage, a table with one neighbour took that neighbour's
        whole cosine: in a two-table lake 'roller coaster' went to the country table the
        question also names, and a table joined to nothing ranked by its own cosine twice.
        """
        shard = np.asarray(self.index.graph.shard_of)
        near = np.stack([self._near(int(t)) for t in ts])  # (|ts|, T)
        near[shard[None, :] == shard[ts][:, None]] = 0.0
        return (near @ qcos) / (1.0 + near.sum(axis=1))

    def _rank_tables(self, e: _Span, cand: dict[int, float], context: list[_Span],
                     others: list[dict[int, float]] = (), qcos: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Candidate tables ``cand`` of an entity mention, best first: its own score (:meth:`_base_tables`)
        plus μ · Σ_s w_s · max_u b_s(u) · closeness(t, u) (at most ``max_context``) over the
        question's other mentions s — attributes and values (b_s: their best column per table,
        w_s: specificity) and the other entities (b_s: their own table scores, w_s = 1) —
        plus ρ · cos(question, text of t), rescaled (``question_prior``, :meth:`_question_tables`),
        plus ν · the same cosine averaged over t's join neighbourhood, weighted by closeness
        (``neighbour_prior``, :meth:`_neighbourhood_cos`): the question reads like the
        database around the meant table, not only like the table. That term needs a Dijkstra
        per candidate, so only the ``neighbour_top`` (32) best on the other terms get it (all
        1,701 Spider questions: the same graphs as with every candidate, entity F1 0.6273).

        A question is about one part of the lake: of several same-named tables, the one whose
        join neighbourhood also holds what the rest of the question names, and whose own
        vocabulary the question reads like, is meant.
        """
        if not cand:
            return []
        idx = self.index
        ctx = [(self._table_best(s, idx.col_table), self._specificity(s)) for s in context if s is not e]
        ctx += [(o, 1.0) for o in others]
        ctx = [(b, w) for b, w in ctx if b and w > 0]
        arrays = []
        for b, w in ctx:
            top_b = sorted(b.items(), key=lambda x: (-x[1], x[0]))[: self.top_k * 2]
            arrays.append((np.asarray([u for u, _ in top_b]), np.asarray([v for _, v in top_b], np.float32), w))
        # closeness is symmetric: one Dijkstra per context table rather than per candidate (a
        # name such as 'park' has hundreds of candidate tables in a 10,000-table lake)
        ts = np.fromiter(cand, np.int64, len(cand))
        bonus = np.zeros(len(ts))
        for u, v, w in arrays:
            near = np.stack([self._near(int(x))[ts] for x in u])  # (|u|, |candidates|)
            bonus += w * (v[:, None] * near).max(axis=0)
        bonus_q, bonus_n = np.zeros(len(ts)), np.zeros(len(ts))
        if qcos is not None:
            bonus_q = self.question_prior * qcos[ts]
            if self.neighbour_prior > 0:
                # one Dijkstra per table read: only the candidates best on the other terms (a
                # common name has hundreds in a large lake, and the joint choice looks at ~10)
                pre = np.asarray([cand[int(t)] for t in ts]) + np.minimum(self.max_context, self.near_context * bonus) + bonus_q
                top = np.argsort(-pre, kind="stable")[: self.neighbour_top]
                bonus_n[top] = self.neighbour_prior * self._neighbourhood_cos(ts[top], qcos)
        e.parts = {int(t): (cand[int(t)], min(self.max_context, self.near_context * float(b)), float(bq), float(bn))
                   for t, b, bq, bn in zip(ts, bonus, bonus_q, bonus_n)}
        scored = {t: sum(p) for t, p in e.parts.items()}
        return sorted(scored.items(), key=lambda x: (-x[1], x[0]))

    def _choose(self, ranked: list[list[tuple[int, float]]], context: list[_Span] = (),
                pins=()) -> tuple[dict[int, int], dict[int, list[int]]]:
        """One table per entity, chosen jointly: the set maximising

            Σ_k score_k(t_k) − λ · MST_cost(t_1 … t_n) + μ · Σ_s w_s · max_k best_s(t_k) − δ · (n − #clusters)

        over the top ``joint_width`` candidates of each entity and up to ``joint_near`` more that
        join closely to another entity's two best (Spider, 1,701 questions: entity F1 0.558 →
        0.561, join 0.288 → 0.294), where the MST is over the cheapest lake join
        paths between the chosen tables (cost Σ −log join score, ``LakeGraph.best_paths``,
        ≤ 2 links, unreachable = ``max_cost``), the μ term credits the set once for each
        attribute or value mention ``s`` (weight: its specificity) that one of its tables
        explains, and δ (``distinct``) charges each entity resolved to a table (shard cluster)
        another entity already took: a question that names two things means two tables.
        Tables of one database join through strong key links (gold pairs of the tuning
        questions: median cost 0.15, random pairs 0.51, by a scratch measurement over the
        stored index, not in ``bench/``), so a coherent set is what tells apart
        the many same-named tables ('student', 'customers') of a lake. ``pins`` (the second
        pass, module docstring step 3) are tables already fixed: they join the spanning tree
        and count as context closeness for every entity.

        Returns the chosen table per entity and, per entity, its other candidates by their
        *max-marginal*: the value of the best set that holds them, max over t_{−k} of the
        objective at t_k = t. A tree's runner-up is then the table of the next coherent reading
        of the whole question (another database's customers *and* products), not the next
        same-named table on the mention's own score.
        """
        graph, idx = self.index.graph, self.index
        ks = [k for k in range(len(ranked)) if ranked[k]]
        if not ks or len(ks) + len(pins) <= 1:
            return {k: ranked[k][0][0] for k in ks}, {}
        width = self.joint_width
        while width > 2 and (width + self.joint_near) ** len(ks) > self.max_joint:
            width -= 1
        cands = {k: ranked[k][:width] for k in ks}
        if self.joint_near:
            # a table ranked below the width but joined to another entity's best tables (the
            # loan_1 customer, named only by the abbreviation 'cust', next to its loan table)
            for k in ks:
                near = np.max(np.stack([self._near(t) for j in ks if j != k for t, _ in ranked[j][:2]]
                                       + [self._near(t) for t in pins]), axis=0)
                more = [(t, v) for t, v in ranked[k][width:] if near[t] >= self.joint_near_min]
                more.sort(key=lambda x: (-(x[1] + float(near[x[0]])), x[0]))
                cands[k] = cands[k] + more[: self.joint_near]
        tabs = sorted({t for k in ks for t, _ in cands[k]} | set(pins))
        costs: dict[tuple[int, int], float] = {}
        for t in tabs:
            bp = graph.best_paths([t], max_hops=2, min_join=self.min_join)
            for u in tabs:
                if u != t:
                    hit = bp.get(u)
                    c = 0.0 if graph.shard_of[t] == graph.shard_of[u] else (min(hit[0], self.max_cost) if hit else self.max_cost)
                    costs[(t, u)] = min(c, costs.get((u, t), c))
                    costs[(u, t)] = costs[(t, u)]
        ctx = [(self._table_best(s, idx.col_table), self._specificity(s)) for s in context]
        ctx = [(b, w) for b, w in ctx if w > 0 and b]

        def mst(sel: list[int]) -> float:
            inside, total = [sel[0]], 0.0
            rest = sel[1:]
            while rest:
                c, u = min((min(costs.get((x, y), 0.0) if x != y else 0.0 for x in inside), y) for y in rest)
                total += c
                inside.append(u)
                rest.remove(u)
            return total

        best, best_key = None, None
        marginal: dict[int, dict[int, tuple]] = {k: {} for k in ks}
        for combo in itertools.product(*(cands[k] for k in ks)):
            sel = [t for t, _ in combo]
            val = sum(s for _, s in combo) - self.coherence * mst(sel + list(pins))
            val -= self.distinct * (len(sel) - len({int(graph.shard_of[t]) for t in sel}))
            val += self.joint_context * sum(w * max(b.get(t, 0.0) for t in sel) for b, w in ctx)
            key = (-round(val, 9), tuple(sel))
            for k, t in zip(ks, sel):
                if key < marginal[k].get(t, (np.inf,)):
                    marginal[k][t] = key
            if best_key is None or key < best_key:
                best, best_key = sel, key
        chosen = dict(zip(ks, best))
        runners_up = {k: sorted((t for t in marginal[k] if t != chosen[k]), key=marginal[k].__getitem__) for k in ks}
        return chosen, runners_up

    # ------------------------------------------------------------------ graph

    def _assemble(self, question, words, lower, mentions, values, pins) -> tuple[IntentGraph, list[tuple[int, int]]]:
        idx, lex, graph = self.index, self.lex, self.index.graph
        self._number_of(mentions, lower)
        self._roles(mentions, lower)
        ent_spans = [m for m in mentions if m.role == "entity"]
        attr_spans = [m for m in mentions if m.role == "attribute"]
        # one tree per entity lemma ('head' … 'heads' is one need)
        heads: dict[str, _Span] = {}
        merged: dict[int, list[_Span]] = {}
        for m in ent_spans:
            key = " ".join(tokens(m.text))
            if key in heads:
                merged[id(heads[key])].append(m)
            else:
                heads[key] = m
                merged[id(m)] = [m]
        ent_spans = list(heads.values())
        context = attr_spans + [v for v in values if v.columns and not v.qualifies]
        held = self._context_tables(context)
        bases = [self._base_tables(e, held) for e in ent_spans]
        qcos = self._question_tables(question) if ent_spans and self.question_prior > 0 else None
        pinned = [{t: 1.0} for t, _ in pins]
        for k, e in enumerate(ent_spans):
            # a pinned table answers another need of the question, and the entity is sought beside
            # it — unless the value comes right after the entity's words ('the course INTRODUCTION
            # TO COMPUTER SCIENCE', 'the club named …'): then the value says which table it is
            apart = {int(graph.shard_of[t]) for t, at in pins
                     if not (at == e.end or (at == e.end + 1 and lower[e.end] in _NAMING))}
            if apart:
                bases[k] = {t: v for t, v in bases[k].items() if int(graph.shard_of[t]) not in apart}
        ranked = [self._rank_tables(e, bases[k], context, [bases[j] for j in range(len(ent_spans)) if j != k] + pinned, qcos)
                  for k, e in enumerate(ent_spans)]

        if self.generic_holds > 0 and ent_spans:
            # 'the names of the stores': of the tables named 'store', the one that has a name
            # (figures in the module docstring, step 3)
            starts = [e.start for e in ent_spans]
            owned: dict[int, list[_Span]] = {}
            for m in attr_spans:
                if self._specificity(m) < _GENERIC_SPEC and m.emb is not None:
                    owned.setdefault(_owner(m, starts, lower), []).append(m)
            for k, ms in owned.items():
                e = ent_spans[k]
                named = [t for t, _ in ranked[k][: self.holds_top] if e.why.get(t, ("",))[0] == "named"]
                if len(named) > 1:
                    e.held_attrs = {t: self.generic_holds * h for t, h in self._holds(named, ms).items()}
                    ranked[k] = sorted(((t, v + e.held_attrs.get(t, 0.0)) for t, v in ranked[k]), key=lambda x: (-x[1], x[0]))
        chosen, alternatives = self._choose(ranked, context, [t for t, _ in pins])
        # 'representatives in descending order of votes': 'votes' names tables of its own, but
        # the election table chosen for another entity has a Votes header — the word is that
        # table's attribute, not a third table (figures in the module docstring, step 3)
        demoted = set()
        for k, tk in chosen.items():
            lexical = self._lexical(ent_spans[k])
            by_header = ent_spans[k].why.get(tk, ("",))[0] == "header"
            if any(j != k and j not in demoted and (by_header or graph.shard_of[tj] != graph.shard_of[tk])
                   and self._header_match(lexical, graph.shards(tj)) >= self.header_of_other
                   for j, tj in chosen.items()):
                demoted.add(k)
        for k in sorted(demoted):
            ent_spans[k].role = "attribute"
            attr_spans.append(ent_spans[k])
        attr_spans.sort(key=lambda m: m.start)

        def table_list(k: int) -> list[int]:
            # an entity's tables as its tree's evidence ranks them: the chosen one, the next
            # ``runners_up`` of the joint choice (by max-marginal), then the rest by its own ranking
            head = ([chosen[k]] if k in chosen else []) + alternatives.get(k, [])[: self.runners_up]
            return head + [t for t, _ in ranked[k] if t not in head]

        # each entity's first three table candidates, and their shards: their headers are read
        # for every attribute word
        candidates = sorted({t for k in chosen if k not in demoted for t in table_list(k)[:3]})
        cand_tables = [u for t in candidates for u in graph.shards(t)]
        for m in attr_spans:
            m.lake_columns, m.columns = m.columns, self._with_own(m, cand_tables)
        # two mentions resolving to one table (or its shards) are one tree
        keep, seen_cluster = [], {}
        for k in range(len(ent_spans)):
            if k in demoted:
                continue
            if k in chosen:
                cl = int(graph.shard_of[chosen[k]])
                if cl in seen_cluster:
                    merged[id(ent_spans[seen_cluster[cl]])].extend(merged[id(ent_spans[k])])
                    continue
                seen_cluster[cl] = k
            keep.append(k)

        trees: list[IntentTree] = []
        tree_table: list[int | None] = []
        tree_tables: list[list[int]] = []
        tree_start: list[int] = []

        for k in keep:
            e = ent_spans[k]
            tabs = table_list(k)
            scores = dict(ranked[k])
            trees.append(IntentTree(f"t{len(trees) + 1}", e.text, [], {
                "words": [m.text for m in merged[id(e)]], "span": [e.start, e.end],
                "tables": [idx.paths[t] for t in tabs[:10]],
                "table_scores": [round(scores.get(t, 0.0), 3) for t in tabs[:10]],
                **({"why": self._why(e, tabs[0], k in chosen and len(chosen) > 1)} if tabs else {})}))
            tree_table.append(chosen.get(k))
            tree_tables.append(tabs[:3])
            tree_start.append(e.start)

        # implied trees whose table the lake alone picks (a value it holds, a header only it spells),
        # not the chosen tables' neighbourhood → the token where the value starts (−1: a header);
        # a second pass chooses the named entities' tables with them fixed (module docstring, step 3)
        pin_at: dict[int, int] = {}

        def implied_tree(t: int, words_: str, why: str) -> int:
            trees.append(IntentTree(f"t{len(trees) + 1}", self._table_name(t, [x.entity for x in trees]), [], {
                "words": [words_] if words_ else [], "implied": why, "tables": [idx.paths[u] for u in self._shards_first(t)][:10]}))
            tree_table.append(t)
            tree_tables.append([t])
            tree_start.append(10**6)
            return len(trees) - 1

        def in_tree(k: int, c: int, first: bool = False) -> bool:
            t = int(idx.col_table[c])
            return any(graph.shard_of[t] == graph.shard_of[u] for u in tree_tables[k][: 1 if first else 3])

        n_attr = 0

        def add_attr(k: int, name: str, cols, words_, values=(), extra=None) -> Attribute:
            nonlocal n_attr
            n_attr += 1
            ev = {"words": words_, "columns": [[idx.columns["path"][c], idx.columns["name"][c], round(float(s), 3)] for c, s in cols[:5]]}
            ev.update(extra or {})
            a = Attribute(f"a{n_attr}", name, list(values), ev)
            trees[k].attributes.append(a)
            return a

        def home(span: _Span) -> tuple[int | None, float]:
            # the tree whose chosen table holds the column, before one that merely ranks it
            best, best_s = None, 0.0
            for k in range(len(trees)):
                s = max((sc * (1.0 if in_tree(k, c, True) else 0.9) for c, sc in span.columns if in_tree(k, c)), default=0.0)
                if s > best_s + 1e-9:
                    best, best_s = k, s
            return best, best_s

        def nearest_tree(span: _Span) -> int | None:
            return _owner(span, tree_start, lower)

        def ranked_cols(k: int | None, span: _Span) -> list[tuple[int, float]]:
            # columns of the tree's tables first: 'name' of this entity, not any 'name'
            if k is None:
                return span.columns
            cols = span.columns
            lexical = self._lexical(span) if span.kind == "mention" else {}
            if span.kind == "mention" and tree_tables[k]:
                # the entities' candidates were read into the attribute words above; an implied
                # tree's table, and the span the value rule builds, were not
                cols = self._with_own(span, graph.shards(tree_tables[k][0]))
            # a word every schema has ('name', 'id') means the tree's own column, not a near table's
            generic = span.kind == "mention" and self._specificity(span) < _GENERIC_SPEC
            far = 0.5 if generic else 0.7
            near = _ALTERNATIVE_ORDER if generic else 0.85
            # header cosine saturates ('concert name' ~ Concert_ID at 1.0, as Concert_Name): in the
            # order, the header that spells the words beats one that only reads like them
            # (`python -m bench.intent_bench --limit 400`: attribute F1 0.456 → 0.460; as a tie-break only, 0.4575)
            def order(c: int, v: float) -> float:
                return max(lexical.get(c, 0.0), _SEMANTIC_ORDER * v) if lexical else v

            first = tree_tables[k][0] if tree_tables[k] else -1

            def weight(c: int) -> float:
                t = int(idx.col_table[c])
                if t == first:
                    return 1.0
                if in_tree(k, c, True):
                    # a shard the chosen table unions with: the chosen table's own 'ArtistId'
                    # (0.8 for 'id') before the shard's exact 'id' (figures: module docstring, step 3)
                    return _ALTERNATIVE_ORDER
                return max(near if in_tree(k, c) else far, min(0.85, far + self.near_cols * near_chosen[t]))

            def rank(c: int) -> int:
                # ties go to the table the tree ranks higher
                cl = graph.shard_of[int(idx.col_table[c])]
                return next((i for i, u in enumerate(tree_tables[k]) if graph.shard_of[u] == cl), len(tree_tables[k]))

            return sorted(cols, key=lambda cs: (-order(*cs) * weight(cs[0]), rank(cs[0]), cs[0]))

        # closeness of every table to the chosen ones: a column near the question's tables
        # is the likelier reading of an attribute word than the same header elsewhere
        near_chosen = np.zeros(idx.n_tables, np.float32)
        for t in set(chosen.values()):
            np.maximum(near_chosen, self._near(t), out=near_chosen)

        def taken() -> set[int]:
            # shard clusters the trees already hold (implied trees join them as they are made)
            return {int(graph.shard_of[u]) for u in tree_table if u is not None}

        def neighbour_holding(span: _Span) -> int | None:
            # 'counties that have at least two delegates': no chosen table has a Delegate, the
            # election table joined to county does — the question needs that table too
            if any(in_tree(k, c, True) for k in range(len(trees)) for c, sc in span.columns if sc >= self.min_attr_score):
                return None
            held_clusters = taken()
            best, best_v = None, 0.0
            for c, sc in span.columns:
                t = int(idx.col_table[c])
                if sc < self.neighbour_col or int(graph.shard_of[t]) in held_clusters:
                    continue
                v = sc * float(near_chosen[t])
                if v > best_v:
                    best, best_v = t, v
            return best if best_v >= self.neighbour_near else None

        def neighbour_own(span: _Span, k: int) -> int | None:
            # 'the names of entrepreneurs': the entrepreneur table has no Name; the people table
            # its People_ID joins to does. A word every schema has is the tree's own column —
            # or, where the tree's table has none, that of the table its strongest key link
            # (≥ min_bridge) reaches that has one (figures in the module docstring, step 3)
            t0 = tree_table[k]
            if t0 is None:
                return None
            lexical = self._lexical(span)
            if self._header_match(lexical, graph.shards(t0)) >= self.min_attr_score:
                return None
            held_clusters = taken()
            linked = sorted((-score, t) for u in graph.shards(t0) for t, op, score in graph.neighbours(u, self.min_bridge)
                            if op == "join" and int(graph.shard_of[t]) not in held_clusters)
            for _, t in linked:
                if self._header_match(lexical, [t]) >= self.neighbour_col:
                    return t
            return None

        attr_of: dict[int, Attribute] = {}
        # each attribute's readings among its columns as ranked for its tree (first 8, ≥ min_attr_score)
        # that are its tree's own table's or a shard's: where a value it constrains must be held
        attr_own: dict[int, set[int]] = {}
        for m in attr_spans:
            if _verb_like(m, lower) and self._spelled(m) < 0.95:
                # 'named', 'taught', 'located': the question's verbs, unless a header spells exactly
                # that ('opened', Opened) — spells, not resembles: the embedding reads 'located'
                # as Location
                continue
            if trees and self._specificity(m) < _GENERIC_SPEC:
                k, s = nearest_tree(m), 1.0  # 'name', 'id': every table has one; the question's syntax says whose
                t_n = neighbour_own(m, k) if k is not None else None
                if t_n is not None:
                    k = implied_tree(t_n, m.text, "attribute of the named one held by a table joined to it")
            else:
                t_n = neighbour_holding(m)
                if t_n is not None:
                    k, s = implied_tree(t_n, m.text, "attribute held by a table joined to the named ones"), 1.0
                else:
                    k, s = home(m)
            if k is None or s < 0.5:
                if (m.columns[0][1] if m.columns else 0.0) < self.min_attr_score:
                    continue  # no header in the lake says this: a verb or filler, not a data need
                k2 = nearest_tree(m)
                if k2 is None and m.columns and self._specificity(m) > _GENERIC_SPEC:
                    t = int(idx.col_table[m.columns[0][0]])
                    k2 = implied_tree(t, m.text, "attribute without a named entity")
                elif k2 is not None and self._specificity(m) > _GENERIC_SPEC and not _ed_or_ly(lower[m.end - 1]):
                    t = self._sole_holder(m)
                    if t is not None and int(graph.shard_of[t]) not in taken():
                        k2 = implied_tree(t, m.text, "attribute only one table holds")
                        pin_at[k2] = -1
                k = k2
            if k is None:
                continue
            extra = {}
            agg = self._aggregate(lower, m.start)
            if agg:
                extra["aggregate"] = agg
            cols = ranked_cols(k, m)
            attr_of[id(m)] = add_attr(k, m.text, cols, m.text, extra=extra)
            attr_own[id(m)] = {c for c, sc in cols[:8] if sc >= self.min_attr_score and in_tree(k, c, True)}

        def nearest_attr(v: _Span) -> Attribute | None:
            near = [m for m in attr_spans if id(m) in attr_of]
            if not near:
                return None
            return attr_of[id(min(near, key=lambda m: (abs(m.start - v.start), m.start > v.start)))]

        def year_attr(v: _Span) -> Attribute | None:
            # 'races held in 2009', 'made after 2000': a bare year constrains a year column of the
            # question's tables — not the release date or zip code of some table that holds '2009'
            if v.named or not _YEAR.fullmatch(v.text) or not trees:
                return None
            k0 = nearest_tree(v)
            order = [k0] + sorted((k for k in range(len(trees)) if k != k0), key=lambda k: abs(tree_start[k] - v.start))
            for depth in (1, 3):
                for k in order:
                    cols = [c for u in tree_tables[k][:depth] for x in graph.shards(u) for c in idx.table_columns[x]
                            if "year" in lex.col_tokens[int(c)]]
                    if cols:
                        c = int(min(cols, key=lambda c: (lex.col_tokens[int(c)] != ("year",), int(c))))
                        have = _attribute_on(trees[k], idx.columns["path"][c], idx.columns["name"][c])
                        return have or add_attr(k, idx.columns["words"][c], [(c, 1.0)], v.text, extra={"from_value": True})
            return None

        for v in values:
            compare = self._compare(lower, v.start)
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
                target = target or year_attr(v)
                if target is None:
                    span = _Span(v.start, v.end, v.text, columns=v.columns)
                    k, _ = home(span)
                    if v.qualifies and k is None:
                        k = next((j for j in range(len(trees)) if tree_start[j] == v.end), k)
                    if k is None and trees and (len({int(idx.col_table[c]) for c in held}) > 2 or not v.named):
                        # a common value, or a bare number ('more than 100') or lower-case word
                        # ('gas', 'belong') that some cell happens to hold: no reason to bring in
                        # a table for it, nor to make another table's column that holds it an
                        # attribute — it constrains the nearest attribute the question names
                        # (figures in the module docstring, step 1)
                        target = nearest_attr(v)
                        k = None if target else nearest_tree(span)
                    if target is None:
                        if k is None:
                            k = implied_tree(int(idx.col_table[v.columns[0][0]]), v.text, "value held by an unnamed table")
                            pin_at[k] = v.start
                        cols = ranked_cols(k, span)
                        target = add_attr(k, idx.columns["words"][cols[0][0]], cols, v.text, extra={"from_value": True})
            else:
                target = year_attr(v) or nearest_attr(v)
            if target is None:
                if not trees:
                    trees.append(IntentTree("t1", "record", [], {"implied": "a value without any entity"}))
                    tree_table.append(None)
                    tree_tables.append([])
                    tree_start.append(0)
                target = add_attr(len(trees) - 1, "value", [], v.text)
            target.values.append(v.text)
            if compare:
                target.evidence.setdefault("compare", {})[v.text] = compare
        if not trees:
            return IntentGraph([IntentTree("t1", question.strip()[:60] or "record", [], {"implied": "nothing in the question matched the lake"})], []), []
        _merge_repeats(trees)
        joins = self._joins(trees, tree_table, tree_start, add_attr, implied_tree)
        self._drop_strays(trees, joins)
        for k, t in enumerate(trees):
            if not t.attributes:
                add_attr(k, "id", [], "", extra={"implied": True, "role": "key"})
        return IntentGraph(trees, joins), sorted({(tree_table[k], at) for k, at in pin_at.items()})

    def _sole_holder(self, span: _Span) -> int | None:
        """The one table (shards counted as one) whose header spells an attribute's words
        (match ≥ ``sole_match``) where no other table's header matches as well: "the number of
        scientists involved for each project" — no chosen table has a scientist, the
        assignment table's ``Scientist`` alone spells it, so that table is part of the
        answer even though no join path the lake found reaches it closely (which
        ``neighbour_holding`` asks). Of the 62 trees this makes on all 1,701 questions, 36
        are a reference entity (a scratch tally); a past form ('registered', 5 wrong trees)
        is the question's verb, however a header spells it, and makes none."""
        best = max((sc for _, sc in span.columns), default=0.0)
        if best < self.sole_match:
            return None
        tables = [int(self.index.col_table[c]) for c, sc in span.columns if sc >= best - 1e-9]
        return tables[0] if len({int(self.index.graph.shard_of[t]) for t in tables}) == 1 else None

    def _drop_strays(self, trees: list[IntentTree], joins: list[Join]) -> None:
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
                               or a.evidence["columns"][0][0] in held or a.evidence["columns"][0][2] >= self.stray_match]

    def _shards_first(self, t: int) -> list[int]:
        """``t``, then the rest of its shard cluster, the strongest union link first: the
        evidence's first table is the one chosen (search anchors a tree on it), not the
        cluster's lowest id — a cluster may also hold a look-alike table of another database."""
        union = self.index.graph.union[t]
        rest = [u for u in self.index.graph.shards(t) if u != t]
        return [t] + sorted(rest, key=lambda u: (-(union[u].score if u in union else 0.0), u))

    def _table_name(self, t: int, taken=()) -> str:
        """A name for a table nobody named: its own entity word, else its first headers' words."""
        ew = self.lex.table_entity_words[t]
        taken = {" ".join(tokens(x)) for x in taken}
        if ew:
            word = ew.most_common(1)[0][0].replace("_", " ")
            if word not in taken:
                return word
        words = [self.index.columns["words"][c] for c in self.index.table_columns[t][:4]]
        return " ".join(words) or self.index.paths[t]

    def _joins(self, trees, tree_table, tree_start, add_attr, implied_tree) -> list[Join]:
        """Cross-tree joins: a spanning tree of the named entities over cheapest lake join paths;
        a table on such a path that no tree names becomes a bridge tree (Appendix A, rule 3)."""
        idx, graph = self.index, self.index.graph
        named = [k for k in range(len(trees)) if tree_table[k] is not None]
        if len(named) < 2:
            return []
        paths = {k: graph.best_paths([tree_table[k]], max_hops=self.max_bridge_hops + 1, min_join=self.min_join) for k in named}
        # Prim over path costs, question order breaking ties; unreachable pairs cost +inf
        inside, edges = [min(named, key=lambda k: tree_start[k])], []
        while len(inside) < len(named):
            best = None
            for a in inside:
                for b in named:
                    if b in inside:
                        continue
                    hit = paths[a].get(tree_table[b])
                    cost = hit[0] if hit else float("inf")
                    key = (cost, abs(tree_start[a] - tree_start[b]), tree_start[b])
                    if best is None or key < best[0]:
                        best = (key, a, b, hit[1] if hit else None)
            _, a, b, path = best
            if path is not None and not bridge_ok(graph, path, self.min_bridge):
                path = None
            inside.append(b)
            edges.append((a, b, path))
        owner = {tree_table[k]: k for k in named}
        joins: list[Join] = []
        key_attr: dict[tuple[int, str], Attribute] = {}

        def key_of(k: int, t: int, column: str) -> Attribute:
            if (k, column) not in key_attr:
                c = idx.col_index.get((idx.paths[t], column))
                words_ = idx.columns["words"][c] if c is not None else column
                existing = _attribute_on(trees[k], idx.paths[t], column)
                key_attr[(k, column)] = existing or add_attr(k, words_, [(c, 1.0)] if c is not None else [], "", extra={"implied": True, "role": "key"})
            return key_attr[(k, column)]

        for a, b, path in edges:
            if path is None:
                ka = trees[a].attributes[0] if trees[a].attributes else add_attr(a, "id", [], "", extra={"implied": True, "role": "key"})
                kb = trees[b].attributes[0] if trees[b].attributes else add_attr(b, "id", [], "", extra={"implied": True, "role": "key"})
                joins.append(Join(trees[a].tree_id, ka.attribute_id, trees[b].tree_id, kb.attribute_id,
                                  {"words": f"{trees[a].entity} … {trees[b].entity}", "reason": "the question relates them; no join path in the lake"}))
                continue
            hops = [a] + [owner.get(t) for t in path[1:-1]] + [b]
            for i, t in enumerate(path[1:-1], start=1):
                if hops[i] is None:
                    hops[i] = implied_tree(t, "", f"bridge between {trees[a].entity!r} and {trees[b].entity!r}")
                    owner[t] = hops[i]
            for (x, tx), (y, ty) in zip(zip(hops, path), zip(hops[1:], path[1:])):
                link = graph.join[tx][ty][0]
                cx, cy = (link.src_column, link.dst_column) if link.src_table == tx else (link.dst_column, link.src_column)
                ax, ay = key_of(x, tx, cx), key_of(y, ty, cy)
                joins.append(Join(trees[x].tree_id, ax.attribute_id, trees[y].tree_id, ay.attribute_id, {
                    "words": f"{trees[x].entity} … {trees[y].entity}",
                    "lake": [idx.paths[tx], cx, idx.paths[ty], cy, round(link.score, 3)],
                    "reason": "bridge" if len(path) > 2 else "join link"}))
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
        m = _COMPARATIVE.search(window)
        if m:  # any '<adjective>er than': 'older than' is >, 'younger than' is <
            return "<" if m.group(1) in _SMALLER else ">"
        return None


def _owner(span: _Span, starts: list[int], lower: list[str]) -> int | None:
    """Which of the entities starting at ``starts`` a word belongs to by the question's syntax:
    'the X of (the) Y' → Y; else the nearest entity before it; else the first one."""
    if not starts:
        return None
    j = span.end
    if j < len(lower) and lower[j] in ("of", "for"):
        after = [k for k, s in enumerate(starts) if s > j]
        if after:
            return min(after, key=starts.__getitem__)
    before = [k for k, s in enumerate(starts) if s <= span.start]
    return max(before, key=starts.__getitem__) if before else min(range(len(starts)), key=starts.__getitem__)


def bridge_ok(graph, path: list[int], min_score: float) -> bool:
    """Is every table inside this join path a bridge: entered and left through two different
    columns (``management``: department_ID → department, head_ID → head), by links at least
    ``min_score`` strong? A path in and out through one column (the ``customer_id`` of a third
    table) relates nothing its two ends do not share themselves, and weaker links are mostly
    the lake's chance id overlaps between databases. Spider, ``python -m bench.intent_bench
    --limit 400``: entity F1 0.555 → 0.575, join F1 0.262 → 0.287 with this test at
    ``min_score`` 0.84 (entity 0.566 at 0.80, 0.571 at 0.87); bridge trees 111 (25 right) →
    32 (22 right), by a scratch tally of the extracted trees, not in ``bench/``.

    ``path``: tables linked one to the next by join links, as :meth:`LakeGraph.best_paths`
    returns them."""
    join = graph.join
    for x, y, z in zip(path, path[1:], path[2:]):
        cols = []
        for u, v in ((x, y), (y, z)):
            link = join[u][v][0]
            if link.score < min_score:
                return False
            cols.append(link.src_column if link.src_table == y else link.dst_column)
        if cols[0] == cols[1]:
            return False
    return True


def _attribute_on(tree: IntentTree, path: str, column: str) -> Attribute | None:
    """The tree's attribute whose first column is ``path``'s ``column``, if it has one."""
    return next((a for a in tree.attributes if a.evidence.get("columns") and a.evidence["columns"][0][:2] == [path, column]), None)


def _merge_repeats(trees: list[IntentTree]) -> None:
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


def _verb_like(span: _Span, lower: list[str]) -> bool:
    """A one-word mention that reads as a verb form or a number word. Spider, ``python -m
    bench.intent_bench --limit 400``: attribute F1 0.420 → 0.426 with the verb cues and
    irregular past forms (entity F1 unchanged). It is no attribute unless a header spells it
    (lexical match ≥ 0.95, not the embedding's: 'located' ≈ Location): 400 q entity F1 0.614
    → 0.616, attribute 0.507 → 0.510, join 0.378 → 0.380; all 1,701: entity 0.606 → 0.607,
    attribute 0.502 → 0.504, join 0.379 → 0.380."""
    if span.end - span.start != 1:
        return False
    w = lower[span.start]
    after_cue = span.start > 0 and lower[span.start - 1] in _VERB_CUES
    return w in _NUMBER_WORDS or w in _IRREGULAR_PAST or after_cue or (len(w) > 4 and w.endswith(("ed", "ing")))


def _counts_first(col_tokens, want: set[str]) -> bool:
    """A header that counts the words: a count word before them (``Num_of_Shops``, ``no_of_customers``)."""
    first = next((i for i, t in enumerate(col_tokens) if t in _COUNT_WORDS), None)
    return first is not None and all(t in col_tokens[first + 1 :] for t in want)


def _verbal(span: _Span, lower: list[str]) -> bool:
    """A one-word mention in a verb's or an adverb's form ('participated', 'did not
    participate', 'actually') or a comparative before 'than' ('older than'): unlike
    :func:`_verb_like`, 'which'/'who' before it and '-ing' are no sign — 'which authors',
    'the building' name things."""
    if span.end - span.start != 1:
        return False
    w = lower[span.start]
    aux = span.start > 0 and lower[span.start - 1] in _AUXILIARY
    comparative = w.endswith("er") and span.end < len(lower) and lower[span.end] == "than"
    return aux or comparative or _past_or_adverb(w)


def _ed_or_ly(w: str) -> bool:
    """A past form or an adverb by its ending ('participated', 'actually')."""
    return len(w) > 4 and w.endswith(("ed", "ly"))


def _past_or_adverb(w: str) -> bool:
    """A past form or an adverb, by its ending or as an irregular past ('won', 'taught')."""
    return _ed_or_ly(w) or w in _IRREGULAR_PAST


def _cost_matrix(graph, min_join: float) -> csr_matrix:
    """Join links as a sparse cost matrix (−log score); shard links nearly free (csgraph drops zeros)."""
    rows, cols, data = [], [], []
    for t in range(graph.n_tables):
        for u, links in graph.join[t].items():
            if links[0].score >= min_join:
                rows.append(t), cols.append(u), data.append(max(1e-6, -np.log(max(links[0].score, 1e-6))))
        for u, link in graph.union[t].items():
            if graph.is_shard_link(link):
                rows.append(t), cols.append(u), data.append(1e-6)
    n = graph.n_tables
    m = csr_matrix((np.asarray(data, np.float64), (np.asarray(rows), np.asarray(cols))), shape=(n, n))
    return m.maximum(m.T).tocsr()  # links are stored both ways; make the symmetry exact


def _rescale(cos):
    """MiniLM puts unrelated short texts at cosine 0.1–0.3: map [0.3, 0.8] → [0, 1]."""
    return np.clip((cos - 0.3) / 0.5, 0.0, 1.0)
