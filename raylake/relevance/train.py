"""Training the relevance model on a lake's index: ``raylake relevance train``.

Two sources of examples, usable alone or together:

- **questions with known tables** (a JSON-lines file of ``{question, gold_tables}``, paths
  relative to the lake root), as a team that has answered questions before has them;
- **pseudo-questions** generated from the lake itself (:mod:`.pseudo`, GRAFT Sec. 4), so a
  lake without any question still trains a model of its own.

Training runs in two steps: heads of the bi-encoder's top layers are fine-tuned on
(question, needed table) pairs — two cross-fitted on halves of the examples, early-stopped
on each other's half, then one on all of them for question time (:mod:`.fit`, see
:func:`fit`); then the completion classifier is fitted on every candidate of every
example, labelled by whether the example needs it, with the cross-fitted heads' scores, and
calibrated on probabilities cross-fitted over halves of the examples. The whole run is one Ray
task (``num_cpus`` of the cluster's CPUs), so ``--address`` runs it on a cluster worker next to
the index; data parallelism does not pay at this size (a few thousand pairs, minutes on two cores).
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from raylake.config import RelevanceConfig
from raylake.errors import RaylakeError
from raylake.graph.disjoint import DisjointSets
from raylake.questions import read_questions


def read_examples(path: str, index) -> list[tuple[str, list[int]]]:
    """``(question, table ids)`` of every line of a questions file (:mod:`raylake.questions`,
    ``gold_tables`` required); a one-line error for a bad line or a table the index lacks."""
    out = []
    for q in read_questions(path, need_gold=True):
        missing = [g for g in q.gold_tables if g not in index.path_id]
        if missing:
            raise RaylakeError(f"{path}:{q.line}: table {missing[0]!r} is not in the index (paths are relative to {index.lake_root})")
        out.append((q.question, [index.path_id[g] for g in q.gold_tables]))
    return out


def groups(examples: list[tuple[str, list]]) -> list[int]:
    """Group of each example: examples that share a needed table or their question, transitively (union-find).

    Questions about one database share its tables, so the groups stand in for databases
    that a questions file need not name: a head never scores a question whose tables it
    was trained on through another question. A table is any hashable key (a table id, or
    ``(lake, id)`` when examples come from several lakes), and one question asked of two
    lakes is one group."""
    sets = DisjointSets()
    for q, ts in examples:
        for t in ts:
            sets.union(("q", q), ("t", t))
    return [sets.find(("q", q)) for q, _ in examples]


def halves(examples: list[tuple[str, list]], seed: int) -> list[int]:
    """Half (0/1) of each example: whole groups (:func:`groups`) dealt to balance the counts."""
    import random

    g = groups(examples)
    sizes: dict = {}
    for x in g:
        sizes[x] = sizes.get(x, 0) + 1
    order = sorted(sizes, key=repr)
    random.Random(seed).shuffle(order)
    load, side = [0, 0], {}
    for x in sorted(order, key=lambda x: -sizes[x]):  # largest first, each to the lighter half
        side[x] = 0 if load[0] <= load[1] else 1
        load[side[x]] += sizes[x]
    return [side[x] for x in g]


@dataclass
class Source:
    """One lake's training examples: its index, ``(question, needed table ids)`` pairs and,
    optionally, ``context(question) -> (intent_tables, plan_tables)`` — what the engine's
    extractor and beam choose there (the classifier's ``intent``/``plan`` features)."""

    index: object
    examples: list[tuple[str, list[int]]]
    context: Callable | None = None


def fit(sources: list[Source], cfg: RelevanceConfig, progress=None):
    """Fit a fresh :class:`~raylake.relevance.model.RelevanceModel` on the examples of ``sources``.

    Three heads of the encoder's top layers are fine-tuned:

    1. **Cross-fitting.** The examples are split into two halves of whole groups
       (:func:`halves`); head *h* is fine-tuned on half *h* and scores the other half, so the
       classifier learns from scores of questions the scoring head never saw — the scores it
       will meet on new questions — not from a fine-tuned head's over-confident scores of its
       own training questions.
    2. **Early stopping.** The other half is also each cross-fit head's validation set: after
       every epoch its top-10 recall there is measured, training stops ``cfg.patience`` epochs
       after the best, and the best epoch's weights are kept (``cfg.epochs`` is only the cap).
       How long to fine-tune is thereby chosen on held-out groups of the training questions,
       never on the questions a model is scored on.
    3. **The question-time head** is fine-tuned on *every* example for the mean of the two
       best epoch counts; it alone is saved (twice the data of a cross-fit head, and the same
       number of passes over each example).

    Several sources (one questions file asked of a lake with meaningful file names and of
    one without, say) train one model: an example is scored against its own lake's tables,
    and the classifier learns from every lake's candidates, so it sees name evidence both
    present and absent. The model reads the ``intent``/``plan`` features only when every
    source gives a ``context``. Returns the model and a summary with the losses.
    """
    import torch

    from raylake.relevance.complete import Calibration
    from raylake.relevance.features import CandidateFeatures
    from raylake.relevance.fit import Example, cached_states, encode_cached, fit_encoder, top_k_shares
    from raylake.relevance.model import RelevanceModel, table_texts

    flat = [(k, q, ts) for k, src in enumerate(sources) for q, ts in src.examples]  # (source, question, tables)
    if not flat:
        raise RaylakeError("no training examples: give --questions, --pseudo N, or both")
    torch.manual_seed(cfg.seed)
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    model = RelevanceModel.fresh(None, cfg.max_seq_length, cfg.train_layers, heads=3)
    enc = model.encoder
    texts = [table_texts(src.index) for src in sources]
    half = halves([(q, [(k, t) for t in ts]) for k, q, ts in flat], cfg.seed) if len(flat) > 1 else [0]
    cache: dict = {}
    table_states = [cached_states(enc, tx, cache) for tx in texts]
    oos = [None] * len(flat)  # each example's scores over its lake's tables, from the head that did not train on it
    losses, val, best_epochs = [], [], []

    def question_emb(rows, head):
        return encode_cached(enc, cached_states(enc, [flat[i][1] for i in rows], cache), head)

    def run(h, mine, held, epochs):
        ex = [Example(q, [texts[k][t] for t in ts]) for k, q, ts in (flat[i] for i in mine)]
        per = [[i for i in held if flat[i][0] == k] for k in range(len(sources))]  # held-out rows by lake

        def step(i, n, loss):
            if i == 1 or i % 50 == 0:
                say(f"head {h}: step {i} (at most {n})  loss {loss:.3f}")

        def validate(head):
            r = float(np.concatenate([top_k_shares(encode_cached(enc, table_states[k], head), question_emb(rows, head),
                                                   [flat[i][2] for i in rows]) for k, rows in enumerate(per) if rows]).mean())
            say(f"head {h}: held-out recall@10 {r:.3f}")
            return r

        return fit_encoder(enc, ex, head=h, epochs=epochs, batch_size=cfg.batch_size, lr=cfg.lr, seed=cfg.seed + h,
                           progress=step, states=cache, validate=validate if held else None, patience=cfg.patience)

    def score(rows, head):
        for k in range(len(sources)):
            mine = [i for i in rows if flat[i][0] == k]
            if mine:
                emb_t = encode_cached(enc, table_states[k], head)
                for i, e in zip(mine, question_emb(mine, head)):
                    oos[i] = emb_t @ e

    for h in (0, 1):
        mine = [i for i, x in enumerate(half) if x == h]
        other = [i for i, x in enumerate(half) if x != h]
        if not mine:  # a single group: nothing to cross-fit; the full head's in-sample scores are all there is
            continue
        res = run(h, mine, other, cfg.epochs)
        losses.append(res.losses)
        val.append(res.val)
        best_epochs.append(res.epochs)
        score(other, h)
    n_full = max(1, round(sum(best_epochs) / len(best_epochs))) if best_epochs else 1
    losses.append(run(2, list(range(len(flat))), [], n_full).losses)
    enc.keep_heads([2])
    model.meta["heads"] = 1
    score([i for i, x in enumerate(oos) if x is None], 0)
    t_enc = time.perf_counter() - t0
    say(f"encoder fine-tuned in {t_enc:.0f} s (best epochs {best_epochs}, question-time head {n_full}); fitting the classifier")
    feats = [CandidateFeatures(src.index, src.index.graph) for src in sources]
    cands, Xs, ys, covered = [], [], [], 0
    for (k, q, ts), s in zip(flat, oos):
        intent, plan = sources[k].context(q) if sources[k].context else ((), ())
        cand, X = feats[k].candidates(q, s, intent, plan)
        cands.append(cand)
        Xs.append(X)
        gold = set(ts)
        ys.append(np.fromiter((t in gold for t in cand.tolist()), np.float32, len(cand)))
        covered += gold <= set(cand.tolist())
    X, y = np.concatenate(Xs), np.concatenate(ys)
    clf_losses = model.classifier.fit(X, y, epochs=cfg.classifier_epochs, seed=cfg.seed)
    say(f"classifier fitted on {len(y):,} candidates ({int(y.sum()):,} needed); loss {clf_losses[0]:.3f} -> {clf_losses[-1]:.3f}")
    p0, held = _cross_fitted_p(model, half, Xs, ys, cfg)
    if held:
        model.p_calibration = Calibration.fit(np.concatenate(p0), np.concatenate(ys))
    cmp_info = _fit_completion(model, sources, feats, flat, half, cands, Xs, p0, ys, cfg, say)
    model.meta["context"] = all(src.context is not None for src in sources)
    model.meta["training"] = {"examples": len(flat), "pairs": sum(len(ts) for _, _, ts in flat), "config": asdict(cfg),
                              "halves": [half.count(0), half.count(1)], "best_epochs": best_epochs, "epochs": n_full,
                              "held_out_recall10": val,
                              "candidate_recall": round(covered / len(flat), 4), "encoder_s": round(t_enc, 1),
                              "p_calibrated": held, **cmp_info,
                              "total_s": round(time.perf_counter() - t0, 1), "lakes": [src.index.lake_root for src in sources]}
    return model, {"encoder_loss": [x for l in losses for x in l], "head_loss": losses, "classifier_loss": clf_losses,
                   **model.meta["training"]}


def _cross_fitted_p(model, half, Xs, ys, cfg) -> tuple[list, bool]:
    """Each example's candidate probabilities from a candidate classifier fitted on the other half
    of the examples, as at question time, and whether there were two halves to cross-fit (a single
    group falls back to the fitted classifier's own, in-sample probabilities).

    They calibrate the candidate classifier (its probabilities are the stop's, :mod:`.select`, which
    assumes them calibrated: on held-out named-lake questions candidates given 0.01–0.1 were needed
    about twice as often as said) and are the extension classifier's first-stage probabilities."""
    from raylake.relevance.classifier import CompletionClassifier

    sides = [[i for i, x in enumerate(half) if x == h] for h in (0, 1)]
    p0: list = [None] * len(Xs)
    for h in (0, 1):
        mine, other = sides[h], sides[1 - h]
        if not mine or not other:
            continue
        clf = CompletionClassifier(Xs[0].shape[1], model.meta["hidden"])
        clf.fit(np.concatenate([Xs[i] for i in mine]), np.concatenate([ys[i] for i in mine]),
                epochs=cfg.classifier_epochs, seed=cfg.seed)
        for i in other:
            p0[i] = clf.predict(Xs[i])
    held = all(v is not None for v in p0)
    for i, v in enumerate(p0):
        if v is None:
            p0[i] = model.classifier.predict(Xs[i])
    return p0, held


def _fit_completion(model, sources, feats, flat, half, cands, Xs, p0, ys, cfg, say) -> dict:
    """Fit the extension classifier and its calibration (:mod:`.complete`) on the examples.

    Its states need first-stage probabilities of questions the first stage was not fitted on,
    as at question time: ``p0``, :func:`_cross_fitted_p`. Two extension classifiers are
    cross-fitted on the halves, each decodes the half it did not see, and the calibration is
    fitted on those picks; the saved extension classifier is fitted on all."""
    from raylake.relevance.classifier import CompletionClassifier
    from raylake.relevance.complete import Calibration, Completion, width

    comps = [Completion(src.index.graph, f.folder, f.shards) for src, f in zip(sources, feats)]
    sides = [[i for i, x in enumerate(half) if x == h] for h in (0, 1)]
    rows = [comps[k].states(cands[i], Xs[i], p0[i], ts) for i, (k, _, ts) in enumerate(flat)]

    def fitted(which):
        clf = CompletionClassifier(width(Xs[0].shape[1]), model.meta["hidden"])
        clf.fit(np.concatenate([rows[i][0] for i in which]), np.concatenate([rows[i][1] for i in which]),
                epochs=cfg.completion_epochs, seed=cfg.seed)
        return clf

    picks, needed = [], []
    for h in (0, 1):
        if not sides[h] or not sides[1 - h]:
            continue
        clf = fitted(sides[h])
        for i in sides[1 - h]:
            k, _, ts = flat[i]
            seq, q, _ = comps[k].decode(clf, cands[i], Xs[i], p0[i], cfg.calibration_budget)
            gold = set(ts)
            picks.extend(q[1:])
            needed.extend(t in gold for t in seq[1:])
    calibrated = len(picks) >= cfg.calibration_min_picks
    if calibrated:
        model.calibration = Calibration.fit(np.asarray(picks), np.asarray(needed, np.float64))
    final = fitted(range(len(flat)))
    model.completion.load_state_dict(final.state_dict())
    model.completion.eval()
    n_rows = sum(len(r[1]) for r in rows)
    say(f"extension classifier fitted on {n_rows:,} state rows; " + (f"calibrated on {len(picks):,} held-out picks" if calibrated
        else f"{len(picks):,} held-out picks are too few to calibrate it (< {cfg.calibration_min_picks:,})"))
    return {"completion_rows": n_rows, "calibration_picks": len(picks), "calibrated": calibrated}


def train(index_dirs: list[str], out: str, questions: list[str], cfg: RelevanceConfig, address: str | None = None,
          progress: bool = True) -> dict:
    """``raylake relevance train``: one model from every index in ``index_dirs``, each with the
    questions file at the same position of ``questions`` (``[]``: none) and/or
    ``cfg.pseudo_questions`` pseudo-questions of its own; the fitting is one Ray task."""
    from raylake.index.reader import LakeIndex

    if questions and len(questions) != len(index_dirs):
        raise RaylakeError(f"give one --questions file per --index-dir ({len(index_dirs)} indexes, {len(questions)} files)")
    if not questions and cfg.pseudo_questions <= 0:
        raise RaylakeError("nothing to train on: give --questions FILE, --pseudo N, or both")
    # every index and questions file read once, before Ray starts: a mistake fails fast, in one line
    lakes = []
    for d, q in zip(index_dirs, questions or [None] * len(index_dirs)):
        index = LakeIndex.load(d)
        lakes.append((os.path.abspath(d), index, read_examples(q, index) if q else []))
    from raylake.runtime import start_ray

    ray = start_ray(address, log_to_driver=True)  # the task's prints are the progress: worker logs reach this terminal
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    jobs = []
    for d, index, examples in lakes:
        if cfg.pseudo_questions > 0:
            from raylake.relevance.pseudo import pseudo_questions

            examples = examples + [(p.question, p.tables) for p in pseudo_questions(index, cfg.pseudo_questions, seed=cfg.seed)]
        jobs.append((d, examples, _contexts(d, [q for q, _ in examples], cpus, progress)))
    task = ray.remote(num_cpus=cpus)(_train_task)
    return ray.get(task.remote(jobs, os.path.abspath(out), cfg, cpus, progress))


def _contexts(index_dir: str, questions: list[str], workers: int, progress: bool) -> dict:
    """What the engine's extractor and beam choose for every training question (the classifier's
    context features), computed by ``workers`` Ray tasks in parallel: this, not the fine-tuning,
    is the part of training that grows with the number of questions and splits cleanly."""
    import ray

    task = ray.remote(num_cpus=1)(_context_chunk)
    distinct = list(dict.fromkeys(questions))
    size = max(1, -(-len(distinct) // (4 * workers)))
    refs = [task.remote(index_dir, distinct[s : s + size]) for s in range(0, len(distinct), size)]
    out: dict = {}
    done = 0
    while refs:
        ready, refs = ray.wait(refs, num_returns=1)
        part = ray.get(ready[0])
        out.update(part)
        done += len(part)
        if progress:
            print(f"[relevance] intent and beam of {done:,}/{len(distinct):,} training questions", flush=True)
    return out


def _context_chunk(index_dir: str, questions: list[str]) -> dict:
    import torch

    from raylake.search import Engine

    torch.set_num_threads(1)
    engine = Engine(index_dir, relevance="off")
    out = {}
    for q in questions:
        prep = engine.prepare(q, context=True)
        out[q] = (prep.support.intent_tables(), prep.beam_plan.tables)
    return out


def _train_task(lakes, out, cfg, threads, progress) -> dict:
    import torch

    from raylake.index.reader import LakeIndex

    torch.set_num_threads(threads)
    say = (lambda msg: print(f"[relevance] {msg}", flush=True)) if progress else None
    sources = [Source(LakeIndex.load(d), examples, lambda q, c=contexts: c.get(q, ((), ()))) for d, examples, contexts in lakes]
    model, summary = fit(sources, cfg, progress=say)
    n_pseudo = max(0, cfg.pseudo_questions) * len(lakes)
    counts = {"questions": summary["examples"] - n_pseudo, "pseudo_questions": n_pseudo}
    model.meta["training"].update(counts)
    model.save(out)
    return {**summary, **counts, "out": out, "fingerprint": model.fingerprint}
