"""The agent tool harness (Octopus Sec. 3.3) over a built index: a Python API, ``raylake
tools <tool>`` and an MCP server (``raylake mcp``), all from one tool table.

    tb = Toolbox(".raylake")
    column_search(tb, "player name", threshold=0.5, limit=5)
    sql(tb, 'SELECT count(*) FROM "sports/player.csv"')
    tb.call("value_search", value="AIB")
"""
from raylake.tools.ask import ask
from raylake.tools.base import Toolbox, ToolError
from raylake.tools.joins import joinable_columns, schema_correspondence, value_overlap
from raylake.tools.registry import TOOLS, ToolSpec
from raylake.tools.schema import column_search, find_column, inspect_table
from raylake.tools.sql import sql
from raylake.tools.values import value_search

__all__ = [
    "TOOLS", "ToolError", "ToolSpec", "Toolbox", "ask", "column_search", "find_column", "inspect_table",
    "joinable_columns", "schema_correspondence", "sql", "value_overlap", "value_search",
]
