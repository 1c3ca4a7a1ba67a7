"""Budgeted greedy selection of groups of evidence units (tables) under an incremental reward.

A table contributes a block of evidence units; choosing it adds all of its units not yet in
the selection. With F(S) = U(units of S) monotone and submodular in units, F is monotone
submodular in groups, so greedy under a budget of L groups attains F ≥ (1 − 1/e)·F(opt)
(Nemhauser et al., 1978; GRAFT Sec. 4.1, from Props. 1–2).

:func:`lazy_greedy` is Minoux's accelerated greedy: a max-heap of *stale* gains, valid upper
bounds under submodularity; the top is re-evaluated against the current selection and taken
as soon as its fresh gain is still on top. It returns the same choices as
:func:`plain_greedy` (which re-evaluates every group every round) whenever the reward is
submodular — IGMS with diagonal ``C``, R1, R2, R4. With correlated ``C`` (column-set
Jaccard) IGMS may violate submodularity (correlated noise can make a unit more
informative once its partner is in), stale bounds can then be too low, and the two may
differ; lazy stays a valid greedy-like heuristic and is what the search uses.

Ties go to the lowest group index in both, so on exact ties the results agree too.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from raylake.reward.igms import UnitState
from raylake.reward.variants import make_state


@dataclass(frozen=True)
class GreedyResult:
    """What :func:`lazy_greedy` and :func:`plain_greedy` return."""

    groups: tuple[int, ...]  # chosen group indices, in selection order
    gains: tuple[float, ...]  # marginal reward of each chosen group when it was chosen
    units: tuple[int, ...]  # selected unit (row) indices, in insertion order
    value: float  # reward of the selected units
    evaluations: int  # group-gain evaluations spent (what lazy evaluation saves)


class _Selection:
    """The growing selection: its state and unit order, and group-gain evaluation."""

    def __init__(self, M, C, groups, state: UnitState):
        self.M, self.C = M, C
        # A unit listed twice in one group is still one unit (dict keeps the listed order).
        self.groups = [list(dict.fromkeys(np.asarray(g, dtype=np.int64).reshape(-1).tolist())) for g in groups]
        self.state = state
        self.units: list[int] = []
        self.chosen: set[int] = set()
        self.evaluations = 0

    def try_group(self, g: int) -> tuple[float, UnitState]:
        """Gain of adding group ``g``'s new units, and the state after adding them."""
        self.evaluations += 1
        new = [u for u in self.groups[g] if u not in self.chosen]
        state = self.state.copy()
        if not new:
            return 0.0, state
        rows = self.C[new][:, self.units + new]
        return state.add_many(self.M[new], rows), state

    def take(self, g: int, state: UnitState) -> None:
        for u in self.groups[g]:
            if u not in self.chosen:
                self.chosen.add(u)
                self.units.append(u)
        self.state = state


def _prepare(M, C, groups, variant, sigma0_sq, edge_mask, weights) -> _Selection:
    M = np.asarray(M, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if M.ndim != 2 or C.shape != (M.shape[0],) * 2:
        raise ValueError(f"expected M (N, a) and C (N, N), got {M.shape} and {C.shape}")
    sel = _Selection(M, C, groups, make_state(variant, M.shape[1], sigma0_sq, edge_mask, **weights))
    for g in sel.groups:
        if g and (min(g) < 0 or max(g) >= M.shape[0]):
            raise ValueError(f"group unit indices must lie in [0, {M.shape[0]})")
    return sel


def _result(sel: _Selection, order: list[int], gains: list[float]) -> GreedyResult:
    return GreedyResult(tuple(order), tuple(gains), tuple(sel.units), sel.state.value, sel.evaluations)


def lazy_greedy(M, C, groups: Sequence[Sequence[int]], budget: int, *, min_gain: float = 0.0,
                variant: str = "igms", sigma0_sq: float = 1e-2, edge_mask=None, **weights) -> GreedyResult:
    """Choose at most ``budget`` groups greedily by marginal reward, with lazy evaluation.

    Args:
        M (array[N, a]): support rows of all candidate units.
        C (array[N, N]): their full covariance (ColJac off the diagonal, self-covariances on it).
        groups (sequence of int sequences): unit indices (rows of ``M``) of each group;
            groups may share units (a shared unit is added once).
        budget (int): L, the most groups to choose.
        min_gain (float): stop when the best remaining marginal gain is below this.
        variant, sigma0_sq, edge_mask, **weights: the reward, as in
            :func:`raylake.reward.variants.make_state`.

    Returns:
        GreedyResult: chosen groups in order, their gains, the units, the final value and
        the number of group evaluations.
    """
    sel = _prepare(M, C, groups, variant, sigma0_sq, edge_mask, weights)
    # Entries (−bound, group, round of the bound); an infinite bound forces a first evaluation.
    heap = [(-math.inf, g, -1) for g in range(len(sel.groups))]
    order: list[int] = []
    gains: list[float] = []
    fresh: dict[int, UnitState] = {}  # states evaluated this round, so the winner is not recomputed
    while heap and len(order) < budget:
        neg, g, stamp = heapq.heappop(heap)
        if stamp == len(order):
            if -neg < min_gain:
                break
            sel.take(g, fresh[g])
            order.append(g)
            gains.append(-neg)
            fresh.clear()
            continue
        gain, fresh[g] = sel.try_group(g)
        heapq.heappush(heap, (-gain, g, len(order)))
    return _result(sel, order, gains)


def plain_greedy(M, C, groups: Sequence[Sequence[int]], budget: int, *, min_gain: float = 0.0,
                 variant: str = "igms", sigma0_sq: float = 1e-2, edge_mask=None, **weights) -> GreedyResult:
    """:func:`lazy_greedy` without laziness: every remaining group is re-evaluated each round.

    Same arguments and result; the reference the tests hold the lazy version to.
    """
    sel = _prepare(M, C, groups, variant, sigma0_sq, edge_mask, weights)
    remaining = list(range(len(sel.groups)))
    order: list[int] = []
    gains: list[float] = []
    while remaining and len(order) < budget:
        tried = [sel.try_group(g) for g in remaining]
        best = max(range(len(remaining)), key=lambda i: (tried[i][0], -remaining[i]))
        if tried[best][0] < min_gain:
            break
        g = remaining.pop(best)
        sel.take(g, tried[best][1])
        order.append(g)
        gains.append(tried[best][0])
    return _result(sel, order, gains)
