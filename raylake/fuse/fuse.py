"""Execute a plan Φ into one table (GRAFT Sec. 4.2 output; EcoTable Sec. 4 integration).

A plan is an ordered list of steps (``start``, ``join``, ``union``). Fusion runs it in DuckDB:

1. **Parts.** A ``start`` or ``join`` step opens a *part*; a ``union`` step appends its table
   to the part of its anchor. Each member's columns are renamed through the stored union
   mapping to the part's canonical (first table's) names — composed along union chains, so a
   shard aligned to another shard lands on the right column — and the members are stacked
   with ``UNION ALL BY NAME``: re-spelled and reordered headers align, a column missing
   from a shard is null there, an unmapped extra column is kept (null elsewhere).
2. **Joins.** Parts are joined in plan order, inner join on the step's key columns. Keys are
   compared as numbers when both sides are numeric, otherwise as trimmed, case-folded
   text: lake tables spell the same key ``'AIB'`` / ``'aib '`` and ``3`` / ``3.0``.
3. **Guard.** Before each join the result size is counted; a join that would exceed
   ``max_rows`` is truncated to ``max_rows`` rows and reported (``truncated``), never
   materialised whole.
4. **Dead joins.** A join that matches none of the rows fused so far is left out, with the
   parts later steps join onto it, and reported: an inner join through it would empty the
   whole answer. On 300 Spider tuning questions (every 5.67th of the 1,701 in file order —
   not the seeded sample ``bench.retrieval --limit 300`` takes — through ``raylake ask
   --questions Q --fuse --json``; ``fused.rows`` and
   ``timings_ms.fuse`` read by a scratch script, not in ``bench/``) 58 plans fused to no rows
   before, 18 of them holding every gold table — most lost their rows to one table beyond
   the gold set joined on a ``Name`` or ``Year`` it shares no value with — and 4 now (none
   of them sufficient; 54 plans leave a part out; fusion p50 55 → 57 ms, p95 117 → 133 ms,
   3 plans at the row cap instead of 2, as the rows a dead join had emptied now meet the
   joins after it). A plan whose rows are gone before any join (an empty table, a database
   without rows) stays empty.

Output columns are ``<part>.<column>`` (``<part>`` is the first table's path without its
extension) plus ``_provenance``: for every row, the source file of each part it came from,
joined by ``" ⋈ "`` — so a row of a union shard names that shard.

``Fused.sql`` is the same computation as one DuckDB statement over the lake files (the joins
that ran, the row cap where it cut): DuckDB's own CSV reader types the columns, so a column
raylake reads as text may come back typed differently, but the rows are the same.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import pyarrow as pa

from raylake.errors import FusionError, RaylakeError

_SEP = " ⋈ "


def check_out_path(path: str) -> str:
    """The extension of an ``--out`` file name, or a one-line error when the table could not
    be written there (called before a search, so a typo costs no load or search time)."""
    ext = path.lower().rsplit(".", 1)[-1] if "." in os.path.basename(path) else ""
    if ext not in ("parquet", "pq", "csv"):
        raise RaylakeError(f"--out {path!r}: use a .parquet or .csv file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RaylakeError(f"--out {path!r}: folder {folder} does not exist")
    return ext


@dataclass
class Fused:
    table: pa.Table
    parts: list[dict] = field(default_factory=list)  # [{label, tables, rows}]
    steps: list[dict] = field(default_factory=list)  # [{op, new, rows}] rows after each join
    truncated: bool = False
    warnings: list[str] = field(default_factory=list)
    path: str | None = None
    sql: str = ""  # the fusion as one DuckDB statement over the lake files (module docstring)
    # each plan table's column -> its fused column name ("<part>.<canonical column>"), so later
    # stages (raylake.fuse.answer) name a lake column the way fusion did
    names: dict[str, dict[str, str]] = field(default_factory=dict)
    # each part before the joins (``q<k>``: its fused column names, ``_src<k>``), in ``parts`` order, and
    # ``sql`` as its CTEs (``p<k>``, ``q<k>``, ``j<i>``) and final SELECT: a set difference reads
    # the rows of a part that the joins dropped (raylake.fuse.answer)
    part_tables: list[pa.Table] = field(default_factory=list, repr=False)
    ctes: list[str] = field(default_factory=list, repr=False)
    final: str = ""

    def summary(self) -> dict:
        return {
            "rows": self.table.num_rows,
            "columns": self.table.column_names,
            "parts": self.parts,
            "steps": self.steps,
            "truncated": self.truncated,
            "warnings": self.warnings,
            "path": self.path,
        }

    def write(self, path: str) -> str:
        """Write the table as Parquet or CSV (by extension); returns the absolute path."""
        ext = check_out_path(path)
        tmp = path + ".tmp"
        try:
            if ext == "csv":
                import pyarrow.csv as pacsv

                pacsv.write_csv(self.table, tmp)
            else:
                import pyarrow.parquet as pq

                pq.write_table(self.table, tmp)
            os.replace(tmp, path)  # a crash never leaves a half-written answer under the name
        except OSError as exc:
            raise RaylakeError(f"cannot write {path}: {exc.strerror or exc}") from None
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        self.path = os.path.abspath(path)
        return self.path


def read_lake_table(lake_root: str, relpath: str) -> pa.Table:
    """Read one lake file (path relative to the lake root) the way the index read it.

    The path comes from the index folder, which is not trusted to stay inside the lake: a
    ``../`` path, or a file that became a link out of the lake, is refused."""
    from raylake.errors import SkipFile
    from raylake.lake.files import read_lake_file
    from raylake.lake.read import read_table

    try:
        data = read_lake_file(lake_root, relpath)
    except (FileNotFoundError, OSError):
        raise FusionError(f"table {relpath} is no longer in the lake at {lake_root}: re-run raylake index") from None
    try:
        return read_table(relpath, data)
    except SkipFile as exc:
        raise FusionError(f"table {relpath} can no longer be read ({exc}): re-run raylake index") from None


def _scan(lake_root: str, relpath: str) -> str:
    """DuckDB table function reading one lake file (``Fused.sql``)."""
    from raylake.lake.files import lake_location
    from raylake.lake.read import file_kind

    location = _lit(lake_location(lake_root, relpath))
    if file_kind(relpath) == "parquet":
        return f"read_parquet({location})"
    return f"read_csv({location})"  # DuckDB sniffs the delimiter, header and types


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _label(path: str) -> str:
    base = path
    for ext in (".csv.gz", ".tsv.gz", ".parquet", ".csv", ".tsv", ".txt", ".pq"):
        if base.lower().endswith(ext):
            return base[: -len(ext)]
    return base


def _unique_labels(paths: list[str]) -> list[str]:
    """Part labels, distinct even case-blind (``a.csv`` and ``a.parquet``, ``A.csv`` and
    ``a.csv``): a shared label would give two parts' columns one name."""
    seen, out = set(), []
    for p in paths:
        label = _label(p)
        if label.lower() in seen:
            label = p
        while label.lower() in seen:
            label += "_"
        seen.add(label.lower())
        out.append(label)
    return out


