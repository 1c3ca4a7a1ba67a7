"""The offline extractor's word lists and patterns: which words are cues, not data needs.

A question's syntax is read from closed word lists (English function words, aggregation and
comparison cues, verb cues) and a few patterns (quoted strings, dates, numbers); everything
else is read against the lake's own vocabulary (:mod:`raylake.intent.lexicon`). Each list is
used by :mod:`.spans` (what is a value, what a mention), :mod:`.syntax` (verb forms, whose
attribute) or :mod:`.assemble` (the evidence's aggregate and compare). The figures behind the
lists are in the package docstring (:mod:`raylake.intent.offline`, steps 1–3).
"""
from __future__ import annotations

import re

from raylake.intent.lexicon import NAME_PARTS

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
# 'name' is a stopword for segmentation only; it is kept as an attribute (see ATTR_WORDS)
ATTR_WORDS = {"name", "names"}
NAME_PART_WORDS = set(NAME_PARTS.values())  # 'first name', as the lexicon splits 'fname'
AGGREGATE = {"average": "avg", "mean": "avg", "total": "sum", "sum": "sum", "maximum": "max", "max": "max", "highest": "max",
             "largest": "max", "biggest": "max", "greatest": "max", "most": "max", "oldest": "max", "minimum": "min",
             "min": "min", "lowest": "min", "smallest": "min", "least": "min", "fewest": "min", "youngest": "min",
             "count": "count", "number": "count", "many": "count"}
COMPARE = [("more than", ">"), ("greater than", ">"), ("larger than", ">"), ("higher than", ">"), ("bigger than", ">"),
           ("at least", ">="), ("at most", "<="), ("less than", "<"), ("fewer than", "<"), ("lower than", "<"),
           ("smaller than", "<"), ("above", ">"), ("over", ">"), ("below", "<"), ("under", "<"), ("before", "<"),
           ("after", ">"), ("between", "between"), ("not", "!="), ("without", "none")]
# the number words, as the SQL writes the number ('more than one' is > 1)
NUMBER_VALUES = {w: str(n) for n, w in enumerate(["one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                                   "ten"], 1)} | {"once": "1", "twice": "2"}
NUMBER_WORDS = set(NUMBER_VALUES)
DETERMINERS = {"the", "all", "each", "every", "its", "their", "a", "an"}
ORDERED = {">", ">=", "<", "<="}
COMPARATIVE = re.compile(r"\b([a-z]+er) than$")
# 'score higher than 300': the compared attribute is the word before; 'older than' names one
GENERIC_COMPARATIVES = {p.split()[0] for p, _ in COMPARE if p.endswith(" than")}
SMALLER = {"younger", "smaller", "lower", "fewer", "shorter", "cheaper", "earlier", "lighter", "narrower", "thinner",
           "poorer", "slower", "weaker", "closer", "nearer"}
NAMING = {"named", "called", "titled"}
COUNT_WORDS = {"num", "number", "count", "no", "total", "nb"}
ENTITY_CUES = {"each", "every", "of", "which", "many", "per", "all", "whose", "by"}

# words before which a one-word mention reads as a verb ('who built', 'can interact'), and
# irregular past forms the -ed rule misses: a question's verbs are no data needs
VERB_CUES = {"who", "that", "which", "can", "cannot", "could", "did", "do", "does", "to", "not", "never", "have", "has",
             "had", "was", "were", "been", "will", "would", "should", "must", "may", "might", "also"}
# words before which a one-word mention is a verb for certain ('did not participate'), unlike
# 'which' / 'who', which also come before the things a question names ('which authors')
AUXILIARY = {"did", "do", "does", "don't", "doesn't", "didn't", "not", "never", "can", "cannot", "could", "will", "would",
             "should", "must", "may", "might"}
IRREGULAR_PAST = {"built", "made", "taught", "won", "held", "got", "wrote", "ran", "used", "bought", "sold", "led", "paid",
                  "gave", "took", "saw", "flew", "drove", "kept", "left", "met", "lost", "spent", "found", "became"}
# words before which a lower-case word a cell holds is a verb, not that value ('tracks that
# belong to'): unlike a mention ('which authors'), a value after 'which'/'who' is rare; a bare
# 'not' is no sign ('milk but not cat'), 'did not' is (see SpanReader._verb_or_plural)
VERB_BEFORE = {"who", "that", "which", "they", "he", "she", "it"} | (AUXILIARY - {"not"})
# lower-case words that some cell holds ('before', 'can') but a question uses as a cue
NOT_VALUES = {p for p, _ in COMPARE if " " not in p} | AUXILIARY

# a single quote opens after no letter and closes before none: "the scientists' names, their
# projects' names" quotes nothing
QUOTED = re.compile(r"""(?:(?<!\w)'([^']+)'(?!\w)|"([^"]+)"|“([^”]+)”)""")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?\b")
YEAR = re.compile(r"(?:1[89]|20)\d\d")
NUMBER = re.compile(r"(?<![\w.-])[+-]?\d+(?:\.\d+)?(?![\w-])")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*|\d+(?:\.\d+)?")
