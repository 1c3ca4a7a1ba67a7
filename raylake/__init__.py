"""raylake: find, join and union the tables of a data lake that answer a question.

The flat public API (imported on first use, so ``import raylake`` stays light); see
``raylake/STRUCTURE.md`` for the package layout::

    from raylake import build_index, Engine
    build_index("lake/", ".raylake")
    answer = Engine(".raylake").ask("What is the average points of players from the club 'AIB'?", fuse=True)
"""
__version__ = "0.1.0"

_EXPORTS = {
    "build_index": "raylake.index.build",
    "LakeIndex": "raylake.index.reader",
    "LakeGraph": "raylake.graph",
    "IntentGraph": "raylake.intent.model",
    "OfflineExtractor": "raylake.intent.offline",
    "igms_value": "raylake.reward",
    "IGMSState": "raylake.reward",
    "Engine": "raylake.search.engine",
    "Answer": "raylake.search.engine",
    "fuse": "raylake.fuse",
    "RelevanceModel": "raylake.relevance.model",
    "RaylakeContext": "raylake.config",
    "RaylakeError": "raylake.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'raylake' has no attribute {name!r}")
