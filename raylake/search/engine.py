"""The engine behind ``raylake ask``: one loaded index, many questions.

``Engine(index_dir).ask(question)`` runs intent extraction, Algorithm 3 search
(:mod:`.beam`) and, when asked, fusion (:mod:`raylake.fuse`), and returns an
:class:`Answer` whose ``to_json()`` is the documented ``--json`` object.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from raylake.config import RaylakeContext
from raylake.errors import RaylakeError
from raylake.index.reader import LakeIndex
from raylake.intent.lexicon import Lexicon
from raylake.intent.model import IntentGraph
from raylake.intent.offline import OfflineExtractor
from raylake.search.beam import BeamSearch
from raylake.search.plan import Plan
from raylake.search.support import Support


@dataclass
class Answer:
    question: str
    intent: IntentGraph | None
    intent_source: str
    plan: Plan
    tables: list[dict]
    timings_ms: dict[str, float]
    reason: str | None = None
    fused: dict | None = None
    extra: dict = field(default_factory=dict)

    @property
    def paths(self) -> list[str]:
        return [t["table"] for t in self.tables]

    def to_json(self) -> dict:
        return {
            "question": self.question,
            "tables": self.tables,
            "plan": [s for s in self.extra.get("plan_json", [])],
            "score": round(self.plan.value, 6),
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
            "fused": self.fused,
            "intent": self.intent.to_json(evidence=True) if self.intent else None,
            "intent_source": self.intent_source,
            "reason": self.reason,
            **{k: v for k, v in self.extra.items() if k != "plan_json"},
        }


class Engine:
    """Load an index once; answer questions against it."""

    def __init__(self, index_dir: str, ctx: RaylakeContext | None = None, extractor=None, scorer=None, model_dir: str | None = None,
                 part_actors: bool = False):
        self.ctx = ctx or RaylakeContext.get_current()
        self.index = LakeIndex.load(index_dir)
        self.lexicon = Lexicon(self.index)
        self.offline = OfflineExtractor(self.index, self.lexicon)
        self.extractor = extractor  # an LLM extractor (falls back to offline), or None
        self.graph = self.index.graph
        if scorer is None and model_dir:  # a trained value network (raylake train) ranks the beam
            from raylake.learn.scorer import QScorer

            scorer = QScorer.load(model_dir)
        self.scorer = scorer
        self.region = None  # Stage-1 closures through one Ray actor per METIS part, when asked
        if part_actors:
            from raylake.graph.parts import PartitionedGraph

            self.region = PartitionedGraph.from_index(self.index)
        self.index.embedder.encode(["warm up"])  # load the model now, so per-question timings are the question's own

    def intent(self, question: str) -> tuple[IntentGraph, str]:
        if self.extractor is not None:
            g = self.extractor.extract(question)
            src = "llm" if any(t.evidence.get("source") == "llm" for t in g.trees) else "offline"
            return g, src
        return self.offline.extract(question), "offline"

    def ask(self, question: str, budget: int | None = None, beam: int | None = None,
            fuse: bool = False, out: str | None = None, preview: int = 0) -> Answer:
        """Answer one question. ``fuse`` (implied by ``out``) executes the plan; ``out`` writes
        the fused table (.parquet or .csv); ``preview`` keeps that many fused rows in the answer."""
        if not isinstance(question, str) or not question.strip():
            raise RaylakeError("empty question: ask something, e.g. raylake ask \"which clubs have the most players?\"")
        scfg = self.ctx.search
        if budget is not None or beam is not None:
            from dataclasses import replace

            scfg = replace(scfg, budget=budget or scfg.budget, beam=beam or scfg.beam)
        if scfg.budget < 1:
            raise RaylakeError(f"--budget must be at least 1, got {scfg.budget}")
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        graph, source = self.intent(question)
        timings["intent"] = (time.perf_counter() - t0) * 1e3
        t = time.perf_counter()
        support = Support(self.index, self.lexicon, graph, self.ctx.igms)
        timings["anchors"] = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        search = BeamSearch(self.graph, support, scfg, self.ctx.igms, self.scorer, self.region)
        plan = search.run()
        timings["search"] = (time.perf_counter() - t) * 1e3
        tables, plan_json = self._explain(plan, support)
        reason = None
        if not plan.steps:
            reason = "no table in the lake supports any part of the question (no anchor above the support threshold)"
        fused = None
        if (fuse or out) and plan_json:
            t = time.perf_counter()
            fused = self._fuse(plan_json, out, preview)
            timings["fuse"] = (time.perf_counter() - t) * 1e3
        timings["total"] = (time.perf_counter() - t0) * 1e3
        return Answer(question, graph, source, plan, tables, timings, reason, fused,
                      {"plan_json": plan_json, "evaluations": search.evaluations})

    def _fuse(self, plan_json: list[dict], out: str | None, preview: int) -> dict:
        from raylake.fuse import fuse

        result = fuse(plan_json, self.index.lake_root, max_rows=self.ctx.search.max_fused_rows)
        if out:
            result.write(out)
        summary = result.summary()
        if preview:
            summary["preview"] = result.table.slice(0, preview).to_pylist()
        return summary

    def _explain(self, plan: Plan, support: Support) -> tuple[list[dict], list[dict]]:
        paths = self.index.paths
        tables, steps = [], []
        for s in plan.steps:
            row = support.table_row([s.new]) / support.scale
            sup = [
                {"atom": at.kind, "text": at.text, "support": round(float(row[at.index]), 3)}
                for at in support.atoms
                if at.is_node and row[at.index] >= self.ctx.search.supported
            ]
            tables.append({"table": paths[s.new], "role": s.role, "supports": sup, "rows": int(self.index.tables["n_rows"][s.new])})
            step = {"op": s.op, "anchor": paths[s.anchor] if s.anchor is not None else None, "new": paths[s.new]}
            if s.keys:
                step["keys"] = {"anchor_column": s.keys[0], "new_column": s.keys[1]}
            if s.mapping:
                step["mapping"] = s.mapping
            step["edge_score"] = round(s.score, 4)
            step["gain"] = round(s.gain, 5)
            steps.append(step)
        return tables, steps
