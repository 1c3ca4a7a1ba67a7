"""The batch work of a replica, without Serve: queued ``/ask`` items, the shared part of a
batch (:func:`prepare_batch`), one request's search (:func:`answer_one`), and how an
exception becomes a status. Kept free of Ray Serve so tests and benchmarks drive it directly.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field

from raylake.errors import FusionError, IndexMissingError, RaylakeError
from raylake.serve.schema import AskRequest, error_body

logger = logging.getLogger(__name__)


# /ask's file formats: the fused table written by Fused.write (by extension), sent as a download.
FILE_TYPES = {"parquet": "application/vnd.apache.parquet", "csv": "text/csv; charset=utf-8"}


@dataclass
class Item:
    """One queued ``/ask`` request."""

    req: AskRequest
    deadline: float  # time.monotonic() after which nobody waits for the answer
    enqueued: float = field(default_factory=time.perf_counter)


@dataclass
class Outcome:
    status: int
    body: dict | bytes
    media_type: str = "application/json"
    headers: dict = field(default_factory=dict)
    stages_ms: dict = field(default_factory=dict)  # per-stage latency for the metrics


@functools.cache
def _engine_class():
    from raylake.search import Engine

    class BatchEngine(Engine):
        """An :class:`Engine` whose ``intent()`` first looks in the current batch's memo."""

        memo: dict = {}

        def intent(self, question: str):
            hit = self.memo.get(question)
            return hit if hit is not None else super().intent(question)

    return BatchEngine


def load_engine(index_dir: str, warm: bool = True):
    """An engine over the index's current build, with its lazy parts loaded and one question answered."""
    engine = _engine_class()(index_dir)
    engine.memo = {}
    if warm:
        idx = engine.index
        for name in ("columns_header", "columns_sample", "tables"):
            idx.faiss(name)
        _ = idx.values, idx.graph, idx.embedder, idx.emb_header, idx.emb_sample, idx.emb_table, idx.edges
        if idx.n_columns:
            # numba kernels compile and caches fill on the first question, not on a user's.
            names = [idx.columns["name"][c] for c in range(min(3, idx.n_columns))]
            engine.ask("which " + " and ".join(str(n) for n in names) + "?")
    return engine


def supports_fusion() -> bool:
    from raylake.search import Engine

    return "out" in inspect.signature(Engine.ask).parameters


@dataclass
class Prepared:
    """A request whose batch-shared work is done: its intent graph, ready for search."""

    item: Item
    intent: tuple  # (IntentGraph, source, intent_ms)
    started: float  # when its batch began (the end of its queueing)


def _expired(item: Item) -> Outcome | None:
    if item.deadline <= time.monotonic():
        return Outcome(503, error_body(503, "not answered within the request time limit (waited in the queue); retry later"))
    return None


def prepare_batch(engine, items: list[Item]) -> list[Prepared | Outcome]:
    """The shared part of a batch; never raises (one bad question fails alone)."""
    started = time.perf_counter()
    out: list[Prepared | Outcome | None] = [_expired(it) for it in items]
    # Phase 1: one intent graph per distinct question.
    intents: dict[str, tuple | Exception] = {}
    for it, o in zip(items, out):
        q = it.req.question
        if o is not None or q in intents:
            continue
        t = time.perf_counter()
        try:
            g, src = engine.intent(q)
            intents[q] = (g, src, (time.perf_counter() - t) * 1e3)
        except Exception as exc:  # mapped per item below
            intents[q] = exc
    # Phase 2: one embedding call for every node atom of the batch; Support then hits the cache.
    texts = [at.text.lower() for v in intents.values() if isinstance(v, tuple) for at in v[0].atoms() if at.is_node]
    if texts:
        try:
            engine.index.embedder.encode(texts)
        except Exception:  # only a cache warm-up: each question encodes again on its own
            logger.exception("batched atom embedding failed")
    for i, it in enumerate(items):
        if out[i] is None:
            hit = intents[it.req.question]
            out[i] = Prepared(it, hit, started) if isinstance(hit, tuple) else _failure(hit)
    return out


def answer_one(engine, prep: Prepared) -> Outcome:
    """Search and explain one prepared request (on the compute thread)."""
    expired = _expired(prep.item)
    if expired:
        return expired
    q = prep.item.req.question
    engine.memo[q] = prep.intent[:2]  # Engine.ask reuses the batch's intent graph
    try:
        return _answer(engine, prep.item.req, prep.intent, (prep.started - prep.item.enqueued) * 1e3)
    finally:
        engine.memo.pop(q, None)


def run_batch(engine, items: list[Item]) -> list[Outcome]:
    """A whole batch in one call (what a replica does, minus the per-request replies)."""
    return [p if isinstance(p, Outcome) else answer_one(engine, p) for p in prepare_batch(engine, items)]


def _answer(engine, req: AskRequest, hit: tuple, queue_ms: float) -> Outcome:
    kwargs = {}
    path = None
    try:
        if req.fuse or req.format != "json" or req.preview or req.answer:
            if not supports_fusion():
                return Outcome(501, error_body(501, "this raylake has no fusion yet; ask without fuse/preview/format/answer"))
            kwargs = {"fuse": True, "preview": req.preview, "answer": req.answer}
            if req.format in FILE_TYPES:
                fd, path = tempfile.mkstemp(suffix="." + req.format, prefix="raylake-serve-")
                os.close(fd)
                kwargs["out"] = path
        ans = engine.ask(req.question, budget=req.budget, beam=req.beam, **kwargs)
        t = ans.timings_ms
        # The memo made the engine's own intent stage ~0: charge the real one.
        t["total"] = t.get("total", 0.0) - t.get("intent", 0.0) + hit[2]
        t["intent"] = hit[2]
        stages = {k: v for k, v in t.items() if k != "total"} | {"engine": t["total"], "queue": queue_ms}
        headers = {"X-Raylake-Queue-Ms": f"{queue_ms:.1f}"}
        if req.format in FILE_TYPES:
            if not ans.paths:
                return Outcome(404, error_body(404, ans.reason or "no tables answer this question; nothing to fuse"), stages_ms=stages)
            with open(path, "rb") as fh:
                data = fh.read()
            headers |= {"Content-Disposition": f'attachment; filename="fused.{req.format}"', "X-Raylake-Tables": ",".join(ans.paths),
                        "X-Raylake-Rows": str(ans.fused["rows"])}
            return Outcome(200, data, FILE_TYPES[req.format], headers, stages)
        return Outcome(200, ans.to_json(), headers=headers, stages_ms=stages)
    except Exception as exc:
        return _failure(exc)
    finally:
        if path:
            try:
                os.unlink(path)
            except OSError:
                pass


def _failure(exc: Exception) -> Outcome:
    if isinstance(exc, IndexMissingError):
        return Outcome(404, error_body(404, str(exc)))
    if isinstance(exc, FusionError):
        return Outcome(422, error_body(422, f"the plan could not be fused: {exc}"))
    if isinstance(exc, RaylakeError):
        return Outcome(400, error_body(400, str(exc)))
    logger.exception("internal error while answering", exc_info=exc)
    return Outcome(500, error_body(500, f"internal error: {type(exc).__name__}: {exc}"))
