"""``OfflineExtractor``: the parts of the offline extractor composed, and its two passes.

The extractor owns one of each part, built over the same index, lexicon and
:class:`~raylake.config.IntentConfig`: the span reader (:mod:`.spans`), the matcher (:mod:`.matching`),
the table ranker (:mod:`.ranking`), the joint chooser (:mod:`.joint`) and the assembler
(:mod:`.assemble`). Each part holds the parts it calls, so no part reaches into another's
state. A question is read in one pass; where that pass made a tree whose table the lake alone
picked (a value only it holds, a header only it spells), the question is read again with
those tables pinned (package docstring :mod:`raylake.intent.offline`, step 3, "Second pass").
The grounding of an LLM's graph (:mod:`raylake.intent.ground`) reuses the same parts.
"""
from __future__ import annotations

import dataclasses

from raylake.config import RaylakeContext
from raylake.intent.lexicon import Lexicon
from raylake.intent.model import IntentGraph
from raylake.intent.offline.assemble import Assembler
from raylake.intent.offline.joint import JointChooser
from raylake.intent.offline.matching import Matcher
from raylake.intent.offline.ranking import Ranker
from raylake.config import IntentConfig
from raylake.intent.offline.spans import SpanReader
from raylake.intent.offline.vocab import WORD


class OfflineExtractor:
    """``OfflineExtractor(index).extract(question) -> IntentGraph`` (see :mod:`raylake.intent.offline`).

    Args:
        index: the lake's :class:`~raylake.index.reader.LakeIndex`.
        lexicon: its :class:`~raylake.intent.lexicon.Lexicon` (built from ``index`` if omitted).
        **settings: any field of :class:`~raylake.config.IntentConfig` (``top_k``, ``generic_holds``, ...),
            over the current context's ``intent``.
    """

    def __init__(self, index, lexicon: Lexicon | None = None, **settings):
        self.index = index
        self.lex = lexicon or Lexicon(index)
        ctx = RaylakeContext.get_current()
        self.settings = dataclasses.replace(ctx.intent, **settings)
        if self.settings.min_join is None:
            self.settings.min_join = ctx.search.min_join
        self.values = index.values  # normalised value → columns holding it (loaded here, not on the first question)
        self.reader = SpanReader(index, self.lex, self.settings)
        self.matcher = Matcher(index, self.lex, self.settings)
        self.ranker = Ranker(index, self.lex, self.settings, self.matcher)
        self.chooser = JointChooser(index, self.settings, self.matcher, self.ranker)
        self.assembler = Assembler(index, self.lex, self.settings, self.matcher, self.ranker, self.chooser)

    def __call__(self, question: str) -> IntentGraph:
        return self.extract(question)

    def extract(self, question: str) -> IntentGraph:
        """The question's intent graph; a second pass where the first pinned tables (package docstring, step 3)."""
        graph, pins = self.extract_pass(question, ())
        if pins:
            graph, _ = self.extract_pass(question, pins)
        return graph

    def extract_pass(self, question: str, pins) -> tuple[IntentGraph, list[tuple[int, int]]]:
        """One pass with ``pins`` (table, token where its value starts or −1) fixed; returns the
        graph and the tables this pass pinned."""
        words = [(m.group(0), m.start(), m.end()) for m in WORD.finditer(question)]
        lower = [w.lower() for w, _, _ in words]
        used = [False] * len(words)
        values = self.reader.values(question, words, lower, used)
        mentions = self.reader.mentions(words, lower, used)
        self.matcher.match(mentions)
        return self.assembler.assemble(question, words, lower, mentions, values, pins)

    def ground(self, graph: IntentGraph, question: str) -> IntentGraph:
        """Lake evidence for a graph written elsewhere (an LLM's): :func:`raylake.intent.ground.ground`."""
        from raylake.intent.ground import ground

        return ground(graph, question, self)
