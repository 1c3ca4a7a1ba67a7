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


def fit_encoder(encoder, examples: list[Example], *, head: int = 0, epochs: int = 1, batch_size: int = 32, lr: float = 5e-5,
                scale: float = 20.0, seed: int = 0, progress=None, states: dict | None = None) -> list[float]:
    """Train one head of ``encoder`` in place; returns the loss of every step.

    ``states`` (optional) maps texts to their cached lower states, shared between heads.

    ``progress`` (optional) is called with ``(step, n_steps, loss)`` after each step.
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
    n_steps = epochs * ((len(pairs) + batch_size - 1) // batch_size)
    opt = torch.optim.AdamW(encoder.parameters(head), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, n_steps // 10)))  # 10 % warm-up
    encoder.train_mode(True, head)
    losses: list[float] = []
    try:
        for _ in range(epochs):
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
    finally:
        encoder.train_mode(False, head)
    return losses


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
