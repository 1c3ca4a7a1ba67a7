"""``raylake mcp``: the tool table served over MCP on stdio (the official ``mcp`` Python SDK).

The SDK is an optional extra (``pip install raylake[mcp]``), imported only here and only when
the server starts. Each tool is the registry's function with the toolbox bound, so MCP, the
CLI and the Python API check and answer a call the same way.
"""
from __future__ import annotations

import inspect

from raylake.errors import RaylakeError
from raylake.tools.base import Toolbox
from raylake.tools.registry import TOOLS, ToolSpec

INSTRUCTIONS = (
    "Tools over one raylake index of a data lake. Tables are named by their paths relative to the lake "
    "root. Start with column_search or value_search, inspect candidates with inspect_table, verify joins "
    "with joinable_columns and value_overlap, and query with read-only sql."
)


def _bound(tb: Toolbox, spec: ToolSpec, refusal: type[Exception]):
    """``spec``'s function without its toolbox argument, with a signature the SDK can read;
    a user error becomes the SDK's ``refusal`` so its one line reaches the agent (the SDK
    hides the text of any other exception as a crash)."""

    def call(**kwargs):
        try:
            return spec.run(tb, kwargs)
        except RaylakeError as exc:
            raise refusal(str(exc)) from None

    params = []
    for p in spec.params:
        annotation = p.kind | None if p.optional else p.kind
        default = inspect.Parameter.empty if p.required else p.default
        params.append(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
    call.__signature__ = inspect.Signature(params, return_annotation=dict)
    call.__name__ = spec.name
    call.__doc__ = spec.description
    return call


def build_server(tb: Toolbox):
    """An ``MCPServer`` exposing every tool of :data:`raylake.tools.registry.TOOLS` over ``tb``."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError as MCPToolError
    except ImportError:
        raise RaylakeError("raylake mcp needs the MCP Python SDK (2.x): pip install raylake[mcp]") from None
    server = MCPServer(name="raylake", instructions=INSTRUCTIONS, version=__import__("raylake").__version__, log_level="WARNING")
    for spec in TOOLS.values():
        server.add_tool(_bound(tb, spec, MCPToolError), name=spec.name, description=spec.description, structured_output=False)
    return server
