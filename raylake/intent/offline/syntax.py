"""The question's syntax, read from its words alone: verb forms, cues, whose word is whose.

The offline extractor has no parser; these rules read a word's form and its neighbours
against the closed lists of :mod:`.vocab` — is a one-word mention a verb ('who teach',
'located'), which entity an attribute word belongs to ('the X of the Y' → Y), which
aggregation or comparison a value or attribute carries ('how many', 'more than'), and
whether a mention names a thing or describes one (:func:`assign_roles`). Everything the lake
says of a word is the matcher's (:mod:`.matching`); the figures behind each rule are in the
package docstring (:mod:`raylake.intent.offline`, steps 1 and 3) and the docstrings below.
"""
from __future__ import annotations

from typing import Callable

from raylake.intent.lexicon import tokens
from raylake.intent.offline.span import Span
from raylake.intent.offline.vocab import (
    AGGREGATE,
    ATTR_WORDS,
    AUXILIARY,
    COMPARATIVE,
    COMPARE,
    DETERMINERS,
    ENTITY_CUES,
    IRREGULAR_PAST,
    NUMBER_WORDS,
    SMALLER,
    VERB_CUES,
)


def assign_roles(mentions: list[Span], lower: list[str], spelled: Callable[[Span], float]) -> None:
    """Each mention without a role an entity or an attribute, by the question's syntax and how
    the lake names it (``m.entity``: its words name tables; ``spelled(m)``: how nearly a header
    spells it, :meth:`.matching.Matcher.spelled`). Package docstring, step 3."""
    n = len(lower)
    starts = {m.start for m in mentions}
    ends = {m.end: m for m in mentions}
    for m in mentions:
        if m.role:
            continue
        j = m.start - 1
        while j > 0 and lower[j] in DETERMINERS:
            j -= 1
        # 'the names of reviewers', 'the position of physicians': what an attribute is 'of' is a thing
        of_attr = j > 0 and lower[j] == "of" and j in ends and ends[j].role == "attribute"
        best = m.columns[0][1] if m.columns else 0.0
        nxt = m.end
        of_follows = nxt < n and lower[nxt] in ("of", "for") and any(s > nxt for s in starts)
        possessive = lower[m.end - 1].endswith("'s")
        is_column = spelled(m) >= 0.95 and (len(tokens(m.text)) >= 2 or m.entity < 0.5)
        cue = m.start > 0 and lower[m.start - 1] in ENTITY_CUES
        if m.text.lower() in ATTR_WORDS:
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


def owner(span: Span, starts: list[int], lower: list[str]) -> int | None:
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


def aggregate(lower: list[str], start: int) -> str | None:
    """The aggregation the three words before ``start`` ask for ('how many', 'average'), if any."""
    window = lower[max(0, start - 3) : start]
    if "how" in window and "many" in window:
        return "count"
    for w in reversed(window):
        if w in AGGREGATE:
            return AGGREGATE[w]
    return None


def compare(lower: list[str], start: int) -> str | None:
    """The comparison the three words before ``start`` make ('more than', 'older than'), if any."""
    window = " ".join(lower[max(0, start - 3) : start])
    for phrase, op in COMPARE:
        if window.endswith(phrase) or f" {phrase} " in f" {window} ":
            return op
    m = COMPARATIVE.search(window)
    if m:  # any '<adjective>er than': 'older than' is >, 'younger than' is <
        return "<" if m.group(1) in SMALLER else ">"
    return None


def verb_like(span: Span, lower: list[str]) -> bool:
    """A one-word mention that reads as a verb form or a number word. Spider, ``python -m
    bench.intent_bench --limit 400``: attribute F1 0.420 → 0.426 with the verb cues and
    irregular past forms (entity F1 unchanged). It is no attribute unless a header spells it
    (lexical match ≥ 0.95, not the embedding's: 'located' ≈ Location): 400 q entity F1 0.614
    → 0.616, attribute 0.507 → 0.510, join 0.378 → 0.380; all 1,701: entity 0.606 → 0.607,
    attribute 0.502 → 0.504, join 0.379 → 0.380."""
    if span.end - span.start != 1:
        return False
    w = lower[span.start]
    after_cue = span.start > 0 and lower[span.start - 1] in VERB_CUES
    return w in NUMBER_WORDS or w in IRREGULAR_PAST or after_cue or (len(w) > 4 and w.endswith(("ed", "ing")))


def verbal(span: Span, lower: list[str]) -> bool:
    """A one-word mention in a verb's or an adverb's form ('participated', 'did not
    participate', 'actually') or a comparative before 'than' ('older than'): unlike
    :func:`verb_like`, 'which'/'who' before it and '-ing' are no sign — 'which authors',
    'the building' name things."""
    if span.end - span.start != 1:
        return False
    w = lower[span.start]
    aux = span.start > 0 and lower[span.start - 1] in AUXILIARY
    comparative = w.endswith("er") and span.end < len(lower) and lower[span.end] == "than"
    return aux or comparative or past_or_adverb(w)


def ed_or_ly(w: str) -> bool:
    """A past form or an adverb by its ending ('participated', 'actually')."""
    return len(w) > 4 and w.endswith(("ed", "ly"))


def past_or_adverb(w: str) -> bool:
    """A past form or an adverb, by its ending or as an irregular past ('won', 'taught')."""
    return ed_or_ly(w) or w in IRREGULAR_PAST
