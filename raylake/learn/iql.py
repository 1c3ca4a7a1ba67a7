"""Implicit Q-learning (Kostrikov et al., 2022) for GRAFT's value network (Sec. 4.1, Eq. 8), CORL-style.

    L_V(ψ) = E_(s,a)~D [ L₂^τ( Q_ω̄(s, a) − V_ψ(s) ) ],   L₂^τ(u) = |τ − 1(u < 0)|·u²
    L_Q(ω) = E_(s,a,r,s')~D [ ( r + γ·(1 − done)·V_ψ(s') − Q_ω(s, a) )² ]
    ω̄ ← (1 − ρ)·ω̄ + ρ·ω   (Polyak; the paper's ρ = 5e-3 is the step toward ω)

Q has twin heads (CORL); the target takes their minimum. Everything one update needs is
in this file: the config, the losses, the optimiser and its schedule, the target network.
Hyperparameters are the paper's (Sec. 5.1). The AWR temperature β = 3.0 extracts a policy
in IQL; GRAFT searches with Q and never extracts one, so it has no use here.
"""
from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass

import torch
from torch import nn


@dataclass
class IQLConfig:
    expectile: float = 0.7  # τ of the asymmetric L2 that makes V an upper expectile of Q
    discount: float = 0.8  # γ (Sec. 5.6: F1 peaks at 0.8)
    tau_polyak: float = 5e-3  # ρ: step of the target network toward the online one per update
    lr: float = 3e-4  # AdamW learning rate
    weight_decay: float = 1e-2  # AdamW decoupled weight decay
    batch_size: int = 256  # transitions per update (per worker under DDP)
    grad_clip: float = 1.0  # ℓ2 norm clip of all gradients
    warmup_frac: float = 0.05  # linear warm-up share of the cosine schedule
    total_steps: int = 200_000  # length of the cosine schedule (paper: 200K)

    def to_dict(self) -> dict:
        return asdict(self)


def expectile_loss(diff: torch.Tensor, expectile: float) -> torch.Tensor:
    """L₂^τ(u) = |τ − 1(u < 0)|·u², averaged."""
    w = torch.where(diff > 0, expectile, 1 - expectile)
    return (w * diff.pow(2)).mean()


def cosine_with_warmup(step: int, total: int, warmup_frac: float) -> float:
    warm = max(1, int(total * warmup_frac))
    if step < warm:
        return (step + 1) / warm
    prog = min(1.0, (step - warm) / max(1, total - warm))
    return 0.5 * (1.0 + math.cos(math.pi * prog))


class IQL:
    """One IQL learner: ``update(batch) -> losses``; ``state_dict()`` / ``load_state_dict()`` for checkpoints.

    ``model`` is a :class:`~raylake.learn.model.QVNet` (possibly DDP-wrapped: its forward
    returns (q1, q2, v), which is what the gradient all-reduce hooks see); ``core`` is the
    unwrapped module, used for the target copy and no-grad values.
    """

    def __init__(self, model: nn.Module, cfg: IQLConfig, core: nn.Module | None = None):
        self.cfg = cfg
        self.model = model
        self.core = core or model
        self.target = copy.deepcopy(self.core).requires_grad_(False)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda s: cosine_with_warmup(s, cfg.total_steps, cfg.warmup_frac))
        self.step = 0

    def update(self, g, g_next, anchor, new, op, reward, done) -> dict:
        cfg = self.cfg
        with torch.no_grad():
            tq1, tq2, _ = self.target(g, anchor, new, op)
            target_q = torch.minimum(tq1, tq2)
            next_v = self.core.value(g_next)
            y = reward + cfg.discount * (1.0 - done) * next_v
        q1, q2, v = self.model(g, anchor, new, op)
        loss_v = expectile_loss(target_q - v, cfg.expectile)
        loss_q = 0.5 * ((q1 - y).pow(2).mean() + (q2 - y).pow(2).mean())
        loss = loss_q + loss_v
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        self.opt.step()
        self.sched.step()
        with torch.no_grad():
            for p, tp in zip(self.core.parameters(), self.target.parameters()):
                tp.mul_(1 - cfg.tau_polyak).add_(p, alpha=cfg.tau_polyak)
        self.step += 1
        return {"loss_q": float(loss_q), "loss_v": float(loss_v), "q_mean": float(q1.mean()), "v_mean": float(v.mean()),
                "grad_norm": float(gnorm), "lr": self.sched.get_last_lr()[0]}

    def state_dict(self) -> dict:
        return {"model": self.core.state_dict(), "target": self.target.state_dict(), "opt": self.opt.state_dict(),
                "sched": self.sched.state_dict(), "step": self.step}

    def load_state_dict(self, d: dict) -> None:
        self.core.load_state_dict(d["model"])
        self.target.load_state_dict(d["target"])
        self.opt.load_state_dict(d["opt"])
        self.sched.load_state_dict(d["sched"])
        self.step = int(d["step"])


def mape(pred: torch.Tensor, target: torch.Tensor, eps: float = 1e-6) -> float:
    """Mean absolute percentage error, in percent (Table 8's held-out value error)."""
    return float((100.0 * (pred - target).abs() / target.abs().clamp_min(eps)).mean())
