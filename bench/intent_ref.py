"""Reference intent graphs derived from gold SQL, for measuring intent extraction (benchmarks only).

A gold query names source tables and columns of the original Spider databases; the lake
holds them as files (one file per table, or several *shards* with re-spelled headers). The
reference graph of a question, in lake terms:

- **entities** — one per distinct SQL table: the set of gold files whose spelling-free
  header holds every column the query uses of that table (all shards of a sharded table;
  ties between two source tables broken by elimination, then by the table's own key
  ``<table>_id``);
- **attributes** — the columns the query selects, groups by, filters on (WHERE/HAVING) or
  orders by, aggregates included, join keys excluded: ``{(file, norm(column))}`` over the
  entity's files;
- **values** — literals compared with a column in WHERE/HAVING (``LIKE`` wildcards
  stripped), with the attribute they constrain;
- **joins** — column equalities between two tables (``ON``, ``WHERE a.x = b.y``,
  ``x IN (SELECT y ...)``): unordered entity pairs.

:func:`reference_graph` works on one SQL string plus the gold files' headers, so it can be
tested on hand-written SQL without the Spider lake.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp


def norm(s: str) -> str:
    """Spelling-free column/table name: ``Host_city_ID`` and ``HOSTCITYID`` agree."""
    return re.sub(r"[^0-9a-z]", "", str(s).lower())


def norm_value(v: str) -> str:
    """A literal as the question would say it: wildcards and quotes off, case and spaces folded."""
    s = str(v).strip().strip("'\"").strip().strip("%").strip().lower()
    s = " ".join(s.split())
    try:
        f = float(s)
        return str(int(f)) if f == int(f) else str(f)
    except ValueError:
        return s


@dataclass
class RefAttribute:
    entity: int
    column: str  # norm(column)
    cells: frozenset  # {(file, norm(column))}
    roles: set = field(default_factory=set)  # select | group | filter | order


@dataclass
class RefValue:
    text: str  # norm_value(literal)
    attribute: int | None


@dataclass
class RefGraph:
    entities: list[frozenset]  # file sets
    entity_names: list[str]  # SQL table names
    attributes: list[RefAttribute]
    values: list[RefValue]
    joins: list[tuple[int, int]]  # unordered entity pairs, i < j

    def to_json(self) -> dict:
        return {
            "entities": [{"table": n, "files": sorted(f)} for n, f in zip(self.entity_names, self.entities)],
            "attributes": [{"entity": a.entity, "column": a.column, "roles": sorted(a.roles)} for a in self.attributes],
            "values": [{"text": v.text, "attribute": v.attribute} for v in self.values],
            "joins": [list(j) for j in self.joins],
        }


_ROLE_ARGS = (("group", "group"), ("where", "filter"), ("having", "filter"), ("order", "order"))


def _selects(tree: exp.Expression):
    for select in tree.find_all(exp.Select):
        aliases: dict[str, str] = {}
        for t in select.find_all(exp.Table):
            if t.find_ancestor(exp.Select) is not select:
                continue
            aliases[(t.alias or t.name).lower()] = t.name.lower()
            aliases[t.name.lower()] = t.name.lower()
        yield select, aliases


def _own(node: exp.Expression, select: exp.Select) -> bool:
    return node.find_ancestor(exp.Select) is select


def _parse(sql: str):
    # Spider writes string literals in double quotes, which SQLite's dialect reads as identifiers
    sql = re.sub(r'"([^"]*)"', lambda m: "'" + m.group(1).replace("'", "''") + "'", sql)
    try:
        return sqlglot.parse_one(sql, read="sqlite")
    except Exception:
        return None


def table_columns(sql: str) -> dict[str, set[str]]:
    """``{table: {norm(column)}}`` for the columns a query certainly takes from each table
    (qualified, or in a one-table scope). Pooled over the questions of one database, it
    tells two tables apart that a single query uses only through a shared key."""
    tree = _parse(sql)
    out: dict[str, set[str]] = {}
    if tree is None:
        return out
    for select, aliases in _selects(tree):
        own = sorted(set(aliases.values()))
        for col in select.find_all(exp.Column):
            if not _own(col, select) or not col.name:
                continue
            q = col.table.lower() if col.table else None
            t = aliases.get(q) if q else (own[0] if len(own) == 1 else None)
            if t:
                out.setdefault(t, set()).add(norm(col.name))
    return out


def reference_graph(sql: str, headers: dict[str, list[str]], schema_hint: dict[str, set[str]] | None = None) -> RefGraph | None:
    """The reference intent graph of ``sql`` over gold files ``{file: header}``; None if unparsable.

    ``schema_hint``: ``{table: columns}`` known from other queries on the same database
    (:func:`table_columns`), used only to break ties between candidate files.
    """
    tree = _parse(sql)
    if tree is None:
        return None
    hdr = {f: {norm(h) for h in hs} for f, hs in headers.items()}
    scopes = list(_selects(tree))
    tables = sorted({t for _, al in scopes for t in al.values()})
    if not tables:
        return None

    # 1. which columns each SQL table uses (to find its files); an unqualified column in a
    #    multi-table scope is resolved later, to the scope's table whose files hold it
    scope_tables = {id(s): sorted(set(al.values())) for s, al in scopes}
    used: dict[str, set[str]] = {t: set() for t in tables}
    col_refs: list[tuple[exp.Column, str | None, exp.Select]] = []
    for select, aliases in scopes:
        own_tables = sorted(set(aliases.values()))
        for col in select.find_all(exp.Column):
            if not _own(col, select) or not col.name:
                continue
            q = col.table.lower() if col.table else None
            if q and q in aliases:
                t = aliases[q]
            elif len(own_tables) == 1:
                t = own_tables[0]
            else:
                t = None  # resolved after files are known
            col_refs.append((col, t, select))
            if t is not None:
                used[t].add(norm(col.name))

    # 2. tables → gold files: groups of files with one spelling-free header are one source table
    groups: dict[frozenset, set[str]] = {}
    for f, h in hdr.items():
        groups.setdefault(frozenset(h), set()).add(f)
    cands = {t: [g for g in groups if used[t] <= g] for t in tables}
    for t in tables:
        hint = (schema_hint or {}).get(t, set()) | used[t]
        better = [g for g in cands[t] if hint <= g]
        if better:
            cands[t] = better
    assign: dict[str, frozenset] = {}
    changed = True
    while changed:
        changed = False
        taken = set(assign.values())
        for t in tables:
            if t in assign:
                continue
            free = [g for g in cands[t] if g not in taken] or cands[t]
            if len(free) == 1:
                assign[t] = free[0]
                changed = True
                taken = set(assign.values())
    taken = set(assign.values())
    for t in tables:
        if t in assign:
            continue
        free = [g for g in (cands[t] or list(groups)) if g not in taken] or cands[t] or list(groups)
        key = norm(t) + "id"
        stem = norm(t).rstrip("s")
        named = [g for g in free if key in g or stem + "id" in g]
        assign[t] = (named or sorted(free, key=lambda g: (-len(used[t] & g), sorted(groups[g]))))[0]
        taken.add(assign[t])
    entity_of = {t: i for i, t in enumerate(tables)}
    entities = [frozenset(groups[assign[t]]) for t in tables]

    def owner(col: exp.Column, t: str | None, select: exp.Select) -> str | None:
        if t is not None:
            return t
        c = norm(col.name)
        holders = [x for x in scope_tables[id(select)] if c in assign[x]]
        return holders[0] if holders else None

    # 3. joins (column = column across tables, IN-subquery keys): excluded from attributes
    join_cols: set[int] = set()
    joins: set[tuple[int, int]] = set()
    ref_of = {id(c): (c, t, s) for c, t, s in col_refs}
    for select, aliases in scopes:
        for eq in select.find_all(exp.EQ):
            if not _own(eq, select):
                continue
            l, r = eq.left, eq.right
            if isinstance(l, exp.Column) and isinstance(r, exp.Column) and id(l) in ref_of and id(r) in ref_of:
                a, b = owner(*ref_of[id(l)]), owner(*ref_of[id(r)])
                if a and b and a != b:
                    joins.add(tuple(sorted((entity_of[a], entity_of[b]))))
                    join_cols.update((id(l), id(r)))
        for isin in select.find_all(exp.In):
            if not _own(isin, select):
                continue
            sub = isin.args.get("query")
            if not isinstance(isin.this, exp.Column) or sub is None or id(isin.this) not in ref_of:
                continue
            inner = sub.find(exp.Select)
            if inner is None or len(inner.expressions) != 1 or not isinstance(inner.expressions[0], exp.Column):
                continue
            ic = inner.expressions[0]
            if id(ic) not in ref_of:
                continue
            a, b = owner(*ref_of[id(isin.this)]), owner(*ref_of[id(ic)])
            if a and b and a != b:
                joins.add(tuple(sorted((entity_of[a], entity_of[b]))))
                join_cols.update((id(isin.this), id(ic)))

    # 4. attributes and values
    attrs: list[RefAttribute] = []
    attr_key: dict[tuple[int, str], int] = {}

    def role_of(col: exp.Column, select: exp.Select) -> str | None:
        node = col
        while node is not None and node.parent is not select:
            node = node.parent
        if node is None:
            return None
        if node.arg_key == "expressions":
            return "select"
        for arg, role in _ROLE_ARGS:
            if node.arg_key == arg:
                return role
        return None

    def attribute(col, t, select) -> int | None:
        t = owner(col, t, select)
        if t is None:
            return None
        e, c = entity_of[t], norm(col.name)
        if c not in assign[t]:
            return None
        k = attr_key.get((e, c))
        if k is None:
            k = attr_key[(e, c)] = len(attrs)
            attrs.append(RefAttribute(e, c, frozenset((f, c) for f in entities[e])))
        return k

    for col, t, select in col_refs:
        if id(col) in join_cols:
            continue
        role = role_of(col, select)
        if role is None:
            continue
        k = attribute(col, t, select)
        if k is not None:
            attrs[k].roles.add(role)
    values: list[RefValue] = []
    seen_v = set()
    for select, _ in scopes:
        for lit in select.find_all(exp.Literal):
            if not _own(lit, select):
                continue
            node = lit
            while node.parent is not None and node.parent is not select:
                node = node.parent
            if node.arg_key not in ("where", "having"):
                continue
            cmp = lit.parent
            while cmp is not None and not isinstance(cmp, (exp.Binary, exp.Between, exp.In, exp.Like)):
                cmp = cmp.parent
            target = None
            if cmp is not None:
                col = next((c for c in cmp.find_all(exp.Column) if id(c) in ref_of and _own(c, select)), None)
                if col is not None:
                    target = attribute(*ref_of[id(col)])
            text = norm_value(lit.this)
            if text and (text, target) not in seen_v:
                seen_v.add((text, target))
                values.append(RefValue(text, target))
    return RefGraph(entities, tables, attrs, values, sorted(joins))
