"""The completion classifier: P(the question needs table t | the candidate's features).

A two-layer perceptron over standardised features (:data:`.features.FEATURES`), trained
with binary cross-entropy on every candidate of every training question:

.. math::
    p_t = \\sigma\\big(w_3^\\top \\mathrm{ReLU}(W_2\\, \\mathrm{ReLU}(W_1 \\tilde x_t + b_1) + b_2) + b_3\\big),
    \\qquad \\tilde x_t = (x_t - \\mu) / \\sigma_x

A small network rather than boosted trees because its weights are plain tensors: they load
with ``weights_only`` safety, ship in a few kilobytes and run in microseconds per question.
The README's relevance section gives the measured comparison with gradient boosting.

Args:
    n_features: input width.
    hidden: width of both hidden layers.

Shapes:
    - input ``(N, n_features)`` float32 → output ``(N,)`` probabilities.
"""
from __future__ import annotations

import numpy as np
import torch


class CompletionClassifier(torch.nn.Module):
    def __init__(self, n_features: int, hidden: int = 64):
        super().__init__()
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("std", torch.ones(n_features))
        self.net = torch.nn.Sequential(
            torch.nn.Linear(n_features, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # A feature constant in training (e.g. the name words of a model trained on a neutral-name lake) taught
        # the network nothing: it reads as its training value, where dividing by a zero spread would saturate.
        z = torch.where(self.std > 1e-6, (x - self.mean) / self.std, torch.zeros_like(x))
        return self.net(z).squeeze(-1)

    def fit(self, X: np.ndarray, y: np.ndarray, *, epochs: int = 30, batch_size: int = 512, lr: float = 3e-3,
            weight_decay: float = 1e-4, seed: int = 0) -> list[float]:
        """Train in place on ``X`` ``(N, F)`` and labels ``y`` ``(N,)`` in {0, 1}; returns the loss per epoch."""
        if len(X) == 0 or len(X) != len(y):
            raise ValueError(f"need as many labels as rows and at least one row, got {len(X)} rows, {len(y)} labels")
        gen = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        Xt = torch.as_tensor(np.asarray(X, np.float32))
        yt = torch.as_tensor(np.asarray(y, np.float32))
        self.mean.copy_(Xt.mean(0))
        self.std.copy_(Xt.std(0).clamp_min(1e-6))
        opt = torch.optim.AdamW(self.net.parameters(), lr=lr, weight_decay=weight_decay)
        losses = []
        self.train()
        for _ in range(epochs):
            perm = torch.randperm(len(Xt), generator=gen)
            total = 0.0
            for s in range(0, len(Xt), batch_size):
                idx = perm[s : s + batch_size]
                loss = torch.nn.functional.binary_cross_entropy_with_logits(self(Xt[idx]), yt[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(idx)
            losses.append(total / len(Xt))
        self.eval()
        return losses

    @torch.no_grad()
    def predict(self, X: np.ndarray) -> np.ndarray:
        if len(X) == 0:
            return np.zeros(0, np.float32)
        return torch.sigmoid(self(torch.as_tensor(np.asarray(X, np.float32)))).numpy()
