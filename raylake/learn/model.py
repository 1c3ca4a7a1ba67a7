"""The value network of GRAFT (Sec. 4.1, Sec. 5.1): Q(s, a) = g(enc(s), emb(T_anchor), emb(T_new), o) and V(s).

- enc(s): a heterogeneous graph attention network (PyG ``HeteroConv`` of ``GATConv``, one
  per edge type of :mod:`.features`, ``layers`` rounds) over the intent graph G_I, the
  prefix evidence subgraph and the cross-graph alignment edges, followed by a
  **cross-graph alignment head**: every atom attends over its state's tables and columns;
  the attended evidence and a per-atom match score (how well the prefix covers the atom)
  are pooled per state, together with mean/max atom and mean table readouts.
- emb(T): the shared table encoder, an MLP over the table text embedding and the mean of
  its header embeddings.
- g: the factored action head, a two-layer GELU MLP over [enc, emb(anchor), emb(new),
  enc ⊙ emb(new), one-hot(o)] — twin heads as in CORL's IQL (the target takes their min).
- V: a GELU MLP over enc(s).

``ModelConfig()`` is the CPU-sized default; ``ModelConfig.paper()`` the paper's sizes
(hidden 512, 256-d retrieval space, 3 layers).
"""
from __future__ import annotations

import pickle
from dataclasses import asdict, dataclass

import torch
from torch import nn

from raylake.errors import RaylakeError
from raylake.learn.features import EDGE_TYPES
from raylake.learn.lake_arrays import DTYPES


