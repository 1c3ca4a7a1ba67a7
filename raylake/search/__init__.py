"""Search: support of lake objects for intent atoms, Algorithm 3, and the engine behind ``ask``."""
from raylake.search.beam import BeamSearch
from raylake.search.engine import Answer, Engine
from raylake.search.plan import Plan, Step
from raylake.search.support import Support

__all__ = ["Answer", "BeamSearch", "Engine", "Plan", "Step", "Support"]
