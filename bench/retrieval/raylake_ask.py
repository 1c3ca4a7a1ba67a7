"""raylake as shipped: ``raylake.search.Engine(index_dir).ask(question, budget=L).paths``.

The engine loads its own view of the same index directory, with the default
:class:`~raylake.config.RaylakeContext` (offline intent extractor, no value network unless
the engine ships one by default). Its embedding cache is cleared before every call, so a
question's latency is the cold latency, as for the baselines.

``raylake_q`` is the same engine with a trained value network (``raylake train``) ranking
the beam (``--model-dir``): the with/without-Q comparison of GRAFT Table 8.
"""
from __future__ import annotations

from bench.retrieval.base import Method


class Raylake(Method):
    name = "raylake"

    def __init__(self, ctx, beam: int | None = None, model_dir: str | None = None):
        super().__init__(ctx, beam=beam, model_dir=model_dir)
        from raylake.search import Engine

        self.engine = Engine(ctx.index_dir, model_dir=model_dir)
        self.beam = beam
        self.stats = {"empty": 0}

    def select(self, question: str, budget: int) -> list[str]:
        self.engine.index.embedder.clear_cache()
        ans = self.engine.ask(question, budget=budget, beam=self.beam)
        if not ans.paths:
            self.stats["empty"] += 1
        return list(ans.paths)

    def describe(self) -> dict:
        from dataclasses import asdict

        return {"beam": self.beam, "model_dir": self.params.get("model_dir"), "search": asdict(self.engine.ctx.search),
                "igms": asdict(self.engine.ctx.igms)}


class RaylakeQ(Raylake):
    name = "raylake_q"

    def __init__(self, ctx, beam: int | None = None, model_dir: str | None = None):
        from raylake.errors import RaylakeError

        if not model_dir:
            raise RaylakeError("raylake_q needs --model-dir (a checkpoint written by `raylake train`)")
        super().__init__(ctx, beam=beam, model_dir=model_dir)
