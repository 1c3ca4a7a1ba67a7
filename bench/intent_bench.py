"""Intent-extraction benchmark: the offline (or LLM) extractor against reference graphs from gold SQL.

    python -m bench.intent_bench --index-dir IDX [--questions Q.jsonl] [--limit N] [--k 3]
        [--extractor offline|llm|gold-words] [--json]

For every tuning question, :func:`bench.intent_ref.reference_graph` derives the reference
intent graph from its gold SQL, in lake terms (entities = gold file sets, attributes =
(file, column) cells, values = normalised literals, joins = entity pairs). The extracted
graph's atoms are matched *through the lake objects they resolve to*, as their evidence
records them:

- entity (a tree): its ranked ``evidence.tables``; it matches a reference entity when one
  of its top ``k`` tables is among the entity's files (any shard counts);
- attribute: its ranked ``evidence.columns``; matches when one of the top ``k`` is a cell
  of the reference attribute (same file, same spelling-free column). Implied key
  attributes (``evidence.role == "key"``, added so a tree can be joined) are not scored:
  the reference leaves join keys to the joins;
- value: the normalised text equals a reference literal (``'Alabama'`` ~ ``alabama``,
  ``1000.0`` ~ ``1000``);
- join: its two trees resolve (top ``k`` tables each) to the two entities of a reference join.

Predicted and reference atoms are paired one-to-one (maximum bipartite matching); per atom
type, precision = matched / predicted and recall = matched / reference, micro-averaged over
questions, overall and per question type (number of gold files, union shards or not).
Latency is the wall time of ``extract`` after the index is loaded and the extractor warmed
up, with the share spent in the embedding model.

``--extractor llm`` scores the LLM extractor instead (the endpoint at ``RAYLAKE_LLM_BASE_URL``,
its graphs grounded in the lake by :func:`raylake.intent.ground.ground`, the offline
extractor answering where the LLM cannot: ``llm_fell_back`` counts those questions).
``--extractor gold-words`` grounds the reference's own structure written in the gold SQL's
words (:func:`gold_words_graph`): what an extractor that wrote exactly the SQL's schema would
score through that grounding — an upper bound that reads the gold SQL, for analysis.

Writes ``bench/results/intent.json`` (``--out``); with ``--json`` the last stdout line is
that JSON.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    # one thread before torch loads: on a shared machine, spinning BLAS threads cost more than they give
    os.environ.setdefault(_var, "1")

import argparse
import json
import platform
import sys
import time
from collections import defaultdict

import numpy as np

from bench.intent_ref import norm, norm_value, reference_graph, table_columns
from bench.spider_gold import headers, load_questions

KINDS = ("entity", "attribute", "value", "join")
DEFAULT_QUESTIONS = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "spider_lake", "questions.jsonl")


def _matching(n_pred: int, n_ref: int, ok) -> int:
    """Size of a maximum bipartite matching (Kuhn's augmenting paths; graphs are tiny)."""
    adj = [[r for r in range(n_ref) if ok(p, r)] for p in range(n_pred)]
    owner = [-1] * n_ref

    def augment(p, seen) -> bool:
        for r in adj[p]:
            if r in seen:
                continue
            seen.add(r)
            if owner[r] < 0 or augment(owner[r], seen):
                owner[r] = p
                return True
        return False

    return sum(augment(p, set()) for p in range(n_pred))


def predicted_atoms(graph, k: int) -> dict[str, list]:
    """The scored atoms of an extracted graph, each as the lake objects it resolves to."""
    tree_tables = {t.tree_id: set(t.evidence.get("tables", [])[:k]) for t in graph.trees}
    attrs, values = [], []
    for t in graph.trees:
        for a in t.attributes:
            if a.evidence.get("role") != "key":
                attrs.append({(c[0], norm(c[1])) for c in a.evidence.get("columns", [])[:k]})
            values.extend(norm_value(v) for v in a.values)
    joins = [(tree_tables[j.from_tree], tree_tables[j.to_tree]) for j in graph.joins]
    return {"entity": list(tree_tables.values()), "attribute": attrs, "value": values, "join": joins}


def score(graph, ref, k: int) -> dict[str, tuple[int, int, int]]:
    """``{kind: (matched, n_pred, n_ref)}`` for one question."""
    pred = predicted_atoms(graph, k)
    ents = ref.entities
    out = {}
    out["entity"] = (_matching(len(pred["entity"]), len(ents), lambda p, r: bool(pred["entity"][p] & ents[r])),
                     len(pred["entity"]), len(ents))
    ra = [a.cells for a in ref.attributes]
    out["attribute"] = (_matching(len(pred["attribute"]), len(ra), lambda p, r: bool(pred["attribute"][p] & ra[r])),
                        len(pred["attribute"]), len(ra))
    rv = [v.text for v in ref.values]
    out["value"] = (_matching(len(pred["value"]), len(rv), lambda p, r: pred["value"][p] == rv[r]), len(pred["value"]), len(rv))
    rj = [(ents[i], ents[j]) for i, j in ref.joins]

    def join_ok(p, r):
        (a, b), (x, y) = pred["join"][p], rj[r]
        return bool((a & x and b & y) or (a & y and b & x))

    out["join"] = (_matching(len(pred["join"]), len(rj), join_ok), len(pred["join"]), len(rj))
    return out


def prf(m: int, p: int, r: int) -> dict:
    prec = m / p if p else 0.0
    rec = m / r if r else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4), "matched": m, "predicted": p, "reference": r}


