"""Database-grouped cross-validation of the learned relevance model and its baselines.

``python -m bench.retrieval.cv --lake L --index-dir IDX --questions Q [--folds 5] --out R.json``

The tuning questions are split into ``--folds`` folds by database (``db_id``, read for the
split alone and never given to a model): no database has questions in two folds. For
each fold a relevance model is trained on the other folds' questions (``raylake.relevance.
train.fit``, the code ``raylake relevance train`` runs) and every method that learns is
scored on this fold's questions only:

- ``raylake`` — the engine with that model (``Engine.prepare`` + ``Engine.finish``: the
  learned completion's tables, joined by the graph; the beam's plan is the classifier's context);
- ``dense_ft`` — the same fine-tuned bi-encoder as a plain top-L retriever (DTR-style,
  trained on the same folds);

and, once over all questions (nothing of theirs is learned): ``raylake_rules`` (the engine
without a relevance model), ``dense`` (untuned MiniLM over each table's text, file and
folder names included when they mean something), ``bm25`` and ``hybrid`` (the harness's,
whose BM25 documents include the same name words). ``--pseudo N`` adds ``raylake_pseudo``:
a model trained on N pseudo-questions of the lake alone (no tuning question), scored on
all questions; ``--pseudo-cv`` adds the fold models trained on both sources.

Results follow :mod:`bench.retrieval.harness`'s layout (so :mod:`.report` renders them),
plus ``meta.folds`` (each question's fold) and ``meta.training`` (per fold).

``--resume`` continues a stopped run from its ``--out`` file: methods it finished are kept,
folds it scored are not scored again, and only the questions still to be scored are
prepared (the same folds, seed and budgets are required; ``meta.resumed`` records each
restart's commit and time).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import replace

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(os.path.dirname(HERE), "results")


def db_folds(db_ids: list[str], k: int, seed: int = 0) -> list[int]:
    """Fold of each question: databases shuffled with ``seed`` and dealt round-robin into ``k`` folds."""
    if k < 2:
        raise ValueError("need at least 2 folds")
    dbs = sorted(set(db_ids))
    if len(dbs) < k:
        raise ValueError(f"{len(dbs)} databases cannot fill {k} folds")
    random.Random(seed).shuffle(dbs)
    fold_of = {db: i % k for i, db in enumerate(dbs)}
    return [fold_of[d] for d in db_ids]


def question_dbs(path: str, questions: list[dict]) -> list[str]:
    """The ``db_id`` of each of ``questions``, from its line in the JSON-lines ``path`` (it only splits folds)."""
    from raylake.errors import RaylakeError

    with open(path, encoding="utf-8") as fh:
        db = {str(o["id"]): o.get("db_id") for o in map(json.loads, filter(str.strip, fh))}
    if any(db.get(q["id"]) is None for q in questions):
        raise RaylakeError("every question needs a db_id to split folds by database")
    return [db[q["id"]] for q in questions]


def fold_model(models_dir: str, k: int, method: str = "raylake") -> str:
    """Where a run with ``--models-dir`` saves fold ``k``'s model of ``method``."""
    return os.path.join(models_dir, f"{method}-fold{k}")


def saved_folds(models_dir: str, k: int) -> list[int]:
    """The folds among ``range(k)`` whose model a run saved under ``models_dir``."""
    return [f for f in range(k) if os.path.isfile(os.path.join(fold_model(models_dir, f), "relevance.json"))]


def held_out(questions_path: str, questions: list[dict], models_dir: str, k: int, need: int = 1) -> dict[int, list[dict]]:
    """Each fold whose model a run saved under ``models_dir`` → its held-out ``questions`` (the run's split,
    seed 0), for the tools that reuse a run's fold models; a one-line RaylakeError for a question without a
    db_id or fewer than ``need`` saved fold models."""
    from raylake.errors import RaylakeError

    fold = db_folds(question_dbs(questions_path, questions), k, 0)
    have = saved_folds(models_dir, k)
    if len(have) < need:
        raise RaylakeError(f"{models_dir} holds {len(have)} fold models (raylake-fold<k>), this needs {need} or more: "
                           "save them with python -m bench.retrieval.cv --models-dir")
    return {f: [q for q, g in zip(questions, fold) if g == f] for f in have}


