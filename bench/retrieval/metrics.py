"""Set-retrieval metrics of GRAFT Sec. 5.2, per question and macro-averaged.

For gold set G and returned set R (file paths relative to the lake root):
Recall = |G∩R|/|G|, Precision = |G∩R|/|R| (0 when R is empty), F1 their harmonic mean (0
when both are 0), Sufficiency = 1[G ⊆ R]. Averages are macro (mean over questions);
latency percentiles use linear interpolation (numpy's default).
"""
from __future__ import annotations

import numpy as np


def score(gold, pred) -> dict[str, float]:
    """Recall, precision, F1 and sufficiency of one question."""
    g, p = set(gold), set(pred)
    if not g:
        raise ValueError("a question needs at least one gold table")
    hit = len(g & p)
    recall = hit / len(g)
    precision = hit / len(p) if p else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"recall": recall, "precision": precision, "f1": f1, "sufficiency": float(g <= p)}


def aggregate(golds: list, preds: list, latencies_ms: list[float]) -> dict[str, float]:
    """Macro averages over questions plus latency p50/p95 and ``n``."""
    if len(golds) != len(preds) or len(golds) != len(latencies_ms):
        raise ValueError("golds, preds and latencies must have one entry per question")
    n = len(golds)
    out = {"recall": 0.0, "precision": 0.0, "f1": 0.0, "sufficiency": 0.0}
    for g, p in zip(golds, preds):
        for k, v in score(g, p).items():
            out[k] += v
    out = {k: (v / n if n else 0.0) for k, v in out.items()}
    lat = np.asarray(latencies_ms, dtype=np.float64)
    out["latency_p50_ms"] = float(np.percentile(lat, 50)) if n else 0.0
    out["latency_p95_ms"] = float(np.percentile(lat, 95)) if n else 0.0
    out["n"] = n
    return out
