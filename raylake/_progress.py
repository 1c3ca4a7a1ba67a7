"""Progress bars and stage timers on stderr (quiet when asked, or when stderr is not a terminal)."""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager


class Progress:
    def __init__(self, enabled: bool = True):
        self.enabled = enabled and sys.stderr.isatty()
        self.timings: dict[str, float] = {}

    def bar(self, total: int, desc: str, unit: str = "it"):
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit, disable=not self.enabled, leave=False, file=sys.stderr, dynamic_ncols=True)

    @contextmanager
    def stage(self, name: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(self.timings.get(name, 0.0) + time.perf_counter() - t, 3)

    def note(self, msg: str) -> None:
        if self.enabled:
            print(msg, file=sys.stderr)
