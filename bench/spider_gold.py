"""Ground truth derived from the Spider lake's gold SQL, for benchmarks only.

The engine never reads ``gold_sql`` or ``db_id``; these helpers let the benchmarks measure
what the index found:

- :func:`gold_join_pairs` — every column equality between two tables in a gold query
  (``ON a.x = b.y``, ``WHERE a.x = b.y``, ``x IN (SELECT y FROM t)``), resolved to lake
  files (a SQL table maps to the gold files whose spelling-free header holds every column
  the query reads through it, the most specific table winning; a sharded table maps to
  each shard; two shards of one table are never a join pair).
- :func:`gold_shard_pairs` — files that appear together in a gold set with the same
  spelling-free header set: shards of one source table.
- :func:`db_clusters` — files linked through gold sets (one cluster ≈ one database), to
  count edges that certainly cross databases.
- :func:`file_databases` — the database (``db_id``) of every file some gold set names: two
  files of different databases never join or union in Spider, so an edge between them is
  wrong (files of one database that no question links fall in different ``db_clusters``).
"""
from __future__ import annotations

import csv
import itertools
import json
import os
import re
from collections import defaultdict

import sqlglot
from sqlglot import exp


def norm(s: str) -> str:
    return re.sub(r"[^0-9a-z]", "", s.lower())


def load_questions(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def headers(lake_dir: str, files) -> dict[str, list[str]]:
    out = {}
    for f in files:
        with open(os.path.join(lake_dir, f), encoding="utf-8", errors="replace", newline="") as fh:
            out[f] = next(csv.reader(fh), [])
    return out


def _scopes(tree: exp.Expression):
    for select in tree.find_all(exp.Select):
        aliases = {}
        for t in select.find_all(exp.Table):
            if t.find_ancestor(exp.Select) is not select:
                continue
            aliases[(t.alias or t.name).lower()] = t.name.lower()
            aliases[t.name.lower()] = t.name.lower()
        yield select, aliases


def sql_joins(sql: str) -> list[tuple[str, str, str, str]]:
    """``(table_a, column_a, table_b, column_b)`` equalities in one SQL query (lower-cased)."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except Exception:
        return []
    out = []
    for select, aliases in _scopes(tree):
        own = [t for t in set(aliases.values())]

        def resolve(col: exp.Column):
            q = col.table.lower() if col.table else None
            if q and q in aliases:
                return aliases[q], col.name.lower()
            if not q and len(own) == 1:
                return own[0], col.name.lower()
            return None

        for eq in select.find_all(exp.EQ):
            if eq.find_ancestor(exp.Select) is not select:
                continue
            l, r = eq.left, eq.right
            if isinstance(l, exp.Column) and isinstance(r, exp.Column):
                a, b = resolve(l), resolve(r)
                if a and b and a[0] != b[0]:
                    out.append((*a, *b))
        for isin in select.find_all(exp.In):
            if isin.find_ancestor(exp.Select) is not select:
                continue
            sub = isin.args.get("query")
            if not isinstance(isin.this, exp.Column) or sub is None:
                continue
            inner = sub.find(exp.Select)
            if inner is None or len(inner.expressions) != 1 or not isinstance(inner.expressions[0], exp.Column):
                continue
            itables = [t.name.lower() for t in inner.find_all(exp.Table)]
            a = resolve(isin.this)
            if a and len(itables) == 1 and itables[0] != a[0]:
                out.append((*a, itables[0], inner.expressions[0].name.lower()))
    return out


def sql_columns(sql: str) -> dict[str, set[str]]:
    """Columns each SQL table is read through anywhere in the query (``{table: {column}}``)."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except Exception:
        return {}
    used: dict[str, set[str]] = defaultdict(set)
    for select, aliases in _scopes(tree):
        own = set(aliases.values())
        for col in select.find_all(exp.Column):
            if col.find_ancestor(exp.Select) is not select or not col.name:
                continue
            q = col.table.lower() if col.table else None
            if q and q in aliases:
                used[aliases[q]].add(col.name.lower())
            elif not q and len(own) == 1:
                used[next(iter(own))].add(col.name.lower())
    return used


def _assign_files(tables: dict[str, set[str]], gold: list[str], hdr: dict[str, list[str]]) -> dict[str, list[str]]:
    """Gold files of each SQL table: files whose header holds every column the query reads
    through that table. A file that fits several tables goes to the most specific ones (the
    most columns read): a ``customers`` file also holds ``orders``' lone ``customer_id``, but
    it is not an ``orders`` file."""
    heads = {f: {norm(h) for h in hdr[f]} for f in gold}
    fits = {t: [f for f in gold if {norm(c) for c in cs} <= heads[f]] for t, cs in tables.items()}
    best: dict[str, int] = {}
    for t, fs in fits.items():
        for f in fs:
            best[f] = max(best.get(f, 0), len(tables[t]))
    return {t: [f for f in fs if len(tables[t]) == best[f]] for t, fs in fits.items()}


def gold_join_pairs(questions: list[dict], lake_dir: str) -> set[tuple[str, str, str, str]]:
    """Unordered ``(file_a, col_a, file_b, col_b)`` join pairs (original header spelling).

    Two files with the same spelling-free header set are shards of one table (a union, see
    :func:`gold_shard_pairs`), never the two sides of a join, so such pairs are left out.
    """
    files = sorted({f for q in questions for f in q["gold_tables"]})
    hdr = headers(lake_dir, files)
    key = {f: frozenset(norm(h) for h in hdr[f]) for f in files}
    pairs = set()
    for q in questions:
        joins = sql_joins(q["gold_sql"])
        if not joins:
            continue
        used = sql_columns(q["gold_sql"])
        for ta, ca, tb, cb in joins:
            used[ta].add(ca)
            used[tb].add(cb)
        assigned = _assign_files(used, q["gold_tables"], hdr)
        for ta, ca, tb, cb in joins:
            for x in assigned.get(ta, []):
                for y in assigned.get(tb, []):
                    if x == y or key[x] == key[y]:
                        continue
                    hx = next(h for h in hdr[x] if norm(h) == norm(ca))
                    hy = next(h for h in hdr[y] if norm(h) == norm(cb))
                    pairs.add(tuple(sorted([(x, hx), (y, hy)])))
    return {(a[0], a[1], b[0], b[1]) for a, b in pairs}


def gold_shard_pairs(questions: list[dict], lake_dir: str) -> set[tuple[str, str]]:
    files = sorted({f for q in questions for f in q["gold_tables"]})
    hdr = headers(lake_dir, files)
    key = {f: tuple(sorted(norm(h) for h in hdr[f])) for f in files}
    out = set()
    for q in questions:
        for a, b in itertools.combinations(sorted(q["gold_tables"]), 2):
            if key[a] == key[b]:
                out.add((a, b))
    return out


def db_clusters(questions: list[dict]) -> dict[str, int]:
    parent: dict[str, str] = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for q in questions:
        g = q["gold_tables"]
        for f in g[1:]:
            parent[find(f)] = find(g[0])
    roots = {}
    return {f: roots.setdefault(find(f), len(roots)) for f in list(parent)}


def file_databases(questions: list[dict]) -> dict[str, str]:
    """``{file: db_id}`` for every file named by some question's gold tables."""
    return {f: q["db_id"] for q in questions for f in q["gold_tables"]}
