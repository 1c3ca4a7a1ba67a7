"""Table identification for a question (EcoTable Sec. 3.1), offline.

The paper links a question to its tables in two stages: a coarse, cheap retrieval of
candidates, then a refinement that keeps the ones the question needs (an LLM decomposing the
question and aligning it with the candidates' schemas). Here:

1. **Coarse**: raylake's own retrieval. With the learned relevance model (the packaged one,
   loaded by :class:`raylake.search.Engine` by default), the question's candidates ranked by
   P(table needed | question) (:meth:`LakeRelevance.rank`, fed the intent extractor's and
   the beam's tables as its context when the model was trained with them); the best
   ``coarse_k``. Without a model, the beam search's plan at budget ``coarse_k``, in plan order.
2. **Refine** (offline judge): with probabilities, the coarse tables with
   p ≥ ``keep_ratio`` · max p, at most ``max_tables``: the threshold is relative to each
   question's own best probability, not absolute, because the packaged model's probabilities
   are not calibrated on a lake it was not trained on (on EcoTable's Ad lake the best
   candidate's p is often below 0.3, and the expected-F1 cut the engine uses,
   :func:`raylake.relevance.choose`, then keeps one table of the 3–6 a request needs).
   Without a model, the plan's tables that support at least one intent atom
   (ψ ≥ ``search.supported``); bridges the beam added only to join are left to the Steiner
   tree, which finds its own.

Refinement by an LLM (the paper's prompt) is not built in this slice: with or without an
endpoint configured, the offline refinement runs.

A question whose intent extraction takes longer than ``question_timeout_s`` (long analyst
briefs can be slow in the offline extractor) is ranked by the relevance model without the
extractor's context and marked ``timed_out``.
"""
from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from raylake.config import RaylakeContext


class QuestionTimeout(Exception):
    """Intent extraction ran past the per-question limit."""


@contextmanager
def time_limit(seconds: float | None):
    """Raise :class:`QuestionTimeout` in the body after ``seconds`` (a SIGALRM timer; in the main thread
    only — elsewhere, or without a limit, the body runs unbounded)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(signum, frame):
        raise QuestionTimeout()

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Identified:
    question: str
    coarse: list[tuple[int, float]] = field(default_factory=list)  # (table, probability or 1.0), best first
    tables: list[int] = field(default_factory=list)  # refined: the question's terminals, most likely first
    source: str = "relevance"  # "relevance" (the learned model) or "search" (the beam's plan)
    timed_out: bool = False
    seconds: float = 0.0


class TableIdentifier:
    """Coarse retrieval and offline refinement over one loaded :class:`raylake.search.Engine`."""

    def __init__(self, engine, ctx: RaylakeContext | None = None):
        self.engine = engine
        self.ctx = ctx or engine.ctx

    def identify(self, question: str) -> Identified:
        t0 = time.perf_counter()
        cfg = self.ctx.integrate
        out = Identified(question)
        try:
            with time_limit(cfg.question_timeout_s):
                prep = self.engine.prepare(question)
        except QuestionTimeout:
            prep, out.timed_out = None, True
        rel = self.engine.relevance
        if rel is not None:
            context = ((prep.support.intent_tables(), prep.beam_plan.tables if prep.beam_plan is not None else ())
                       if prep is not None else ((), ()))
            cand, p, _ = rel.rank(question, *context)
            order = np.argsort(-p, kind="stable")[: cfg.coarse_k]
            out.coarse = [(int(cand[i]), float(p[i])) for i in order]
            top = out.coarse[0][1] if out.coarse else 0.0
            out.tables = [t for t, pt in out.coarse if pt >= cfg.keep_ratio * top][: cfg.max_tables]
        elif prep is not None:
            out.source = "search"
            answer = self.engine.finish(prep, budget=cfg.coarse_k)
            out.coarse = [(s.new, 1.0) for s in answer.plan.steps]
            supported = {s.new for s, row in zip(answer.plan.steps, answer.tables) if row["supports"]}
            out.tables = [t for t, _ in out.coarse if t in supported][: cfg.max_tables]
        out.seconds = time.perf_counter() - t0
        return out
