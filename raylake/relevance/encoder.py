"""A question–table bi-encoder: the index's MiniLM with its top layers fine-tuned.

Both towers share one sentence-transformers model. Score and loss (in-batch negatives,
the multiple-negatives ranking loss of Henderson et al. 2017, as DTR-style retrievers use):

.. math::
    s(q, t) = \\cos(f(q), f(t)), \\qquad
    \\mathcal{L} = -\\frac{1}{B}\\sum_{i=1}^{B} \\log
      \\frac{\\exp(\\gamma\\, s(q_i, t_i))}{\\sum_{j:\\, t_j \\notin G(q_i) \\cup \\{t_i\\}} \\exp(\\gamma\\, s(q_i, t_j)) + \\exp(\\gamma\\, s(q_i, t_i))}

where :math:`f` is mean-pooled, L2-normalised MiniLM, :math:`G(q)` the question's other
needed tables (never counted as negatives of it) and :math:`\\gamma` the scale (20, as
sentence-transformers uses).

Only the top ``train_layers`` transformer layers are trained. The frozen lower layers'
outputs are computed once per distinct text and cached, so a training step runs and
back-propagates through the top layers alone (about 3× faster per step on a CPU for 2
of 6 layers), and the fine-tuned weights that must be stored are those layers only (about
7 MB in float16 for two MiniLM layers), small enough to ship with the package. Measured
choice of ``train_layers``: the README's relevance section.

The encoder holds ``heads`` independent copies of the top layers over one frozen base.
Training fits each head on its own share of the examples (:mod:`.train` cross-fits two,
so that the classifier learns from scores of questions a head has not seen, then fits a
third on every example and keeps that one alone for question time).

Args:
    model_path: a local sentence-transformers folder (``None``: the packaged MiniLM).
    max_seq_length: tokens kept per text (table texts are cut there).
    train_layers: how many of the top layers are fine-tuned.
    heads: independent copies of the trained layers.

Shapes:
    - :meth:`encode`: ``texts`` of length N → ``(heads, N, d)`` float32, unit rows.
    - :meth:`lower`: N texts → N tensors ``(n_tokens_i, d)`` (the frozen layers' output).
"""
from __future__ import annotations

import numpy as np


class BiEncoder:
    def __init__(self, model_path: str | None = None, max_seq_length: int = 128, train_layers: int = 2, heads: int = 1):
        from sentence_transformers import SentenceTransformer

        from raylake.config import resolve_model_path

        import logging

        logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
        self.model = SentenceTransformer(resolve_model_path(model_path), device="cpu")
        self.model.max_seq_length = max_seq_length
        self.bert = self.model[0].auto_model
        layers = self.bert.encoder.layer
        if not 1 <= train_layers <= len(layers):
            raise ValueError(f"train_layers must be in 1..{len(layers)}, got {train_layers}")
        import copy

        self.train_layers = train_layers
        self.frozen = list(layers[: len(layers) - train_layers])
        top = list(layers[len(layers) - train_layers :])
        self.heads = [top] + [[copy.deepcopy(layer) for layer in top] for _ in range(heads - 1)]
        for p in self.bert.parameters():
            p.requires_grad_(False)
        for head in self.heads[1:]:
            for layer in head:
                layer.eval()
                for p in layer.parameters():
                    p.requires_grad_(False)
        self.bert.eval()

    @property
    def dim(self) -> int:
        return int(self.bert.config.hidden_size)

    # ------------------------------------------------------------------ inference

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """``(heads, N, d)``: every head's embedding of every text (the frozen layers run once)."""
        import torch

        if not texts:
            return np.zeros((len(self.heads), 0, self.dim), np.float32)
        states = self.lower(list(texts), batch_size)
        out = np.zeros((len(self.heads), len(texts), self.dim), np.float32)
        order = sorted(range(len(texts)), key=lambda i: states[i].shape[0])
        with torch.no_grad():
            for s in range(0, len(order), batch_size):
                idx = order[s : s + batch_size]
                for h in range(len(self.heads)):
                    out[h, idx] = self.upper([states[i] for i in idx], h).numpy()
        return out

    # ------------------------------------------------------------------ training pieces

    def parameters(self, head: int = 0):
        return [p for layer in self.heads[head] for p in layer.parameters()]

    def _tokenize(self, texts: list[str]) -> dict:
        # sentence-transformers 6 renamed tokenize to preprocess; both return input_ids and masks
        fn = getattr(self.model, "preprocess", None) or self.model.tokenize
        return fn(texts)

    def _mask(self, mask):
        import torch

        # additive mask, (B, 1, 1, n): 0 where a token is, the dtype's minimum on padding
        return (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min

    def lower(self, texts: list[str], batch_size: int = 64) -> list:
        """The frozen layers' token states of every text, each trimmed to its own length."""
        import torch

        out = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with torch.no_grad():
            for s in range(0, len(order), batch_size):
                idx = order[s : s + batch_size]
                feats = self._tokenize([texts[i] for i in idx])
                h = self.bert.embeddings(input_ids=feats["input_ids"], token_type_ids=feats.get("token_type_ids"))
                m = self._mask(feats["attention_mask"])
                for layer in self.frozen:
                    h = _hidden(layer(h, attention_mask=m))
                lens = feats["attention_mask"].sum(1).tolist()
                for j, i in enumerate(idx):
                    out[i] = h[j, : lens[j]].clone()
        return out

    def upper(self, states: list, head: int = 0):
        """Pooled, normalised embeddings ``(B, d)`` of cached lower states, through one head's layers."""
        import torch

        n = max(s.shape[0] for s in states)
        h = torch.zeros(len(states), n, self.dim)
        mask = torch.zeros(len(states), n)
        for i, s in enumerate(states):
            h[i, : s.shape[0]] = s
            mask[i, : s.shape[0]] = 1.0
        m = self._mask(mask)
        for layer in self.heads[head]:
            h = _hidden(layer(h, attention_mask=m))
        pooled = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
        return torch.nn.functional.normalize(pooled, dim=1)

    def train_mode(self, on: bool, head: int = 0) -> None:
        for layer in self.heads[head]:
            layer.train(on)
            for p in layer.parameters():
                p.requires_grad_(on)

    def keep_heads(self, keep: list[int]) -> None:
        """Drop every head but ``keep`` (in that order): training heads a saved model does not need."""
        self.heads = [self.heads[h] for h in keep]

    # ------------------------------------------------------------------ weights

    def top_state(self) -> dict:
        """Every head's trained tensors (float16), keyed ``<head>.<layer among the top>.<name>``."""
        return {f"{h}.{i}.{k}": v.detach().to("cpu").half().clone()
                for h, head in enumerate(self.heads) for i, layer in enumerate(head) for k, v in layer.state_dict().items()}

    def load_top_state(self, state: dict) -> None:
        """Load :meth:`top_state` output into heads of the same shape."""
        import torch

        per: dict[tuple[int, int], dict] = {}
        for key, v in state.items():
            h, i, name = key.split(".", 2)
            per.setdefault((int(h), int(i)), {})[name] = v.to(torch.float32)
        for (h, i), sd in per.items():
            if not (0 <= h < len(self.heads) and 0 <= i < self.train_layers):
                raise ValueError(f"relevance weights name head {h} layer {i}; the model has {len(self.heads)} x {self.train_layers}")
            self.heads[h][i].load_state_dict(sd)


def _hidden(out):
    """A layer's hidden states, whether the installed transformers returns a tensor or a tuple."""
    return out[0] if isinstance(out, tuple) else out
