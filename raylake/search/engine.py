"""The engine behind ``raylake ask``: one loaded index, many questions.

``Engine(index_dir).ask(question)`` runs intent extraction, Algorithm 3 search
(:mod:`.beam`) and, when asked, fusion (:mod:`raylake.fuse`), and returns an
:class:`Answer` whose ``to_json()`` is the documented ``--json`` object.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace

from raylake.config import RaylakeContext, SearchConfig
from raylake.errors import FusionError, RaylakeError
from raylake.fuse import Fused
from raylake.fuse.answer import QueryAnswer
from raylake.index.reader import LakeIndex
from raylake.intent.lexicon import Lexicon
from raylake.intent.model import IntentGraph, check_question
from raylake.intent.offline import OfflineExtractor
from raylake.search.beam import BeamSearch
from raylake.search.plan import Plan
from raylake.search.support import Support


@dataclass
class Prepared:
    """A question's budget-independent work (:meth:`Engine.prepare`)."""

    question: str
    graph: IntentGraph
    source: str
    support: Support
    search: SearchConfig
    beam_plan: Plan | None  # the beam's plan at the configured budget, when the relevance model reads it
    timings: dict[str, float]


@dataclass
class Answer:
    """A question's tables and plan; ``to_arrow()`` / ``to_polars()`` / ``to_pandas()`` fuse them
    (once, on first use) into one table, and ``sql`` is that fusion as one DuckDB statement."""

    question: str
    intent: IntentGraph | None
    intent_source: str
    plan: Plan
    tables: list[dict]
    timings_ms: dict[str, float]
    reason: str | None = None
    fused: dict | None = None  # the fusion's summary (``fuse=True``), as in ``--json``
    extra: dict = field(default_factory=dict)
    lake_root: str | None = field(default=None, repr=False)  # where fusion reads the tables (set by Engine.ask)
    max_fused_rows: int | None = field(default=None, repr=False)  # None: the current context's SearchConfig
    # the NL2SQL agent (raylake.fuse.nl2sql) that writes the answer query when an LLM is configured
    agent: object = field(default=None, repr=False, compare=False)
    # how the offline grammar finds a plan column for an attribute's words (raylake.fuse.plan_columns.ColumnMatch)
    match: object = field(default=None, repr=False, compare=False)
    _fusion: Fused | None = field(default=None, repr=False, compare=False)
    _query: QueryAnswer | None = field(default=None, repr=False, compare=False)

    @property
    def paths(self) -> list[str]:
        return [t["table"] for t in self.tables]

    @property
    def steps(self) -> list[dict]:
        """The plan as ``--json`` writes it: ``[{op, anchor, new, keys | mapping, ...}]``."""
        return self.extra.get("plan_json", [])

    def fusion(self) -> "Fused":
        """The plan executed (:func:`raylake.fuse.fuse`), run on first use and kept."""
        if self._fusion is None:
            if not self.steps:
                raise FusionError(f"nothing to fuse: {self.reason or 'the plan is empty'}")
            if self.lake_root is None:
                raise FusionError("this answer does not know its lake: get it from Engine.ask (raylake.open(index).ask)")
            from raylake.fuse import fuse

            rows = self.max_fused_rows or RaylakeContext.get_current().search.max_fused_rows
            self._fusion = fuse(self.steps, self.lake_root, max_rows=rows)
        return self._fusion

    def query(self, run: bool = True, max_rows: int | None = None) -> QueryAnswer:
        """The answer rows: a DuckDB query over the plan, run on first use and kept. With an
        :attr:`agent` (an LLM is configured) the NL2SQL agent writes it over the plan's tables
        (:mod:`raylake.fuse.nl2sql`; it runs its queries to refine them, so ``run=False`` runs
        them too); otherwise, or when the agent finds no answer, the offline grammar writes it
        over the fused plan from the intent graph (:func:`raylake.fuse.answer.answer_query`),
        and ``run=False`` writes it without executing it. ``QueryAnswer.source`` says which.
        Its SQL is :attr:`answer_sql`; :attr:`sql` is the fusion alone."""
        if self._query is None or (run and self._query.rows is None and self._query.reason is None):
            from raylake.fuse.answer import answer_query

            rows = max_rows or RaylakeContext.get_current().search.max_answer_rows
            tried = None
            if self.agent is not None and self.steps:
                tried = self.agent.answer(self.question, self.paths, self.steps, max_rows=rows)
                if tried.rows is not None:
                    self._query = tried
                    return tried
            self._query = answer_query(self.question, self.intent, self.fusion(), max_rows=rows, run=run, match=self.match)
            if tried is not None:  # the agent's failed turns stay visible beside the grammar's answer
                self._query.warnings.insert(0, f"{tried.reason}; the offline grammar answered instead")
                self._query.turns = tried.turns
        return self._query

    @property
    def answer_sql(self) -> str | None:
        """The answer's DuckDB query (:meth:`query`), or ``None`` where the grammar cannot express
        the question; not :attr:`sql`, the fusion."""
        return self.query(run=False).sql

    def to_arrow(self):
        """The fused table (``pyarrow.Table``): columns ``<part>.<column>`` and ``_provenance``."""
        return self.fusion().table

    def to_polars(self):
        import polars

        return polars.from_arrow(self.to_arrow())

    def to_pandas(self):
        try:
            import pandas  # noqa: F401 - pyarrow's to_pandas needs it, and raylake does not depend on it
        except ImportError:
            raise RaylakeError("to_pandas() needs pandas (pip install pandas); to_arrow() and to_polars() do not") from None
        return self.to_arrow().to_pandas()

    @property
    def sql(self) -> str:
        """The fusion as one DuckDB statement over the lake files (:attr:`raylake.fuse.Fused.sql`)."""
        return self.fusion().sql

    def __repr__(self) -> str:
        q = self.question if len(self.question) <= 60 else self.question[:57] + "..."
        shown = ", ".join(self.paths[:4]) + (f", ... ({len(self.paths)} tables)" if len(self.paths) > 4 else "")
        return f"Answer({q!r}, tables=[{shown}], score={self.plan.value:.3f})"

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(t['table'])}</td><td>{escape(t['role'])}</td><td>{t['rows']}</td>"
            f"<td>{escape(', '.join(s['text'] for s in t['supports']))}</td></tr>"
            for t in self.tables
        )
        html = f"<p><b>{escape(self.question)}</b> — score {self.plan.value:.3f}</p>"
        if not self.tables:
            return html + f"<p>{escape(self.reason or 'no tables')}</p>"
        html += f"<table><tr><th>table</th><th>role</th><th>rows</th><th>supports</th></tr>{rows}</table>"
        if self._fusion is not None:  # never fuse just to display: that reads the lake
            html += f"<p>fused: {self._fusion.table.num_rows} rows</p>" + _html_rows(self._fusion.table.slice(0, 5))
        return html

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
            # the answer (only once asked for): its query and rows, or null with the reason
            **({"sql": self._query.sql, "answer": self._query.to_json(), "answer_reason": self._query.reason,
                "answer_source": self._query.source} if self._query is not None else {}),
            **({"answer_turns": self._query.turns} if self._query is not None and self._query.turns else {}),
        }