class _TimedEmbedder:
    """Wraps the index's embedder to time the share of extraction spent in the model."""

    def __init__(self, inner):
        self.inner, self.seconds = inner, 0.0

    def encode(self, *a, **kw):
        t = time.perf_counter()
        try:
            return self.inner.encode(*a, **kw)
        finally:
            self.seconds += time.perf_counter() - t

    def __getattr__(self, name):
        return getattr(self.inner, name)


def gold_words_graph(ref):
    """The reference's own structure in the gold SQL's words — its table names as entities,
    its columns (with their literals) as attributes, a key attribute per tree for its joins —
    as an LLM that wrote exactly the SQL's schema would; :func:`~raylake.intent.ground.ground`
    then has to find the lake's tables for those words. An upper bound for any extractor read
    through that grounding, not an extractor: it reads the gold SQL."""
    from raylake.intent.model import IntentGraph

    trees = []
    for i, name in enumerate(ref.entity_names):
        attrs = [{"attribute_id": f"a{i}_{j}", "name": a.column, "values": [v.text for v in ref.values if v.attribute == j]}
                 for j, a in enumerate(ref.attributes) if a.entity == i]
        attrs.append({"attribute_id": f"k{i}", "name": "id", "values": []})
        trees.append({"tree_id": f"t{i}", "entity": name.replace("_", " "), "attributes": attrs})
    joins = [{"from_tree": f"t{i}", "from_attribute": f"k{i}", "to_tree": f"t{j}", "to_attribute": f"k{j}"} for i, j in ref.joins]
    graph = IntentGraph.from_json({"trees": trees, "joins": joins})
    for t in graph.trees:
        t.attributes[-1].evidence["role"] = "key"  # added for the joins, not scored (as the offline extractor's)
    return graph


def db_column_hints(questions: list[dict]) -> dict[str, dict[str, set]]:
    """db_id → table → every column its questions' gold SQL names: tables of one database keep
    their columns across questions, and pooled they break the reference graphs' ties."""
    hints: dict[str, dict[str, set]] = defaultdict(dict)
    for q in questions:
        for t, cols in table_columns(q["gold_sql"]).items():
            hints[q["db_id"]].setdefault(t, set()).update(cols)
    return hints


