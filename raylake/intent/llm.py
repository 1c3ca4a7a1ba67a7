"""Intent graphs from an LLM (GRAFT Sec. 3.1): the Appendix A prompt, validated, repaired once.

The LLM path is optional. Any :class:`LLMError` (endpoint down or slow, a reply that is
still not a valid intent graph after one repair round) is logged on one line and the
``fallback`` extractor (normally the offline one) answers instead, so a flaky endpoint
degrades quality, never availability.
"""
from __future__ import annotations

import logging
from functools import lru_cache
from importlib import resources
from typing import Callable

from raylake.errors import IntentError, LLMError
from raylake.intent.model import IntentGraph
from raylake.llm.client import LLMClient

logger = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def prompt_template() -> str:
    """The Appendix A prompt, with ``{query}`` as its only placeholder."""
    return resources.files("raylake.intent").joinpath("prompt.txt").read_text(encoding="utf-8")


def render_prompt(question: str) -> str:
    # str.replace, not str.format: the prompt's JSON braces are not placeholders.
    return prompt_template().replace("{query}", question.strip())


class LLMExtractor:
    """Question → :class:`IntentGraph` through ``client``; ``fallback`` answers when the LLM cannot.

    With ``fallback=None`` the :class:`LLMError` propagates. Trees of an LLM graph carry
    ``evidence={"source": "llm", "model": <model>}``; with ``ground`` (normally
    :meth:`OfflineExtractor.ground <raylake.intent.offline.OfflineExtractor.ground>`) the
    graph's trees and attributes also get the lake tables and columns they mean, which
    search anchors on and the intent benchmark scores.
    """

    def __init__(self, client: LLMClient, fallback: Callable[[str], IntentGraph] | None = None,
                 ground: Callable[[IntentGraph, str], IntentGraph] | None = None):
        self.client = client
        self.fallback = fallback
        self.ground = ground

    def extract(self, question: str) -> IntentGraph:
        if not question or not question.strip():
            raise IntentError("the question is empty")
        try:
            # Temperature 0: the same question must give the same graph (and hit the cache).
            graph = self.client.complete_json(render_prompt(question), IntentGraph.from_json)
            model = self.client.model
        except LLMError as exc:
            if self.fallback is None:
                raise
            name = getattr(self.fallback, "__qualname__", type(self.fallback).__name__)
            logger.warning("LLM intent extraction failed, fell back to %s: %s", name, exc)
            return self.fallback(question)
        for tree in graph.trees:
            tree.evidence = {"source": "llm", "model": model}
        return self.ground(graph, question) if self.ground is not None else graph