def _is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def fuse(steps: list[dict], lake_root: str, max_rows: int = 1_000_000, reader=read_lake_table) -> Fused:
    """Run ``steps`` (the ``plan`` list of ``raylake ask --json``) and return the fused table.

    Args:
        steps: ordered steps, each ``{"op", "new", "anchor", "keys": {"anchor_column",
            "new_column"}}`` for joins or ``{"mapping": {new column: anchor column}}`` for unions;
            table names are paths relative to ``lake_root``.
        lake_root: the lake the index was built from.
        max_rows: join-explosion guard (``SearchConfig.max_fused_rows``).
        reader: ``(lake_root, path) -> pa.Table``; tests pass in-memory tables.
    """
    import duckdb

    if not steps:
        raise FusionError("nothing to fuse: the plan is empty")
    con = duckdb.connect()
    tables: dict[str, pa.Table] = {}
    canon: dict[str, dict[str, str]] = {}  # table -> its column -> the part's canonical column
    part_of: dict[str, int] = {}
    parts: list[list[str]] = []
    joins: list[dict] = []

    def load(path: str) -> pa.Table:
        if path not in tables:
            tables[path] = reader(lake_root, path)
        return tables[path]

    for s in steps:
        new, op = s["new"], s["op"]
        cols = load(new).column_names
        if op in ("start", "join"):
            part_of[new] = len(parts)
            parts.append([new])
            canon[new] = {c: c for c in cols}
            if op == "join":
                if s.get("anchor") not in part_of:
                    raise FusionError(f"plan step joins {new} to {s.get('anchor')}, which no earlier step added")
                joins.append(s)
        elif op == "union":
            anchor = s.get("anchor")
            if anchor not in part_of:
                raise FusionError(f"plan step unions {new} into {anchor}, which no earlier step added")
            part_of[new] = part_of[anchor]
            parts[part_of[anchor]].append(new)
            mapping = s.get("mapping") or {}
            # DuckDB compares names case-blind: "Name" and "name" are one column to it
            taken = {v.lower() for v in canon[anchor].values()}
            used: set[str] = set()
            canon[new] = {}
            for c in cols:
                target = canon[anchor].get(mapping.get(c, ""), None)
                if target is None or target.lower() in used:
                    target = c if c.lower() not in taken else f"{c}__{_label(os.path.basename(new))}"
                    while target.lower() in used or (target != c and target.lower() in taken):
                        target += "_"
                used.add(target.lower())
                canon[new][c] = target
        else:
            raise FusionError(f"unknown plan step op {op!r}")

    labels = _unique_labels([p[0] for p in parts])
    part_info, out_names = [], {}
    ctes = []  # the temp tables below as the common table expressions of Fused.sql
    for k, members in enumerate(parts):
        selects, scans = [], []
        # the provenance column takes a name no member column has: a lake column named
        # "_src" must neither overwrite it nor be dropped
        src = "_src"
        while any(src.lower() in {v.lower() for v in canon[m].values()} for m in members):
            src += "_"
        for m in members:
            name = f"m{len(tables)}_{abs(hash(m)) % 10**8}"
            con.register(name, load(m))
            cols = ", ".join(f"{_q(c)} AS {_q(canon[m][c])}" for c in load(m).column_names)
            selects.append(f"SELECT {cols}, {_lit(m)} AS {_q(src)} FROM {name}")
            scans.append(f"SELECT {cols}, {_lit(m)} AS {_q(src)} FROM {_scan(lake_root, m)}")
        con.sql(f"CREATE TEMP TABLE p{k} AS " + " UNION ALL BY NAME ".join(selects))
        ctes.append(f"p{k} AS (" + " UNION ALL BY NAME ".join(scans) + ")")
        out_cols = [c for c in con.sql(f"SELECT * FROM p{k} LIMIT 0").columns if c != src]
        for c in out_cols:
            full = f"{labels[k]}.{c}"
            if full.lower() in out_names:  # "a.b" + "c" and "a" + "b.c": one name for two columns
                raise FusionError(f"fused column name {full!r} would stand for two columns ({out_names[full.lower()]}); rename one of the files")
            out_names[full.lower()] = f"{members[0]}: {c}"
        # every fused column name holds a '.', so _src<k> (no dot) cannot collide with one
        proj = ", ".join(f"{_q(c)} AS {_q(labels[k] + '.' + c)}" for c in out_cols)
        part_sql = f"SELECT {proj}{', ' if proj else ''}{_q(src)} AS _src{k} FROM p{k}"
        con.sql(f"CREATE TEMP TABLE q{k} AS {part_sql}")
        ctes.append(f"q{k} AS ({part_sql})")
        part_info.append({"label": labels[k], "tables": members, "rows": con.sql(f"SELECT count(*) FROM q{k}").fetchall()[0][0]})

    part_tables = [_arrow(con.sql(f"SELECT * FROM q{k}")) for k in range(len(parts))]
    types = {}
    for k in range(len(parts)):
        rel = con.sql(f"SELECT * FROM q{k} LIMIT 0")
        types.update({c: t for c, t in zip(rel.columns, rel.types)})

    current = "q0"
    rows = part_info[0]["rows"]
    fused_steps, truncated, warnings = [], False, []
    left_out: set[int] = set()

    def leave_out(new: str, why: str) -> None:
        left_out.add(part_of[new])
        warnings.append(why)
        fused_steps.append({"op": "join", "new": new, "rows": rows, "left_out": True})

    for i, s in enumerate(joins):
        anchor, new = s["anchor"], s["new"]
        keys = s.get("keys") or {}
        ka, kn = keys.get("anchor_column"), keys.get("new_column")
        if ka not in canon[anchor] or kn not in canon[new]:
            raise FusionError(f"join key {anchor}.{ka} = {new}.{kn}: column missing from the table (re-run raylake index)")
        if part_of[anchor] in left_out:
            leave_out(new, f"{new} joins {anchor}, which was left out; left out too")
            continue
        left = f"{labels[part_of[anchor]]}.{canon[anchor][ka]}"
        right = f"{labels[part_of[new]]}.{canon[new][kn]}"
        tl, tr = str(types.get(left, "")).upper(), str(types.get(right, "")).upper()
        numeric = any(x in tl for x in ("INT", "DOUBLE", "FLOAT", "DECIMAL")) and any(x in tr for x in ("INT", "DOUBLE", "FLOAT", "DECIMAL"))
        if numeric:
            cond = f"CAST(a.{_q(left)} AS DOUBLE) = CAST(b.{_q(right)} AS DOUBLE)"
        else:
            cond = f"lower(trim(CAST(a.{_q(left)} AS VARCHAR))) = lower(trim(CAST(b.{_q(right)} AS VARCHAR)))"
        src = f"FROM {current} a JOIN q{part_of[new]} b ON {cond}"
        n = con.sql(f"SELECT count(*) {src}").fetchall()[0][0]
        limit = ""
        if n > max_rows:
            truncated = True
            limit = f" LIMIT {int(max_rows)}"
            warnings.append(f"join {anchor}.{ka} = {new}.{kn} would produce {n:,} rows; kept the first {max_rows:,}")
        elif n == 0:
            if rows:
                leave_out(new, f"join {anchor}.{ka} = {new}.{kn} matched no rows; {new} is left out of the fused table")
                continue
            warnings.append(f"join {anchor}.{ka} = {new}.{kn} matched no rows")
        con.sql(f"CREATE TEMP TABLE j{i} AS SELECT a.*, b.* {src}{limit}")
        ctes.append(f"j{i} AS (SELECT a.*, b.* {src}{limit})")
        current = f"j{i}"
        rows = min(n, max_rows)
        fused_steps.append({"op": "join", "new": new, "rows": rows})

    # parts never joined (a plan whose later parts attach by union only) stay as their own rows
    joined = {0} | {part_of[s["new"]] for s in joins}
    if len(joined) < len(parts):
        warnings.append("some parts are not connected by a join and are left out of the fused table")
    used = joined - left_out
    srcs = [f"_src{k}" for k in sorted(used)]
    internal = {f"_src{k}" for k in range(len(parts))}
    cols = [c for c in con.sql(f"SELECT * FROM {current} LIMIT 0").columns if c not in internal]
    prov = f"concat_ws('{_SEP}', {', '.join(srcs)})" if len(srcs) > 1 else srcs[0]
    select = ", ".join(_q(c) for c in cols)
    final = f"SELECT {select}{', ' if select else ''}{prov} AS _provenance FROM {current}"
    table = _arrow(con.sql(final))
    con.close()
    sql = "WITH " + ",\n".join(ctes) + "\n" + final
    names = {m: {c: f"{labels[part_of[m]]}.{canon[m][c]}" for c in canon[m]} for m in canon}
    return Fused(table, part_info, fused_steps, truncated, warnings, sql=sql, names=names, part_tables=part_tables,
                 ctes=ctes, final=final)


def _arrow(rel) -> pa.Table:
    table = rel.arrow()
    # DuckDB ≥ 1.4 may hand back a RecordBatchReader
    return table if isinstance(table, pa.Table) else table.read_all()
