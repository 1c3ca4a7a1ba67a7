"""Retrieval benchmark (issue 6): raylake and six baselines in one harness, one index.

``python -m bench.retrieval --lake DIR --index-dir DIR --questions FILE.jsonl --budgets 5 10 15
--methods all --out results.json`` runs every method over the same :class:`LakeIndex` and
embeddings, scores Recall / Precision / F1 / Sufficiency at each budget L (GRAFT Sec. 5.2)
and per-question latency, and writes the JSON, a markdown table and a plot.

One module per method; each is a :class:`~bench.retrieval.base.Method` with a
budget-independent ``prepare(question)`` and a per-budget ``select(prepared, L)``:

- :mod:`.dense`   — point-wise table-embedding similarity, top L (DTR-like).
- :mod:`.bm25`    — BM25 over each table's header and sample values.
- :mod:`.hybrid`  — BM25 + dense by reciprocal rank fusion (Pneuma-like, no LLM).
- :mod:`.greedy`  — sub-questions from the intent atoms, then GRAFT Eq. 3 expansion (MTR-like).
- :mod:`.jar`     — relevance + coverage + join/union compatibility MIP (JAR, union-extended).
- :mod:`.exact`   — exhaustive IGMS over the anchor region with a time cap (GRAFT-Exact).
- :mod:`.raylake_ask` — ``raylake.search.Engine.ask`` as shipped.

The harness reads only ``id``, ``question`` and ``gold_tables`` of a question;
:mod:`.breakdown` (analysis, not retrieval) also reads the question-type fields.
Questions run in a seeded order and results are checkpointed every 25 questions, so a run
stopped early holds a uniform random sample; :mod:`.merge` combines runs of different
methods into one results file and redraws the table and plot.
"""
