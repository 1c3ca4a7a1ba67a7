"""LLM access for raylake: the one OpenAI-compatible client, and vLLM on Ray Serve.

:mod:`raylake.llm.client` is all a CPU install needs. :mod:`raylake.llm.serve` hosts a
local model with vLLM on GPU nodes; it imports vLLM only inside the replica, so it is not
imported here.
"""
from raylake.llm.client import LLMClient, extract_json

__all__ = ["LLMClient", "extract_json"]