def run(index_dir: str, questions_path: str, limit: int | None, k: int, extractor_name: str = "offline") -> dict:
    from raylake.index.reader import LakeIndex
    from raylake.intent.offline import OfflineExtractor

    questions = load_questions(questions_path)
    lake_dir = os.path.join(os.path.dirname(os.path.abspath(questions_path)), "lake")
    hints = db_column_hints(questions)
    if limit and limit < len(questions):
        # every (n/limit)-th question: the file is grouped by database, a prefix would cover few
        step = len(questions) / limit
        questions = [questions[int(i * step)] for i in range(limit)]
    t0 = time.perf_counter()
    index = LakeIndex.load(index_dir)
    timed = _TimedEmbedder(index.embedder)
    index.__dict__["embedder"] = timed  # cached_property slot: the extractor sees the timed one
    offline = OfflineExtractor(index)
    _ = index.values
    offline.extract("How many clubs have players older than 30 in 'Paris'?")  # warm-up: model, caches
    if extractor_name == "llm":
        from raylake.intent.llm import LLMExtractor
        from raylake.llm.client import LLMClient

        client = LLMClient()
        if not client.available:
            raise SystemExit("intent_bench: error: --extractor llm needs an endpoint: set RAYLAKE_LLM_BASE_URL (e.g. http://localhost:8000/v1)")
        extract = LLMExtractor(client, fallback=offline.extract, ground=offline.ground).extract
    else:
        extract = offline.extract
    load_s = time.perf_counter() - t0
    totals = {kind: [0, 0, 0] for kind in KINDS}
    by_type: dict[str, dict[str, list]] = defaultdict(lambda: {kind: [0, 0, 0] for kind in KINDS})
    n_type: dict[str, int] = defaultdict(int)
    lat, enc, skipped, fell_back = [], [], 0, 0
    for q in questions:
        ref = reference_graph(q["gold_sql"], headers(lake_dir, q["gold_tables"]), hints[q["db_id"]])
        if ref is None:
            skipped += 1
            continue
        timed.seconds = 0.0
        t = time.perf_counter()
        if extractor_name == "gold-words":
            graph = offline.ground(gold_words_graph(ref), q["question"])
        else:
            graph = extract(q["question"])
            if extractor_name == "llm" and not any(tree.evidence.get("source") == "llm" for tree in graph.trees):
                fell_back += 1
        lat.append(time.perf_counter() - t)
        enc.append(timed.seconds)
        qtype = f"files={q['n_gold_files']},shards={'yes' if q['has_union_shards'] else 'no'}"
        n_type[qtype] += 1
        for kind, (m, p, r) in score(graph, ref, k).items():
            for acc in (totals[kind], by_type[qtype][kind]):
                acc[0] += m
                acc[1] += p
                acc[2] += r
    lat_ms, enc_ms = np.asarray(lat) * 1e3, np.asarray(enc) * 1e3
    return {
        "benchmark": "intent",
        "index_dir": os.path.abspath(index_dir),
        "questions": len(lat),
        "skipped_unparsable": skipped,
        "k": k,
        "extractor": extractor_name,
        **({"llm_fell_back": fell_back} if extractor_name == "llm" else {}),
        "overall": {kind: prf(*totals[kind]) for kind in KINDS},
        "by_question_type": {
            qt: {"n": n_type[qt], **{kind: prf(*v[kind]) for kind in KINDS}} for qt, v in sorted(by_type.items())
        },
        "latency_ms": {
            "mean": round(float(lat_ms.mean()), 2), "p50": round(float(np.median(lat_ms)), 2),
            "p95": round(float(np.quantile(lat_ms, 0.95)), 2), "max": round(float(lat_ms.max()), 2),
            "embedding_mean": round(float(enc_ms.mean()), 2), "non_embedding_p50": round(float(np.median(lat_ms - enc_ms)), 2),
        },
        "load_s": round(load_s, 2),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)},
    }


def table(res: dict) -> str:
    lines = [f"extractor: {res['extractor']}" + (f" ({res['llm_fell_back']} questions fell back to the offline one)" if "llm_fell_back" in res else ""), "",
             "| atom | precision | recall | F1 | predicted | reference |", "|---|---|---|---|---|---|"]
    for kind in KINDS:
        r = res["overall"][kind]
        lines.append(f"| {kind} | {r['precision']:.3f} | {r['recall']:.3f} | **{r['f1']:.3f}** | {r['predicted']} | {r['reference']} |")
    lines += ["", "| question type | n | entity F1 | attribute F1 | value F1 | join F1 |", "|---|---|---|---|---|---|"]
    for qt, v in res["by_question_type"].items():
        lines.append(f"| {qt} | {v['n']} | " + " | ".join(f"{v[kind]['f1']:.3f}" for kind in KINDS) + " |")
    lt = res["latency_ms"]
    lines.append(f"\nlatency per question: mean {lt['mean']} ms, p50 {lt['p50']} ms, p95 {lt['p95']} ms "
                 f"(embedding model {lt['embedding_mean']} ms of the mean; the rest p50 {lt['non_embedding_p50']} ms); "
                 f"load {res['load_s']} s; 1-min load average {res['machine']['load_avg_1m']} on {res['machine']['cpus']} CPUs")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index-dir", required=True, help="a built index of the Spider lake")
    ap.add_argument("--questions", default=DEFAULT_QUESTIONS, help="questions.jsonl (its lake/ folder beside it)")
    ap.add_argument("--limit", type=int, default=None, help="N questions spread evenly over the file (it is grouped by database)")
    ap.add_argument("--k", type=int, default=3, help="lake objects an atom resolves to (default 3)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "intent.json"))
    ap.add_argument("--extractor", choices=("offline", "llm", "gold-words"), default="offline",
                    help="offline (default); llm: the LLM extractor at RAYLAKE_LLM_BASE_URL, grounded, the offline one "
                         "as its fallback; gold-words: the reference's structure in the gold SQL's words, grounded — "
                         "an upper bound, not an extractor")
    ap.add_argument("--json", action="store_true", help="print the result JSON as the last line")
    args = ap.parse_args(argv)
    for path, what in ((args.index_dir, "index directory"), (args.questions, "questions file")):
        if not os.path.exists(path):
            print(f"intent_bench: error: {what} {path} does not exist", file=sys.stderr)
            return 2
    res = run(args.index_dir, args.questions, args.limit, args.k, args.extractor)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(res, fh, indent=2)
    print(table(res))
    if args.json:
        print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
