"""Search: support of lake objects for intent atoms, Algorithm 3, and the engine behind ``ask``."""
from raylake.search.engine import Answer, Engine
from raylake.search.plan import Plan, Step

__all__ = ["Answer", "Engine", "Plan", "Step"]
