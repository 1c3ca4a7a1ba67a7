"""Intent graphs: the model (:mod:`.model`), extractors from questions (offline, LLM)."""
from raylake.intent.model import Atom, Attribute, IntentGraph, IntentTree, Join

__all__ = ["Atom", "Attribute", "IntentGraph", "IntentTree", "Join"]
