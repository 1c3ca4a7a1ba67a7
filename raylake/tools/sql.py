"""Read-only SQL over the lake in DuckDB (Octopus Sec. 3.3, "SQL execution").

The agent's SQL is untrusted. Four independent walls keep it read-only and inside the lake:

1. DuckDB's own parser must find exactly one statement, of type SELECT (``WITH ... SELECT``
   included): no ``;``-chained second statement, no COPY, ATTACH, INSTALL, LOAD, SET, PRAGMA,
   CREATE or any write.
2. Its parse tree may name no table function that reads (``read_csv``, ``glob``, ``read_text``, ...;
   ``range`` and ``unnest`` only make rows) and
   no table but the lake's files, by their paths, and its own CTEs: the files are views, made
   here, only for paths the index holds and whose real location is inside the lake.
3. The connection may touch no file outside the lake root (``enable_external_access=false``
   with the root as the only allowed directory), loads or installs no extension, and its
   configuration is locked before the first user query, so a query cannot undo any of this.
4. A row cap (rows beyond it are not fetched) and a time cap (the query is interrupted).
"""
from __future__ import annotations

import json
import math
import os
import threading

from raylake.tools.base import Toolbox, ToolError

# table functions that make rows from their arguments and touch no file or setting
PURE_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
FILE_HINT = 'name lake files by their paths, e.g. SELECT * FROM "{example}" LIMIT 5'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def quote(name: str) -> str:
    """A DuckDB identifier for ``name`` (a lake path or a column header)."""
    return '"' + name.replace('"', '""') + '"'


