"""``raylake tools <tool>`` (JSON out, one-line errors) and ``raylake mcp`` driven over stdio by
the official MCP client in a subprocess."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))


def _raylake(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "raylake", *args], capture_output=True, text=True, env=_env(), timeout=300)


def test_cli_tools_print_json(example_index, read_rows):
    r = _raylake("tools", "sql", 'SELECT count(*) AS n FROM "sports/club.csv"', "--index-dir", example_index)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["rows"] == [[len(read_rows("sports/club.csv"))]]
    r = _raylake("tools", "value-search", "aib", "--no-exact", "--index-dir", example_index)
    assert r.returncode == 0 and any(m["column"] == "Club_Name" for m in json.loads(r.stdout)["matches"])


def test_cli_refusal_is_one_line_and_exit_2(example_index):
    r = _raylake("tools", "sql", "SELECT * FROM read_csv('/etc/passwd')", "--index-dir", example_index)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("raylake: error: ") and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_mcp_without_the_sdk_names_the_extra(example_index):
    # hide the SDK from this process only, whether or not it is installed
    code = (
        "import sys, importlib.abc\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'mcp' or name.startswith('mcp.'): raise ImportError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "from raylake.cli import main\n"
        f"sys.exit(main(['mcp', '--index-dir', {example_index!r}]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 2 and "pip install raylake[mcp]" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the MCP SDK is not installed (pip install raylake[mcp])")
def test_mcp_server_over_stdio(example_index, read_rows):
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from raylake.tools import TOOLS

    params = StdioServerParameters(command=sys.executable, args=["-m", "raylake", "mcp", "--index-dir", example_index], env=_env())

    async def session():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            init = await s.initialize()
            listed = await s.list_tools()
            ok = await s.call_tool("sql", {"query": 'SELECT count(*) FROM "sports/player.csv"'})
            search = await s.call_tool("column_search", {"phrase": "club name", "limit": 2})
            refused = await s.call_tool("sql", {"query": "COPY (SELECT 1) TO '/tmp/raylake_mcp_probe'"})
            return init, listed, ok, search, refused

    init, listed, ok, search, refused = anyio.run(session)
    assert init.server_info.name == "raylake"
    assert {t.name for t in listed.tools} == set(TOOLS)
    sql_tool = next(t for t in listed.tools if t.name == "sql")
    assert "query" in sql_tool.input_schema["required"]
    assert not ok.is_error and json.loads(ok.content[0].text)["rows"] == [[len(read_rows("sports/player.csv"))]]
    assert json.loads(search.content[0].text)["columns"][0]["column"] == "Club_Name"
    assert refused.is_error and "only SELECT" in refused.content[0].text
    assert not os.path.exists("/tmp/raylake_mcp_probe")
