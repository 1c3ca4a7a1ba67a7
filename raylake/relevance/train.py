"""Training the relevance model on a lake's index: ``raylake relevance train``.

Two sources of examples, usable alone or together:

- **questions with known tables** (a JSON-lines file of ``{question, gold_tables}``, paths
  relative to the lake root), as a team that has answered questions before has them;
- **pseudo-questions** generated from the lake itself (:mod:`.pseudo`, GRAFT Sec. 4), so a
  lake without any question still trains a model of its own.

Training runs in two steps: two heads of the bi-encoder's top layers are fine-tuned on
(question, needed table) pairs of two halves of the examples (:mod:`.fit`, cross-fitted,
see :func:`fit`); then the completion classifier is fitted on every candidate of every
example, labelled by whether the example needs it, with the features the encoder gives. The whole run is one Ray task (``num_cpus`` of the cluster's
CPUs), so ``--address`` runs it on a cluster worker next to the index; data parallelism
does not pay at this size (a few thousand pairs, minutes on two cores).
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict

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


def groups(examples: list[tuple[str, list[int]]]) -> list[int]:
    """Group of each example: examples that share a needed table, transitively (union-find).

    Questions about one database share its tables, so the groups stand in for databases
    that a questions file need not name: a head never scores a question whose tables it
    was trained on through another question."""
    sets = DisjointSets()
    for _, ts in examples:
        for t in ts[1:]:
            sets.union(ts[0], t)
    return [sets.find(ts[0]) for _, ts in examples]


def halves(examples: list[tuple[str, list[int]]], seed: int) -> list[int]:
    """Half (0/1) of each example: whole groups (:func:`groups`) dealt to balance the counts."""
    import random

    g = groups(examples)
    sizes: dict[int, int] = {}
    for x in g:
        sizes[x] = sizes.get(x, 0) + 1
    order = sorted(sizes)
    random.Random(seed).shuffle(order)
    load, side = [0, 0], {}
    for x in sorted(order, key=lambda x: -sizes[x]):  # largest first, each to the lighter half
        side[x] = 0 if load[0] <= load[1] else 1
        load[side[x]] += sizes[x]
    return [side[x] for x in g]


def fit(index, examples: list[tuple[str, list[int]]], cfg: RelevanceConfig, context=None, progress=None):
    """Fit a fresh :class:`~raylake.relevance.model.RelevanceModel` on ``examples`` over ``index``.

    Cross-fitting: the examples are split into two halves of whole groups (:func:`halves`);
    head *h* of the encoder is fine-tuned on half *h* and scores the other half. The
    classifier then learns from scores of questions the scoring head never saw — the
    scores it will meet on new questions — not from a fine-tuned head's over-confident
    scores of its own training questions. At question time the two heads' cosines are
    averaged.

    ``context(question) -> (intent_tables, plan_tables)`` supplies what the engine's
    extractor and beam chose (the classifier's ``intent``/``plan`` features); without it
    the model is marked to ignore them. Returns the model and a summary with the losses.
    """
    import torch

    from raylake.relevance.features import CandidateFeatures
    from raylake.relevance.fit import Example, cached_states, encode_cached, fit_encoder
    from raylake.relevance.model import RelevanceModel, table_texts

    if not examples:
        raise RaylakeError("no training examples: give --questions, --pseudo N, or both")
    torch.manual_seed(cfg.seed)
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    model = RelevanceModel.fresh(None, cfg.max_seq_length, cfg.train_layers, heads=2)
    enc = model.encoder
    texts = table_texts(index)
    half = halves(examples, cfg.seed) if len(examples) > 1 else [0]
    cache: dict = {}
    emb_t = [None, None]
    oos = [None] * len(examples)  # each example's scores over all tables, from the head that did not train on it
    losses = []
    for h in (0, 1):
        mine = [i for i, x in enumerate(half) if x == h] or list(range(len(examples)))
        ex = [Example(examples[i][0], [texts[t] for t in examples[i][1]]) for i in mine]

        def step(i, n, loss, h=h):
            if i == 1 or i % 20 == 0 or i == n:
                say(f"head {h}: step {i}/{n}  loss {loss:.3f}")

        losses.append(fit_encoder(enc, ex, head=h, epochs=cfg.epochs, batch_size=cfg.batch_size, lr=cfg.lr,
                                  seed=cfg.seed + h, progress=step, states=cache))
        emb_t[h] = encode_cached(enc, cached_states(enc, texts, cache), h)
    for h in (0, 1):
        other = [i for i, x in enumerate(half) if x != h]
        if not other:
            continue
        q = encode_cached(enc, cached_states(enc, [examples[i][0] for i in other], cache), h)
        for i, e in zip(other, q):
            oos[i] = emb_t[h] @ e
    for i, x in enumerate(oos):  # one half was empty (a single group): in-sample scores are all there is
        if x is None:
            oos[i] = emb_t[0] @ encode_cached(enc, cached_states(enc, [examples[i][0]], cache), 0)[0]
    t_enc = time.perf_counter() - t0
    say(f"two heads fine-tuned in {t_enc:.0f} s; fitting the classifier")
    feats = CandidateFeatures(index, index.graph)
    Xs, ys, covered = [], [], 0
    for (q, ts), s in zip(examples, oos):
        intent, plan = context(q) if context else ((), ())
        cand, X = feats.candidates(q, s, intent, plan)
        gold = set(ts)
        Xs.append(X)
        ys.append(np.fromiter((t in gold for t in cand.tolist()), np.float32, len(cand)))
        covered += gold <= set(cand.tolist())
    X, y = np.concatenate(Xs), np.concatenate(ys)
    clf_losses = model.classifier.fit(X, y, epochs=cfg.classifier_epochs, seed=cfg.seed)
    say(f"classifier fitted on {len(y):,} candidates ({int(y.sum()):,} needed); loss {clf_losses[0]:.3f} -> {clf_losses[-1]:.3f}")
    model.meta["context"] = context is not None
    model.meta["training"] = {"examples": len(examples), "pairs": sum(len(ts) for _, ts in examples), "config": asdict(cfg),
                              "halves": [half.count(0), half.count(1)],
                              "candidate_recall": round(covered / len(examples), 4), "encoder_s": round(t_enc, 1),
                              "total_s": round(time.perf_counter() - t0, 1), "lake": index.lake_root}
    return model, {"encoder_loss": losses[0] + losses[1], "head_loss": losses, "classifier_loss": clf_losses,
                   **model.meta["training"]}


def train(index_dir: str, out: str, questions: str | None, cfg: RelevanceConfig, address: str | None = None,
          progress: bool = True) -> dict:
    """``raylake relevance train``: examples from ``questions`` and/or ``cfg.pseudo_questions``, one Ray task."""
    from raylake.index.reader import LakeIndex

    index = LakeIndex.load(index_dir)  # fail fast, before Ray starts, on a missing index or a bad questions file
    if questions:
        read_examples(questions, index)
    if not questions and cfg.pseudo_questions <= 0:
        raise RaylakeError("nothing to train on: give --questions FILE, --pseudo N, or both")
    from raylake.runtime import start_ray

    ray = start_ray(address, log_to_driver=True)  # the task's prints are the progress: worker logs reach this terminal
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    index_dir = os.path.abspath(index_dir)
    examples = read_examples(questions, index) if questions else []
    if cfg.pseudo_questions > 0:
        from raylake.relevance.pseudo import pseudo_questions

        examples += [(p.question, p.tables) for p in pseudo_questions(index, cfg.pseudo_questions, seed=cfg.seed)]
    contexts = _contexts(index_dir, [q for q, _ in examples], cpus, progress)
    task = ray.remote(num_cpus=cpus)(_train_task)
    summary = ray.get(task.remote(index_dir, os.path.abspath(out), examples, contexts, cfg, cpus, progress))
    summary["questions"] = len(examples) - (cfg.pseudo_questions if cfg.pseudo_questions > 0 else 0)
    return summary


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


def _train_task(index_dir, out, examples, contexts, cfg, threads, progress) -> dict:
    import torch

    from raylake.index.reader import LakeIndex

    torch.set_num_threads(threads)
    say = (lambda msg: print(f"[relevance] {msg}", flush=True)) if progress else None
    index = LakeIndex.load(index_dir)
    model, summary = fit(index, examples, cfg, context=lambda q: contexts.get(q, ((), ())), progress=say)
    n_pseudo = max(0, cfg.pseudo_questions)
    model.meta["training"].update({"questions": len(examples) - n_pseudo, "pseudo_questions": n_pseudo})
    model.save(out)
    return {**summary, "pseudo_questions": n_pseudo, "out": out, "fingerprint": model.fingerprint}
