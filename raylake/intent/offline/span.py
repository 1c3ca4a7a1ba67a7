"""A span of the question (a value or a mention) and what the lake says of it.

:class:`Span` is the one record every part of the offline extractor writes to and reads: the
reader (:mod:`.spans`) makes it from the question's words, the matcher (:mod:`.matching`)
adds its columns, tables and embedding, the ranker (:mod:`.ranking`) its tables' score terms,
and the assembler (:mod:`.assemble`) its role. A few fields are caches filled on first use
(``best``, ``lexical``, ``spec``): several rankings read each. The grounding of an LLM's graph
(:mod:`raylake.intent.ground`) makes spans of the LLM's words, with no positions.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Span:
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
    spec: float | None = None  # specificity, see Matcher.specificity
    best: dict | None = None  # table -> best column score, see Matcher.table_best
    lexical: dict | None = None  # column -> lexical header match of the words, see Matcher.lexical
    emb: np.ndarray | None = None  # (d,) the words' embedding, set by Matcher.match
    why: dict = field(default_factory=dict)  # table -> (source, detail) of its own score (entities), see Ranker.why
    parts: dict = field(default_factory=dict)  # table -> (own, context, question, neighbourhood) score terms (entities)
    verbal: bool = False  # one word read as a verb or adverb: no abbreviation names a table by it
    qualifies: bool = False  # a lower-case value before the word naming the tables that hold it ('photo products')
    held_attrs: dict | None = None  # table -> η · holds term of its ranking (entities), see Ranker.holds