def jsonable(v):
    """A DuckDB value as JSON holds it: numbers and text as they are, NaN as null, the rest as text."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return str(v)


def _walk(node, found: dict) -> None:
    if isinstance(node, dict):
        kind = node.get("type")
        if kind == "TABLE_FUNCTION":
            fn = node.get("function") or {}
            found["functions"].add(fn.get("function_name") or "?")
        elif kind == "BASE_TABLE":
            qualifier = ".".join(x for x in (node.get("catalog_name"), node.get("schema_name")) if x)
            found["tables"].add((qualifier, node.get("table_name") or ""))
        cte = node.get("cte_map")
        if isinstance(cte, dict):
            for entry in cte.get("map") or []:
                if isinstance(entry, dict) and entry.get("key"):
                    found["ctes"].add(entry["key"].lower())
        for v in node.values():
            _walk(v, found)
    elif isinstance(node, list):
        for v in node:
            _walk(v, found)


class LakeSQL:
    """One locked-down DuckDB connection over one lake; lake files become views on first use."""

    def __init__(self, tb: Toolbox):
        import duckdb

        if not tb.is_local:
            raise ToolError(f"SQL runs over a local lake only; this index's lake is {tb.lake_root}")
        self.tb = tb
        self.root = os.path.realpath(tb.lake_root)
        self.lock = threading.Lock()  # a DuckDB connection serves one query at a time
        self.views: set[str] = set()
        self.con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
        self.con.execute(f"SET allowed_directories=[{_lit(self.root + os.sep)}]")
        self.con.execute("SET enable_external_access=false")
        self.con.execute(f"SET memory_limit={_lit(tb.cfg.sql_memory_limit)}")
        self.con.execute("SET threads=2")  # a tool call shares the machine with search and other calls
        self.con.execute("SET lock_configuration=true")

    def check(self, query: str, allowed: set[str] | None = None) -> set[str]:
        """The lake paths ``query`` reads, or a one-line refusal of why it may not run; with
        ``allowed``, a lake path outside it is refused too (the NL2SQL agent reads its plan's tables only)."""
        import duckdb

        if not isinstance(query, str) or not query.strip():
            raise ToolError("empty SQL query")
        try:
            statements = self.con.extract_statements(query)
        except duckdb.Error as exc:
            raise ToolError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None
        if len(statements) != 1:
            raise ToolError(f"one SQL statement per call, not {len(statements)}: refused")
        if statements[0].type != duckdb.StatementType.SELECT:
            raise ToolError(f"only SELECT (or WITH ... SELECT) runs here, not {statements[0].type.name}: refused")
        tree = json.loads(self.con.execute("SELECT json_serialize_sql(?)", [query]).fetchone()[0])
        if tree.get("error"):
            raise ToolError(f"SQL refused: {tree.get('error_message', 'cannot be analysed')}")
        found = {"functions": set(), "tables": set(), "ctes": set()}
        _walk(tree.get("statements"), found)
        example = self.tb.index.paths[0]
        banned = {f for f in found["functions"] if f.lower() not in PURE_TABLE_FUNCTIONS}
        if banned:
            names = ", ".join(sorted(banned))
            raise ToolError(f"table functions ({names}) are not allowed: {FILE_HINT.format(example=example)}")
        paths = set()
        for schema, name in found["tables"]:
            if not schema and name.lower() in found["ctes"]:
                continue
            full = f"{schema}.{name}" if schema else name
            if allowed is not None and (schema or name not in allowed):
                raise ToolError(f"table {full!r} is not one of this query's tables ({', '.join(map(repr, sorted(allowed)))}): refused")
            if schema or name not in self.tb.index.path_id:
                raise ToolError(f"no table {full!r} in the lake index: {FILE_HINT.format(example=example)}")
            paths.add(name)
        return paths

    def source(self, path: str) -> str:
        """The DuckDB table function reading lake table ``path`` (the view's body; a query written
        over the views runs outside the harness with these as its CTEs)."""
        from raylake.lake.read import file_kind

        loc = os.path.realpath(self.tb.location(path))
        return f"{'read_parquet' if file_kind(path) == 'parquet' else 'read_csv'}({_lit(loc)})"

    def view(self, path: str) -> None:
        if path in self.views:
            return
        import duckdb

        try:
            self.con.execute(f"CREATE VIEW {quote(path)} AS SELECT * FROM {self.source(path)}")
        except duckdb.Error as exc:
            raise ToolError(f"table {path!r} cannot be read: {str(exc).splitlines()[0]}") from None
        self.views.add(path)

    def schema(self, path: str) -> list[tuple[str, str]]:
        """Table ``path``'s columns as its SQL sees them: ``(name, DuckDB type)`` (the CSV reader's typing)."""
        with self.lock:
            self.view(path)
            return [(r[0], r[1]) for r in self.con.execute(f"DESCRIBE {quote(path)}").fetchall()]

    def run(self, query: str, max_rows: int, timeout_s: float, allowed: set[str] | None = None) -> dict:
        """Rows of ``query`` (at most ``max_rows``, ``truncated`` when there were more); ``allowed``
        as in :meth:`check`."""
        import duckdb

        with self.lock:
            for p in sorted(self.check(query, allowed)):
                self.view(p)
            timer = threading.Timer(timeout_s, self.con.interrupt)
            timer.start()
            try:
                cur = self.con.execute(query)
                columns = [d[0] for d in cur.description]
                rows = cur.fetchmany(max_rows + 1)
            except duckdb.InterruptException:
                raise ToolError(f"SQL interrupted after the {timeout_s:g} s time cap: narrow the query or add a LIMIT") from None
            except duckdb.Error as exc:
                raise ToolError(f"SQL failed: {str(exc).splitlines()[0]}") from None
            finally:
                timer.cancel()
        return {
            "columns": columns,
            "rows": [[jsonable(v) for v in r] for r in rows[:max_rows]],
            "truncated": len(rows) > max_rows,
        }


def sql(tb: Toolbox, query: str, max_rows: int = 100) -> dict:
    """Run one read-only SELECT over the lake; tables are lake files named by their paths
    (``SELECT count(*) FROM "sports/player.csv"``). Rows and time are capped."""
    n = tb.limit(max_rows, "max_rows", tb.cfg.sql_max_rows)
    out = tb.db.run(query, n, tb.cfg.sql_timeout_s)
    return {"query": query, **out}
