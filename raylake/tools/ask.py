"""raylake's own search as a tool: the GRAFT plan for a question, optionally fused."""
from __future__ import annotations

import json

from raylake.tools.base import Toolbox


def ask(tb: Toolbox, question: str, budget: int | None = None, fuse: bool = False, preview: int = 5) -> dict:
    """The tables (at most ``budget``) that answer ``question``, the join/union plan that
    connects them, and with ``fuse`` the fused table's summary and first ``preview`` rows."""
    if budget is not None:
        budget = tb.limit(budget, "budget", 1000)
    preview = tb.limit(preview, "preview", tb.cfg.sql_max_rows) if fuse else 0
    answer = tb.engine.ask(question, budget=budget, fuse=fuse, preview=preview).to_json()
    keep = {k: answer.get(k) for k in ("question", "tables", "plan", "score", "reason", "fused")}
    return json.loads(json.dumps(keep, default=str))  # numpy scalars and dates, as --json prints them
