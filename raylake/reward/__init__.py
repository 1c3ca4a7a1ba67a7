"""Rewards over evidence units: IGMS (GRAFT Eq. 6), its Table 7 ablations, greedy selection.

- :mod:`.igms` — :func:`igms_value` from scratch and :class:`IGMSState`, incremental with
  rank-one Cholesky updates (kernels in :mod:`raylake.kernels.cholesky`).
- :mod:`.variants` — R1–R4 (:func:`reward`, :func:`make_state`).
- :mod:`.greedy` — budgeted greedy over groups of units (tables), lazy (Minoux) and plain.
"""
from raylake.reward.greedy import GreedyResult, lazy_greedy, plain_greedy
from raylake.reward.igms import IGMSState, UnitState, igms_value
from raylake.reward.variants import VARIANTS, make_state, reward

__all__ = [
    "GreedyResult",
    "IGMSState",
    "UnitState",
    "VARIANTS",
    "igms_value",
    "lazy_greedy",
    "make_state",
    "plain_greedy",
    "reward",
]