class Engine:
    """Load an index once; answer questions against it."""

    def __init__(self, index_dir: str, ctx: RaylakeContext | None = None, extractor=None, scorer=None, model_dir: str | None = None,
                 part_actors: bool = False, relevance: str | None = "default", notice=None):
        self.ctx = ctx or RaylakeContext.get_current()
        self.index = LakeIndex.load(index_dir)
        self.lexicon = Lexicon(self.index)
        self.offline = OfflineExtractor(self.index, self.lexicon)
        self.extractor = extractor  # an LLM extractor (falls back to offline), or None
        self.nl2sql = None  # the NL2SQL agent (raylake.fuse.nl2sql.NL2SQLAgent) when an LLM is configured, or None
        self.graph = self.index.graph
        if scorer is None and model_dir:  # a trained value network (raylake train) ranks the beam
            from raylake.learn.scorer import QScorer

            scorer = QScorer.load(model_dir)
        self.scorer = scorer
        self.region = None  # Stage-1 closures through one Ray actor per METIS part, when asked
        if part_actors:
            from raylake.graph.parts import PartitionedGraph

            self.region = PartitionedGraph.from_index(self.index)
        self.relevance = _load_relevance(relevance, self.index, self.graph, notice)
        self.index.embedder.encode(["warm up"])  # load the model now, so per-question timings are the question's own

    def intent(self, question: str) -> tuple[IntentGraph, str]:
        check_question(question)
        if self.extractor is not None:
            g = self.extractor.extract(question)
            src = "llm" if any(t.evidence.get("source") == "llm" for t in g.trees) else "offline"
            return g, src
        return self.offline.extract(question), "offline"

    def ask(self, question: str, budget: int | None = None, beam: int | None = None,
            fuse: bool = False, out: str | None = None, preview: int = 0, answer: bool = False,
            run: bool = True) -> Answer:
        """Answer one question. ``fuse`` (implied by ``out`` and ``answer``) executes the plan; ``out``
        writes the fused table (.parquet or .csv); ``preview`` keeps that many fused rows in the
        answer; ``answer`` also writes (and, with ``run``, executes) the answer query (:meth:`Answer.query`)."""
        result = self.finish(self.prepare(question, beam), budget, fuse or answer, out, preview)
        self._bind(result)
        return self.answer(result, run) if answer else result

    def _bind(self, result: Answer) -> None:
        """What an answer needs of this engine to fuse and query its plan later."""
        result.lake_root, result.max_fused_rows, result.agent = self.index.lake_root, self.ctx.search.max_fused_rows, self.nl2sql
        result.match = self.plan_columns

    def plan_columns(self, words: str, paths: list[str]) -> list[tuple[str, str, float]]:
        """The columns of the lake tables ``paths`` for ``words``, best first, as ``(path, column,
        score)`` (:meth:`raylake.intent.offline.matching.Matcher.among`): how the answer query reads an attribute from the plan."""
        ids = [self.index.path_id[p] for p in paths if p in self.index.path_id]
        cols = self.index.columns
        return [(cols["path"][c], cols["name"][c], s) for c, s in self.offline.matcher.among(words, ids)]

    def answer(self, result: Answer, run: bool = True) -> Answer:
        """``result`` with its answer query written (and run): timed, kept in ``to_json()``."""
        if result.steps:
            t = time.perf_counter()
            result.query(run, self.ctx.search.max_answer_rows)
            result.timings_ms["answer"] = (time.perf_counter() - t) * 1e3
        return result

    def plan_over(self, question: str, tables: list[str], budget: int | None = None) -> Answer:
        """The plan over the given lake tables (best first), joined as the lake graph allows
        (:meth:`BeamSearch.connect`): the answer's SQL layer measured on chosen tables (``bench.answers``)."""
        prep = self.prepare(question, context=False)
        ids = [self.index.path_id[p] for p in tables if p in self.index.path_id]
        scfg = replace(prep.search, budget=max(budget or prep.search.budget, len(ids)))
        plan = BeamSearch(self.graph, prep.support, scfg, self.ctx.igms, self.scorer, self.region).connect(ids)
        tabs, plan_json = self._explain(plan, prep.support, {})
        result = Answer(question, prep.graph, prep.source, plan, tabs, dict(prep.timings), None, None,
                        {"plan_json": plan_json})
        self._bind(result)
        return result

    def use_llm(self, client) -> None:
        """Let ``client`` (:class:`raylake.llm.LLMClient`, an endpoint configured) extract intents and
        write answers, each falling back to its offline counterpart when the LLM cannot (``raylake ask``
        without ``--offline``)."""
        from raylake.fuse.nl2sql import NL2SQLAgent
        from raylake.intent.llm import LLMExtractor
        from raylake.tools.base import Toolbox

        self.extractor = LLMExtractor(client, fallback=self.offline.extract, ground=self.offline.ground)
        self.nl2sql = NL2SQLAgent(client, Toolbox(self.index, self.ctx), self.ctx.nl2sql)

    def prepare(self, question: str, beam: int | None = None, context: bool | None = None) -> "Prepared":
        """What does not depend on the budget: the intent graph, its support matrix and — when the
        relevance model reads it (``context``; by default when the loaded model was trained so) —
        the beam's plan at the configured budget."""
        check_question(question)
        scfg = self.ctx.search if beam is None else replace(self.ctx.search, beam=beam)
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        graph, source = self.intent(question)
        timings["intent"] = (time.perf_counter() - t0) * 1e3
        t = time.perf_counter()
        support = Support(self.index, self.lexicon, graph, self.ctx.igms)
        timings["anchors"] = (time.perf_counter() - t) * 1e3
        beam_plan = None
        if context is None:
            context = self.relevance is not None and self.relevance.uses_context
        if context:
            t = time.perf_counter()
            beam_plan = BeamSearch(self.graph, support, scfg, self.ctx.igms, self.scorer, self.region).run()
            timings["search"] = (time.perf_counter() - t) * 1e3
        return Prepared(question, graph, source, support, scfg, beam_plan, timings)

    def finish(self, prep: "Prepared", budget: int | None = None, fuse: bool = False, out: str | None = None,
               preview: int = 0) -> Answer:
        """The plan of at most ``budget`` tables for a prepared question, explained, and fused when asked."""
        scfg = prep.search if budget is None else replace(prep.search, budget=budget)
        if scfg.budget < 1:
            raise RaylakeError(f"--budget must be at least 1, got {scfg.budget}")
        timings = dict(prep.timings)
        t = time.perf_counter()
        search = BeamSearch(self.graph, prep.support, scfg, self.ctx.igms, self.scorer, self.region)
        probs: dict[int, float] = {}
        ranked: dict[int, float] = {}  # every candidate the relevance model scored
        chosen = []
        if self.relevance is not None and any(search.anchors.values()):
            # The learned completion chooses the tables and the graph joins them, best first (a chosen table
            # no join path reaches from the better ones is left out: fusion needs one join tree). The beam's
            # plan is the classifier's evidence (its `plan` feature), not the answer's core: put first, its
            # extra tables cost F1 at no gain in Sufficiency (docs/relevance.md, "Model-first plans"). A
            # question none of whose words or values the lake holds (no anchor) stays unanswered.
            plan_tables = ()
            if self.relevance.uses_context:
                plan_tables = (prep.beam_plan if prep.beam_plan is not None else search.run()).tables
            rcfg = self.ctx.relevance
            ranking = self.relevance.rank(prep.question, prep.support.intent_tables(), plan_tables)
            ranked = dict(zip(ranking.cand.tolist(), ranking.p.tolist()))
            chosen = self.relevance.pick(ranking, scfg.budget, rcfg.recall_weight, rcfg.completeness, rcfg.extend)
            probs = dict(chosen)
        if chosen:
            plan = search.connect([c for c, _ in chosen])
            timings["relevance"] = (time.perf_counter() - t) * 1e3
        else:
            plan = search.run()
            timings["search"] = timings.get("search", 0.0) + (time.perf_counter() - t) * 1e3
        tables, plan_json = self._explain(plan, prep.support, probs)
        rejected = self._rejected(plan, search.anchors, prep.support, ranked)
        reason = None
        if not plan.steps:
            reason = "no table in the lake supports any part of the question (no anchor above the support threshold)"
        fused, result = None, None
        if (fuse or out) and plan_json:
            t = time.perf_counter()
            fused, result = self._fuse(plan_json, out, preview)
            timings["fuse"] = (time.perf_counter() - t) * 1e3
        timings["total"] = sum(v for k, v in timings.items() if k != "total")
        return Answer(prep.question, prep.graph, prep.source, plan, tables, timings, reason, fused,
                      {"plan_json": plan_json, "evaluations": search.evaluations, "rejected": rejected}, _fusion=result)

    def _fuse(self, plan_json: list[dict], out: str | None, preview: int) -> tuple[dict, Fused]:
        from raylake.fuse import fuse

        result = fuse(plan_json, self.index.lake_root, max_rows=self.ctx.search.max_fused_rows)
        if out:
            result.write(out)
        summary = result.summary()
        if preview:
            summary["preview"] = result.table.slice(0, preview).to_pylist()
        return summary, result

    def _supports(self, support: Support, t: int) -> list[dict]:
        """The question's node atoms table ``t`` supports (ψ ≥ ``supported``), with their support."""
        row = support.table_row([t]) / support.scale
        return [{"atom": at.kind, "text": at.text, "support": round(float(row[at.index]), 3)}
                for at in support.atoms if at.is_node and row[at.index] >= self.ctx.search.supported]

    def _rejected(self, plan: Plan, anchors: dict[int, list[int]], support: Support, ranked: dict[int, float]) -> list[dict]:
        """The tables the search considered and left out of the plan: the anchors of the question's
        atoms (Alg. 3 Stage 1, V₀) and the relevance model's candidates, each with why it was in
        view (``anchor_of``: the atoms it anchors; ``relevance``: its probability) and its support;
        the most probable first (then the most supportive), at most ``search.max_rejected``."""
        limit = self.ctx.search.max_rejected
        if limit <= 0:
            return []
        taken = {s.new for s in plan.steps}
        text = {at.index: at.text for at in support.atoms}
        seen: dict[int, list[str]] = {}
        for j, ts in anchors.items():
            for t in ts:
                if t not in taken and text[j] not in seen.setdefault(t, []):
                    seen[t].append(text[j])
        for t in ranked:
            if t not in taken:
                seen.setdefault(t, [])
        out = []
        for t, atoms in seen.items():
            sup = self._supports(support, t)
            out.append({"table": self.index.paths[t], "rows": int(self.index.tables["n_rows"][t]), "anchor_of": atoms,
                        "supports": sup} | ({"relevance": round(ranked[t], 3)} if t in ranked else {}))
        out.sort(key=lambda r: (-r.get("relevance", -1.0), -max([s["support"] for s in r["supports"]], default=0.0), r["table"]))
        return out[:limit]

    def _explain(self, plan: Plan, support: Support, probs: dict[int, float]) -> tuple[list[dict], list[dict]]:
        paths = self.index.paths
        tables, steps = [], []
        for s in plan.steps:
            sup = self._supports(support, s.new)
            tables.append({"table": paths[s.new], "role": s.role, "supports": sup, "rows": int(self.index.tables["n_rows"][s.new])})
            if s.new in probs:
                tables[-1]["relevance"] = round(probs[s.new], 3)
            step = {"op": s.op, "anchor": paths[s.anchor] if s.anchor is not None else None, "new": paths[s.new]}
            if s.keys:
                step["keys"] = {"anchor_column": s.keys[0], "new_column": s.keys[1]}
            if s.mapping:
                step["mapping"] = s.mapping
            step["edge_score"] = round(s.score, 4)
            step["gain"] = round(s.gain, 5)
            steps.append(step)
        return tables, steps


def _load_relevance(which: str | None, index, graph, notice=None):
    """The learned relevance model bound to this index: ``'default'`` (the packaged model,
    when the package ships one), a model folder (``raylake relevance train``), or ``None``/
    ``'off'`` for the beam's plan alone."""
    from raylake.relevance import PACKAGED, RelevanceModel

    if which in (None, "off"):
        return None
    if which == "default":
        if not os.path.isfile(os.path.join(PACKAGED, "relevance.json")):
            return None
        which = PACKAGED
    return RelevanceModel.load(which).for_lake(index, graph, progress=notice)


def _html_rows(table) -> str:
    from html import escape

    head = "".join(f"<th>{escape(c)}</th>" for c in table.column_names)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row.values()) + "</tr>" for row in table.to_pylist())
    return f"<table><tr>{head}</tr>{body}</table>"
