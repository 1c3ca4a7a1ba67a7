"""A plan Φ: the tables, and the ordered join/union steps that integrate them."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Step:
    op: str  # "start" | "join" | "union"
    new: int  # table added
    anchor: int | None = None  # table already in the plan it attaches to
    keys: tuple[str, str] | None = None  # join: (anchor column, new column)
    mapping: dict | None = None  # union: new column -> anchor column
    score: float = 0.0  # edge score (join/union), 0 for start
    gain: float = 0.0  # IGMS marginal gain of the action that added it
    role: str = "anchor"  # anchor | bridge | joined | union shard | intent (Stage 4, BeamSearch._complete)


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)
    value: float = 0.0  # exact IGMS U of the plan

    @property
    def tables(self) -> list[int]:
        return [s.new for s in self.steps]

    def __len__(self) -> int:
        return len(self.steps)
