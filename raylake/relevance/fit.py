"""Fine-tuning the bi-encoder (:mod:`.encoder`) on question → needed-tables examples.

An example is a question and the texts of every table it needs. Each (question, table)
pair is one row of a batch; the in-batch tables are the negatives, except the question's
own other needed tables (masked out: they are not wrong answers). The frozen layers'
outputs are computed once per distinct text before the first step.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np


@dataclass
class Example:
    question: str
    tables: list[str]  # texts of every table the question needs


@dataclass
class EncoderFit:
    losses: list[float]  # the loss of every step run
    val: list[float]  # the validation score after each epoch (empty without ``validate``)
    epochs: int  # epochs of the weights kept: the best validated epoch, or every epoch run


def fit_encoder(encoder, examples: list[Example], *, head: int = 0, epochs: int = 1, batch_size: int = 32, lr: float = 5e-5,
                scale: float = 20.0, seed: int = 0, progress=None, states: dict | None = None, validate=None,
                patience: int = 2) -> EncoderFit:
    """Train one head of ``encoder`` in place for at most ``epochs`` passes.

    ``states`` (optional) maps texts to their cached lower states, shared between heads.

    ``progress`` (optional) is called with ``(step, n_steps, loss)`` after each step.

    ``validate`` (optional) is called with the head after each epoch and returns a score,
    higher better (recall@10 of :func:`top_k_shares` on held-out questions): training stops after ``patience``
    epochs without a better score and the head keeps the weights of its best epoch (early
    stopping, so that the number of passes is chosen by held-out data, not swept on the
    questions a model is scored on).
    """
    import torch

    if not examples:
        raise ValueError("no training examples")
    torch.manual_seed(seed)
    rng = random.Random(seed)
    texts = sorted({e.question for e in examples} | {t for e in examples for t in e.tables})
    pos = {t: i for i, t in enumerate(texts)}
    states = cached_states(encoder, texts, states)
    pairs = [(pos[e.question], pos[t], frozenset(pos[u] for u in e.tables)) for e in examples for t in e.tables]
    per_epoch = (len(pairs) + batch_size - 1) // batch_size
    n_steps = epochs * per_epoch
    opt = torch.optim.AdamW(encoder.parameters(head), lr=lr, weight_decay=0.01)
    # linear warm-up over a tenth of the first epoch, whatever the cap on epochs
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, per_epoch // 10)))
    encoder.train_mode(True, head)
    losses: list[float] = []
    val: list[float] = []
    best, best_state, best_epoch = -np.inf, None, epochs
    try:
        for epoch in range(1, epochs + 1):
            rng.shuffle(pairs)
            for s in range(0, len(pairs), batch_size):
                batch = pairs[s : s + batch_size]
                tabs = sorted({p[1] for p in batch})
                col = {t: j for j, t in enumerate(tabs)}
                q = encoder.upper([states[p[0]] for p in batch], head)
                t = encoder.upper([states[i] for i in tabs], head)
                logits = scale * q @ t.T
                mask = torch.zeros_like(logits, dtype=torch.bool)
                for i, (_, ti, gold) in enumerate(batch):
                    for u in gold:
                        if u != ti and u in col:
                            mask[i, col[u]] = True
                logits = logits.masked_fill(mask, float("-inf"))
                target = torch.tensor([col[p[1]] for p in batch])
                loss = torch.nn.functional.cross_entropy(logits, target)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                losses.append(float(loss.detach()))
                if progress is not None:
                    progress(len(losses), n_steps, losses[-1])
            if validate is None:
                continue
            encoder.train_mode(False, head)
            val.append(float(validate(head)))
            encoder.train_mode(True, head)
            if val[-1] > best:
                best, best_epoch = val[-1], epoch
                best_state = [{k: v.detach().clone() for k, v in layer.state_dict().items()} for layer in encoder.heads[head]]
            elif epoch - best_epoch >= patience:
                break
    finally:
        encoder.train_mode(False, head)
    if best_state is not None:
        for layer, sd in zip(encoder.heads[head], best_state):
            layer.load_state_dict(sd)
    return EncoderFit(losses, val, best_epoch if validate is not None else epochs)


def top_k_shares(table_emb: np.ndarray, question_emb: np.ndarray, needed: list[list[int]], k: int = 10) -> np.ndarray:
    """Each question's share of its needed tables among its ``k`` best-scored tables: their mean is
    recall@k, the share of 1.0s Sufficiency@k.

    Shapes: ``table_emb`` ``(T, d)``, ``question_emb`` ``(Q, d)``, ``needed`` Q lists of table rows
    → ``(Q,)`` (questions needing no table left out).
    """
    if not len(needed):
        return np.zeros(0)
    s = question_emb @ table_emb.T
    top = np.argpartition(-s, min(k, s.shape[1] - 1), axis=1)[:, :k]
    return np.array([len(set(ts) & set(row.tolist())) / len(ts) for ts, row in zip(needed, top) if ts])


def cached_states(encoder, texts: list[str], cache: dict | None) -> list:
    """The frozen layers' states of ``texts``, computed once per text when ``cache`` is given."""
    if cache is None:
        return encoder.lower(texts)
    missing = [t for t in texts if t not in cache]
    if missing:
        cache.update(zip(missing, encoder.lower(missing)))
    return [cache[t] for t in texts]


def encode_cached(encoder, states: list, head: int, batch_size: int = 128) -> np.ndarray:
    """One head's embeddings ``(N, d)`` of texts whose lower states are cached."""
    import torch

    out = []
    with torch.no_grad():
        for s in range(0, len(states), batch_size):
            out.append(encoder.upper(states[s : s + batch_size], head).numpy())
    return np.concatenate(out) if out else np.zeros((0, encoder.dim), np.float32)