def question_context(engine, rel, question: str) -> tuple[tuple, tuple]:
    """The extractor's and the beam's tables, for a model trained to read them (``uses_context``); else none."""
    if not rel.uses_context:
        return (), ()
    prep = engine.prepare(question, context=True)
    return prep.support.intent_tables(), prep.beam_plan.tables


def _write(path: str, obj: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1)
    os.replace(tmp, path)


def _prior(args, questions: list[dict], fold: list[int], budgets: list[int]) -> dict | None:
    """The stored run ``--resume`` continues, or None when ``--out`` does not exist yet."""
    from raylake.errors import RaylakeError

    if not os.path.isfile(args.out):
        return None
    with open(args.out, encoding="utf-8") as fh:
        prior = json.load(fh)
    meta = prior.get("meta", {})
    if meta.get("budgets") != budgets or meta.get("folds") != {q["id"]: f for q, f in zip(questions, fold)}:
        raise RaylakeError(f"{args.out} was run with other budgets, folds or questions; --resume needs the same "
                           f"--budgets, --folds, --seed and --questions (or a new --out)")
    return prior


def _kept(result: dict, name: str | None, budgets: list[int]) -> tuple[dict, dict]:
    """``name``'s stored predictions and latencies per budget (empty for a method not run yet)."""
    preds = {str(b): dict(result["predictions"].get(name, {}).get(str(b), {})) for b in budgets}
    lats = {str(b): dict(result["latencies_ms"].get(name, {}).get(str(b), {})) for b in budgets}
    return preds, lats


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval.cv", description=__doc__.splitlines()[0])
    p.add_argument("--lake", required=True)
    p.add_argument("--index-dir", required=True)
    p.add_argument("--questions", required=True, help="JSONL with id, question, gold_tables and db_id (db_id only splits folds)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--budgets", type=int, nargs="+", default=[5, 10, 15])
    p.add_argument("--baselines", nargs="*", default=["raylake_rules", "dense", "bm25", "hybrid"])
    p.add_argument("--pseudo", type=int, default=0, help="also train a model on N pseudo-questions alone (raylake_pseudo)")
    p.add_argument("--pseudo-cv", action="store_true", help="with --pseudo: also the fold models trained on questions + pseudo-questions")
    p.add_argument("--limit-folds", type=int, default=None, help="run only the first N folds (a quick look; not a result)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    p.add_argument("--report-dir", default=RESULTS)
    p.add_argument("--threads", type=int, default=2, help="torch threads (training and query encoding)")
    p.add_argument("--models-dir", default=None,
                   help="save each fold's model under DIR/<method>-fold<k>, and load it from there when present "
                        "(a rerun rescores without retraining; delete DIR after changing the training)")
    p.add_argument("--recall-weights", type=float, nargs="*", default=[],
                   help="also score the engine with these β² of the expected F-beta stop (raylake_b<β²>): the "
                        "operating points of the same fold models; the default β² = 1 is fixed in advance, not chosen here")
    p.add_argument("--completeness", type=float, nargs="*", default=[],
                   help="also score the engine with these weights γ of P(sufficient) in the stop (raylake_g<γ>; "
                        "0: the expected F-beta alone); the default γ = 1 is fixed in advance, not chosen here")
    p.add_argument("--compare-extend", action="store_true",
                   help="also score the engine with the other way of choosing tables (raylake_extend or raylake_by_p: "
                        "the greedy plan extension against the candidates by probability) from the same fold models")
    p.add_argument("--resume", action="store_true",
                   help="continue the run stored in --out: keep its finished methods and folds, score the rest")
    return p


def common(result: dict, questions_file: str) -> dict:
    """Every method's metrics on the questions all methods scored (a run stopped after some
    folds compares the learned methods with the baselines on the same questions)."""
    from bench.retrieval.metrics import aggregate

    with open(questions_file, encoding="utf-8") as fh:
        gold = {str(o["id"]): o["gold_tables"] for o in map(json.loads, filter(str.strip, fh))}
    preds = result["predictions"]
    out = {}
    for b in sorted({b for p in preds.values() for b in p}, key=int):
        ids = set.intersection(*(set(p[b]) for p in preds.values()))
        ids = sorted(ids)
        out[b] = {m: aggregate([gold[i] for i in ids], [p[b][i] for i in ids], [result["latencies_ms"][m][b][i] for i in ids])
                  for m, p in preds.items()}
    return out


def main(argv=None) -> int:
    if argv is None and len(sys.argv) == 4 and sys.argv[1] == "--common":  # python -m bench.retrieval.cv --common R.json Q.jsonl
        for b, ms in common(json.load(open(sys.argv[2])), sys.argv[3]).items():
            for m, x in ms.items():
                print(f"L={b:>2} {m:<10} n {x['n']:>4}  F1 {x['f1']:.3f}  Sufficiency {x['sufficiency']:.3f}  "
                      f"p50 {x['latency_p50_ms']:.0f} ms  p95 {x['latency_p95_ms']:.0f} ms")
        return 0
    args = parser().parse_args(argv)
    for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(k, v)
    from raylake.errors import RaylakeError

    try:
        return _main(args)
    except RaylakeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _other(cfg) -> str:
    """The method name of the engine choosing tables the other way than ``cfg`` (``--compare-extend``)."""
    return "raylake_by_p" if cfg.extend else "raylake_extend"


def _round_trip(model, path: str | None):
    """The model as a user loads it: saved (to ``path``, else a scratch folder) and read back, so
    that a figure measures the saved weights (float16 encoder, stored calibration), not ``fit``'s objects."""
    import tempfile

    from raylake.relevance.model import RelevanceModel

    if path:
        model.save(path)
        return RelevanceModel.load(path)
    with tempfile.TemporaryDirectory(prefix="raylake-cv-") as tmp:
        model.save(os.path.join(tmp, "model"))
        return RelevanceModel.load(os.path.join(tmp, "model"))


def _say(msg: str) -> None:
    print(f"[cv {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _main(args) -> int:
    import torch

    from bench.retrieval import harness, report
    from bench.retrieval.metrics import aggregate
    from raylake.config import RaylakeContext
    from raylake.relevance.model import RelevanceModel
    from raylake.relevance.train import Source, fit
    from raylake.relevance.pseudo import pseudo_questions
    from raylake.search import Engine

    torch.set_num_threads(max(1, args.threads))
    questions = harness.load_questions(args.questions, args.lake)
    db = dict(zip((q["id"] for q in questions), question_dbs(args.questions, questions)))
    fold = db_folds([db[q["id"]] for q in questions], args.folds, args.seed)
    cfg = RaylakeContext.get_current().relevance
    budgets = sorted(set(args.budgets))

    # non-learned methods over all questions, in the harness (bm25/hybrid) or here (dense, raylake_rules)
    harness_methods = [m for m in args.baselines if m in ("bm25", "hybrid")]
    prior = _prior(args, questions, fold, budgets) if args.resume else None
    if prior is not None:
        result = prior
        result["meta"].setdefault("resumed", []).append({"git_commit": harness.git_commit(),
                                                         "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    else:
        result = harness.run(args.index_dir, questions, budgets, harness_methods, progress=True,
                             meta_extra={"questions_file": os.path.abspath(args.questions)})
        result["meta"]["folds"] = {q["id"]: f for q, f in zip(questions, fold)}
        result["meta"]["training"] = {}
        result["meta"]["relevance_config"] = cfg.__dict__.copy()
    engine = Engine(args.index_dir, relevance=None)
    index = engine.index
    gold = {q["id"]: q["gold_tables"] for q in questions}

    def record(name, preds, lats, extra=None):
        ids = [q["id"] for q in questions if q["id"] in preds[str(budgets[0])]]
        result["methods"][name] = {"L": {str(b): aggregate([gold[i] for i in ids], [preds[str(b)][i] for i in ids],
                                                          [lats[str(b)][i] for i in ids]) for b in budgets}}
        result["predictions"][name] = preds
        result["latencies_ms"][name] = lats
        result["meta"]["method"][name] = {"n_questions": len(ids), **(extra or {})}
        _write(args.out, result)
        _say(f"{name}: " + "  ".join(f"L={b} F1 {result['methods'][name]['L'][str(b)]['f1']:.3f} "
                                       f"Suff {result['methods'][name]['L'][str(b)]['sufficiency']:.3f}" for b in budgets))

    # one prepare per question: intent graph, support, the beam's plan (the classifier's context)
    folds = range(args.folds if args.limit_folds is None else min(args.limit_folds, args.folds))
    fold_names = ["raylake", "dense_ft"] + [f"raylake_b{w:g}" for w in args.recall_weights if w != cfg.recall_weight] \
        + [f"raylake_g{g:g}" for g in args.completeness if g != cfg.completeness] \
        + ([_other(cfg)] if args.compare_extend else [])
    done = {f for f in folds if all(all(q["id"] in result["predictions"].get(n, {}).get(str(budgets[0]), {})
                                        for q, g in zip(questions, fold) if g == f) for n in fold_names)}
    todo_folds = [f for f in folds if f not in done]
    saved_all = args.models_dir and set(todo_folds) <= set(saved_folds(args.models_dir, args.folds))
    every = "raylake_rules" in args.baselines and "raylake_rules" not in result["methods"] or not saved_all or args.pseudo
    to_prepare = questions if every else [q for q, g in zip(questions, fold) if g in todo_folds]
    if done:
        _say(f"resuming: folds {sorted(done)} already scored")
    _say(f"preparing {len(to_prepare)} questions (intent, support, beam)")
    preps, prep_ms = {}, {}
    for k, q in enumerate(to_prepare):
        index.embedder.clear_cache()
        t = time.perf_counter()
        preps[q["id"]] = engine.prepare(q["question"], context=True)
        prep_ms[q["id"]] = (time.perf_counter() - t) * 1e3
        if (k + 1) % 200 == 0:
            _say(f"prepared {k + 1}/{len(to_prepare)}")
    by_text = {q["question"]: preps[q["id"]] for q in to_prepare}

    def context(question):
        p = by_text.get(question)
        return (p.support.intent_tables(), p.beam_plan.tables) if p is not None else ((), ())

    if "raylake_rules" in args.baselines and "raylake_rules" not in result["methods"]:
        preds, lats = {str(b): {} for b in budgets}, {str(b): {} for b in budgets}
        for q in questions:
            p = replace(preps[q["id"]], beam_plan=None)
            t0 = (p.timings.get("intent", 0.0) + p.timings.get("anchors", 0.0))
            for b in budgets:
                t = time.perf_counter()
                ans = engine.finish(p, b)
                preds[str(b)][q["id"]] = ans.paths
                lats[str(b)][q["id"]] = round(t0 + (time.perf_counter() - t) * 1e3, 3)
        record("raylake_rules", preds, lats, {"params": "Engine(relevance=None): the beam's plan alone"})

    if "dense" in args.baselines and "dense" not in result["methods"]:
        from raylake.relevance.encoder import BiEncoder
        from raylake.relevance.model import table_texts

        base = BiEncoder(None, cfg.max_seq_length, cfg.train_layers, heads=1)
        emb = base.encode(table_texts(index))[0]
        preds, lats = {str(b): {} for b in budgets}, {str(b): {} for b in budgets}
        for q in questions:
            t = time.perf_counter()
            s = emb @ base.encode([q["question"]])[0, 0]
            order = np.argsort(-s, kind="stable")
            ms = (time.perf_counter() - t) * 1e3
            for b in budgets:
                preds[str(b)][q["id"]] = [index.paths[int(i)] for i in order[:b]]
                lats[str(b)][q["id"]] = round(ms, 3)
        record("dense", preds, lats, {"params": "untuned MiniLM over name words + headers + first rows (128 tokens)"})

    # other operating points of the same fold models: (name, the relevance config that scores it)
    points = [(f"raylake_b{w:g}", replace(cfg, recall_weight=w)) for w in dict.fromkeys(args.recall_weights)
              if w != cfg.recall_weight]
    points += [(f"raylake_g{g:g}", replace(cfg, completeness=g)) for g in dict.fromkeys(args.completeness)
               if g != cfg.completeness]
    if args.compare_extend:
        points.append((_other(cfg), replace(cfg, extend=not cfg.extend)))
    by_weight = {name: (rc, *_kept(result, name, budgets)) for name, rc in points}

    ctx0 = engine.ctx

    def evaluate(name_rl, name_ft, model, qs, train_info):
        engine.relevance = model.for_lake(index, engine.graph, cache=False)
        for q in qs:
            index.embedder.clear_cache()
            p = preps[q["id"]]
            for rc, preds_w, lats_w in [(None, preds_rl, lats_rl)] + (list(by_weight.values()) if name_ft else []):
                engine.ctx = ctx0 if rc is None else replace(ctx0, relevance=rc)
                for b in budgets:
                    t = time.perf_counter()
                    ans = engine.finish(p, b)
                    preds_w[str(b)][q["id"]] = ans.paths
                    lats_w[str(b)][q["id"]] = round(prep_ms[q["id"]] + (time.perf_counter() - t) * 1e3, 3)
            engine.ctx = ctx0
            if name_ft:
                t = time.perf_counter()
                order = np.argsort(-engine.relevance.scores(q["question"]), kind="stable")
                ms = (time.perf_counter() - t) * 1e3
                for b in budgets:
                    preds_ft[str(b)][q["id"]] = [index.paths[int(i)] for i in order[:b]]
                    lats_ft[str(b)][q["id"]] = round(ms, 3)
        engine.relevance = None
        result["meta"]["training"].setdefault(name_rl, []).append(train_info)

    pseudo = []
    if args.pseudo > 0:
        pseudo = [(p.question, p.tables) for p in pseudo_questions(index, args.pseudo, seed=cfg.seed)]
        _say(f"training on {len(pseudo)} pseudo-questions alone")
        model, info = fit([Source(index, pseudo)], cfg, progress=_say)
        model = _round_trip(model, None)
        preds_rl, lats_rl = {str(b): {} for b in budgets}, {str(b): {} for b in budgets}
        evaluate("raylake_pseudo", None, model, questions, {k: v for k, v in info.items() if not k.endswith("_loss")})
        record("raylake_pseudo", preds_rl, lats_rl, {"params": f"trained on {len(pseudo)} pseudo-questions of the lake, no tuning question"})

    variants = [("raylake", "dense_ft", [])]
    if pseudo and args.pseudo_cv:
        variants.append(("raylake_both", None, pseudo))
    for name_rl, name_ft, extra in variants:
        preds_rl, lats_rl = _kept(result, name_rl, budgets)
        preds_ft, lats_ft = _kept(result, name_ft, budgets)
        for f in folds:
            if name_rl == "raylake" and f in done:
                continue
            train_q = [q for q, g in zip(questions, fold) if g != f]
            test_q = [q for q, g in zip(questions, fold) if g == f]
            assert not {db[q["id"]] for q in train_q} & {db[q["id"]] for q in test_q}
            examples = [(q["question"], [index.path_id[t] for t in q["gold_tables"]]) for q in train_q] + extra
            saved = fold_model(args.models_dir, f, name_rl) if args.models_dir else None
            if saved and os.path.isfile(os.path.join(saved, "relevance.json")):
                _say(f"{name_rl} fold {f}: loading {saved}, scoring {len(test_q)}")
                model = RelevanceModel.load(saved)
                info = dict(model.meta.get("training", {}), loaded_from=saved)
            else:
                _say(f"{name_rl} fold {f}: training on {len(train_q)} questions (+{len(extra)} pseudo), scoring {len(test_q)}")
                model, info = fit([Source(index, examples, context)], cfg, progress=_say)
                info = {k: v for k, v in info.items() if not k.endswith("_loss")}
                model = _round_trip(model, saved)
            info |= {"fold": f, "n_test": len(test_q)}
            evaluate(name_rl, name_ft, model, test_q, info)
            record(name_rl, preds_rl, lats_rl, {"params": "Engine with the fold's relevance model", "folds_done": f + 1})
            if name_ft:
                for name, (rc, preds_w, lats_w) in by_weight.items():
                    record(name, preds_w, lats_w,
                           {"params": f"the fold models, {'the plan extension' if rc.extend else 'candidates by p'}, "
                                      f"stop at beta^2 = {rc.recall_weight:g}, gamma = {rc.completeness:g}",
                            "folds_done": f + 1})
            if name_ft:
                record(name_ft, preds_ft, lats_ft, {"params": "the fold's fine-tuned bi-encoder, top L", "folds_done": f + 1})
    result["meta"]["wall_s"] = round(time.time() - result["meta"]["started_unix"], 1)
    _write(args.out, result)
    stem = os.path.splitext(os.path.basename(args.out))[0]
    md, png = report.write(result, args.report_dir, stem)
    print(report.markdown(result))
    print(f"wrote {args.out}, {md}, {png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
