"""raylake: find, join and union the tables of a data lake that answer a question.

The flat public API (imported on first use, so ``import raylake`` stays light); see
``raylake/STRUCTURE.md`` for the package layout::

    import raylake
    raylake.build_index("lake/", ".raylake")
    answer = raylake.open(".raylake").ask("What is the average points of players from the club 'AIB'?")
    answer.tables, answer.to_arrow()
"""
__version__ = "0.1.0"

# public name -> (module, attribute); no public name is also a subpackage's name, since importing
# the subpackage would replace the lazy export with the module on the package
_EXPORTS = {
    "build_index": ("raylake.index.build", "build_index"),
    "LakeIndex": ("raylake.index.reader", "LakeIndex"),
    "LakeGraph": ("raylake.graph", "LakeGraph"),
    "IntentGraph": ("raylake.intent.model", "IntentGraph"),
    "OfflineExtractor": ("raylake.intent.offline", "OfflineExtractor"),
    "igms_value": ("raylake.reward", "igms_value"),
    "IGMSState": ("raylake.reward", "IGMSState"),
    "Engine": ("raylake.search.engine", "Engine"),
    "Answer": ("raylake.search.engine", "Answer"),
    "fuse_plan": ("raylake.fuse", "fuse"),
    "Fused": ("raylake.fuse", "Fused"),
    "RelevanceModel": ("raylake.relevance.model", "RelevanceModel"),
    "RaylakeContext": ("raylake.config", "RaylakeContext"),
    "RaylakeError": ("raylake.errors", "RaylakeError"),
}

__all__ = sorted(_EXPORTS) + ["open", "__version__"]


def open(index_dir: str, **kwargs):  # noqa: A001 - raylake.open(index) reads like the built-in open(file)
    """The :class:`~raylake.search.engine.Engine` of the index in ``index_dir`` (built by
    ``raylake index`` or :func:`build_index`); ``kwargs`` go to ``Engine``."""
    from raylake.search.engine import Engine

    return Engine(index_dir, **kwargs)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        module, attr = _EXPORTS[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'raylake' has no attribute {name!r}")