def load_tensors(path: str):
    """``torch.load`` of tensors and plain values only: a model dir or checkpoint is data, and a
    pickled object in it (which a full unpickle would run) is refused, not executed."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise RaylakeError(f"refusing to load {path!r}: it holds more than tensors and plain values "
                           "(a pickled object could run code); retrain or delete it") from None
    except (OSError, RuntimeError, EOFError) as exc:
        raise RaylakeError(f"cannot read {path!r} ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                           "retrain or delete it") from None


@dataclass
class ModelConfig:
    in_dim: int = 384  # text embedding size of the index's model (MiniLM: 384)
    hidden: int = 64  # node and readout width (paper: 512)
    table_dim: int = 64  # emb(T) width, the shared table space (paper: 256)
    layers: int = 3  # HeteroConv rounds (paper: 3)
    heads: int = 2  # GAT attention heads per conv (concatenated back to ``hidden``)
    head_hidden: int = 128  # width of the two-layer heads g and V (paper: 512)
    dropout: float = 0.0  # GAT attention dropout (offline RL on a fixed corpus: off by default)

    @classmethod
    def paper(cls, in_dim: int = 384) -> "ModelConfig":
        return cls(in_dim=in_dim, hidden=512, table_dim=256, layers=3, heads=4, head_hidden=512)

    def to_dict(self) -> dict:
        return asdict(self)


def require_pyg() -> None:
    """torch-geometric is the ``learn`` extra: without it, a one-line error that says how to get it."""
    try:
        import torch_geometric  # noqa: F401
    except ImportError:
        raise RaylakeError("the value network needs torch-geometric: pip install 'raylake[learn]'") from None


def _mlp(i: int, h: int, o: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(i, h), nn.GELU(), nn.Linear(h, h), nn.GELU(), nn.Linear(h, o))


def _pool(x: torch.Tensor, batch: torch.Tensor, n: int, reduce: str) -> torch.Tensor:
    """Per-graph mean/max of node vectors; a graph without such nodes gets zeros."""
    from torch_geometric.utils import scatter

    if x.shape[0] == 0:
        return torch.zeros(n, x.shape[1], dtype=x.dtype)
    return scatter(x, batch, dim=0, dim_size=n, reduce=reduce)


class StateEncoder(nn.Module):
    """enc(s): HeteroConv(GATConv) over G_I ⊔ H^Φ_t with a cross-graph alignment head."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        require_pyg()
        from torch_geometric.nn import GATConv, HeteroConv

        h = cfg.hidden
        self.cfg = cfg
        self.inp = nn.ModuleDict({
            "atom": nn.Linear(cfg.in_dim + 3, h),
            "table": nn.Linear(cfg.in_dim, h),
            "column": nn.Linear(cfg.in_dim + len(DTYPES), h),
        })
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        for _ in range(cfg.layers):
            convs = {
                et: GATConv((h, h), h // cfg.heads, heads=cfg.heads, add_self_loops=(et[0] == et[2]), dropout=cfg.dropout)
                for et in EDGE_TYPES
            }
            self.convs.append(HeteroConv(convs, aggr="sum"))
            self.norms.append(nn.ModuleDict({k: nn.LayerNorm(h) for k in ("atom", "table", "column")}))
        self.q = nn.Linear(h, h, bias=False)
        self.k = nn.Linear(h, h, bias=False)
        self.match = nn.Sequential(nn.Linear(2 * h, h), nn.GELU(), nn.Linear(h, 1))
        self.out = nn.Sequential(nn.Linear(5 * h + 3, h), nn.GELU(), nn.Linear(h, h))

    def forward(self, g: dict) -> torch.Tensor:
        x = {k: torch.nn.functional.gelu(self.inp[k](v)) for k, v in g["x"].items()}
        for conv, norm in zip(self.convs, self.norms):
            edges = {k: v for k, v in g["edges"].items() if x[k[0]].shape[0] and x[k[2]].shape[0]}
            y = conv(x, edges) if edges else {}
            x = {k: norm[k](v + torch.nn.functional.gelu(y[k])) if k in y else v for k, v in x.items()}
        return self.readout(x, g)

    def readout(self, x: dict, g: dict) -> torch.Tensor:
        from torch_geometric.utils import to_dense_batch

        n = g["n_graphs"]
        b = g["batch"]
        atoms, tables, cols = x["atom"], x["table"], x["column"]
        # cross-graph alignment head: each atom attends over its state's evidence (tables + columns)
        ev = torch.cat([tables, cols])
        ev_b = torch.cat([b["table"], b["column"]])
        order = torch.argsort(ev_b, stable=True)
        A, amask = to_dense_batch(atoms, b["atom"], batch_size=n)  # (n, Amax, h)
        if ev.shape[0]:
            E, emask = to_dense_batch(ev[order], ev_b[order], batch_size=n)  # (n, Emax, h)
            att = torch.einsum("nah,neh->nae", self.q(A), self.k(E)) / self.cfg.hidden ** 0.5
            att = att.masked_fill(~emask[:, None, :], -1e4)
            w = torch.softmax(att, dim=-1) * emask[:, None, :].to(att.dtype)
            aligned = torch.einsum("nae,neh->nah", w, E)
        else:
            aligned = torch.zeros_like(A)
        m = torch.sigmoid(self.match(torch.cat([A, aligned], dim=-1))).squeeze(-1)  # (n, Amax) coverage of each atom
        am = amask.to(m.dtype)
        cnt = am.sum(1).clamp_min(1)
        cov_mean = (m * am).sum(1) / cnt
        cov_min = m.masked_fill(~amask, 1.0).min(1).values
        aligned_mean = (aligned * am[..., None]).sum(1) / cnt[:, None]
        feats = [
            _pool(atoms, b["atom"], n, "mean"), _pool(atoms, b["atom"], n, "max"), _pool(tables, b["table"], n, "mean"),
            aligned_mean, _pool(cols, b["column"], n, "mean"),
            cov_mean[:, None], cov_min[:, None], (g["n_tables"] / 10.0)[:, None],
        ]
        return self.out(torch.cat(feats, dim=1))


class QVNet(nn.Module):
    """Twin Q heads and V over one shared state encoder and table encoder."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        h, t = cfg.hidden, cfg.table_dim
        self.enc = StateEncoder(cfg)
        self.table = nn.Sequential(nn.Linear(2 * cfg.in_dim, t), nn.GELU(), nn.Linear(t, t))
        self.to_t = nn.Linear(h, t)
        q_in = h + 3 * t + 3
        self.q1 = _mlp(q_in, cfg.head_hidden, 1)
        self.q2 = _mlp(q_in, cfg.head_hidden, 1)
        self.v = _mlp(h, cfg.head_hidden, 1)

    def q_from(self, s: torch.Tensor, anchor: torch.Tensor, new: torch.Tensor, op: torch.Tensor):
        ea, en = self.table(anchor), self.table(new)
        z = torch.cat([s, ea, en, self.to_t(s) * en, op], dim=1)
        return self.q1(z).squeeze(-1), self.q2(z).squeeze(-1)

    def forward(self, g: dict, anchor, new, op):
        """(q1, q2, v) of a batch of states and actions."""
        s = self.enc(g)
        q1, q2 = self.q_from(s, anchor, new, op)
        return q1, q2, self.v(s).squeeze(-1)

    def value(self, g: dict) -> torch.Tensor:
        return self.v(self.enc(g)).squeeze(-1)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
