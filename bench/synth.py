"""A synthetic, NYC-Open-Data-like lake with known join paths and union groups.

    python -m bench.synth OUT --tables 1200 [--seed 0] [--questions 800] [--rows 20 400]

writes ``OUT/lake/<4x4 id>.csv`` (neutral, Socrata-style file names), ``OUT/ground_truth.json``
and, with ``--questions``, ``OUT/questions.jsonl`` in the Spider lake's format
(``id, question, gold_tables, gold_sql, db_id, n_tables, n_gold_files, has_union_shards``).

A lake is a sequence of *families*, each drawn from one theme of :mod:`bench.synth_vocab`
(311 requests, restaurant inspections, permits, ...). A family is one wide source table
cut into a join path:

- **dimension tables**: entity attributes (restaurants, inspectors, locations) moved out
  to their own table and referenced by a foreign key, sometimes under another name
  (``inspector`` → ``inspector_id``);
- **vertical parts**: the fact table's columns split into 2–3 tables sharing its key, the
  later parts missing some rows;
- **bridge tables**: a many-to-many link between the fact's key and another entity;
- **shards**: any table cut row-wise into 2–4 files; half of the later shards get their
  headers re-spelled (CamelCase, UPPER, Title Case, no separators) and reordered.

Every file then gets cell noise (case, padding, typos, missing-value tokens, number and
date formats), per column as a real export would. Values come from shared vocabularies, so
unrelated families overlap on boroughs, zip codes and agencies, which is what makes real
lakes hard. Families are drawn from ``random.Random(f"{seed}:{family}")``: the output is a
pure function of ``(seed, tables, rows)``.

``ground_truth.json``::

    {"seed", "tables", "families": [{"id", "theme", "tables": {logical: [files]}}],
     "source_tables": {file: {"family", "source", "role", "shard"}},
     "join_pairs": [[file_a, header_a, file_b, header_b, "pk-pk" | "fk-pk"], ...],
     "union_groups": [{"source", "files", "columns": {file: {header: canonical}}}]}
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import itertools
import json
import math
import os
import random
import re
from dataclasses import dataclass, field

from bench.synth_vocab import ENTITIES, THEMES, VOCAB, Col, Theme

# ---------------------------------------------------------------------------- values

_AREA_CODES = ("212", "718", "347", "646", "929", "917")
_BORO_LETTERS = "MXKQR"
_MISSING = ("", "N/A", "Unspecified", "NULL")


def _weights(n: int, rng: random.Random) -> list[float]:
    """Zipf-like category frequencies, shuffled so that each table favours other values."""
    w = [1.0 / (i + 1) ** rng.uniform(0.6, 1.2) for i in range(n)]
    rng.shuffle(w)
    return w


def _draw(col: Col, n: int, rng: random.Random) -> list:
    """``n`` clean values of ``col`` (Python ints, floats, dates, datetimes or strings)."""
    kind, arg = col.kind, col.arg
    if kind == "id":
        return _draw_ids(arg, n, rng)
    if kind == "vocab":
        vocab = VOCAB[arg]
        return rng.choices(vocab, weights=_weights(len(vocab), rng), k=n)
    if kind == "int":
        lo, hi = arg
        return [rng.randint(lo, hi) for _ in range(n)]
    if kind in ("float", "money"):
        lo, hi, dec = arg if kind == "float" else (*arg, 2)
        return [round(rng.uniform(lo, hi), dec) for _ in range(n)]
    if kind in ("date", "datetime"):
        lo, hi = dt.date(arg[0], 1, 1).toordinal(), dt.date(arg[1], 12, 31).toordinal()
        days = [dt.date.fromordinal(rng.randint(lo, hi)) for _ in range(n)]
        if kind == "date":
            return days
        return [dt.datetime(d.year, d.month, d.day, rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)) for d in days]
    if kind == "time":
        return [f"{rng.randint(0, 23):02d}:{rng.choice((0, 15, 30, 45)):02d}" for _ in range(n)]
    if kind == "lat":
        return [round(rng.uniform(40.50, 40.91), 6) for _ in range(n)]
    if kind == "lon":
        return [round(rng.uniform(-74.25, -73.70), 6) for _ in range(n)]
    if kind == "address":
        return [f"{rng.randint(1, 2999)} {rng.choice(VOCAB['street'])}" for _ in range(n)]
    if kind == "phone":
        return [f"{rng.choice(_AREA_CODES)}-{rng.randint(200, 999)}-{rng.randint(0, 9999):04d}" for _ in range(n)]
    if kind == "company":
        return [f"{rng.choice(VOCAB['company_prefix'])} {rng.choice(VOCAB['company_suffix'])}" for _ in range(n)]
    if kind == "restaurant":
        words = VOCAB["restaurant_word"]
        return [" ".join(rng.sample(words, 2)) for _ in range(n)]
    if kind == "apt":
        return [f"{rng.randint(1, 30)}{rng.choice('ABCDEFGH')}" for _ in range(n)]
    if kind == "school_year":
        return [f"{y}-{(y + 1) % 100:02d}" for y in (rng.randint(2013, 2023) for _ in range(n))]
    raise ValueError(f"unknown column kind {kind!r}")


def _draw_ids(style: str, n: int, rng: random.Random) -> list:
    """``n`` distinct key values; 'big' and code keys land in family-specific ranges, as real ids do."""
    if style == "seq":
        start = rng.choice((1, 1, 1, 101, 1001))
        return list(range(start, start + n))
    if style == "big":
        base = rng.randrange(1_000_000, 90_000_000)
        return rng.sample(range(base, base + 40 * n + 100), n)
    if style.startswith("code:"):
        base = rng.randrange(0, 9_000_000)
        return [f"{style[5:]}{v:07d}" for v in rng.sample(range(base, base + 40 * n + 100), n)]
    if style == "dbn":
        pool = [f"{d:02d}{b}{s:03d}" for d in range(1, 33) for b in _BORO_LETTERS for s in range(1, 1000, 7)]
        return rng.sample(pool, n)
    if style == "park":
        pool = [f"{b}{s:03d}" for b in _BORO_LETTERS for s in range(1, 1000)]
        return rng.sample(pool, n)
    raise ValueError(f"unknown id style {style!r}")


# ---------------------------------------------------------------------------- logical tables


@dataclass
class Logical:
    """One source table of a family, before it is sharded and written."""

    name: str  # its name in gold SQL
    role: str  # fact | part | dimension | entity | bridge | single
    entity: str  # plural phrase of what a row is
    singular: str
    cols: list[Col]
    data: dict[str, list]  # clean values per column name
    key: str | None = None  # primary key column name
    domains: dict[str, str] = field(default_factory=dict)  # column -> key domain it holds

    @property
    def n_rows(self) -> int:
        return len(next(iter(self.data.values())))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _subset(cols, rng: random.Random, lo: int) -> list[Col]:
    k = rng.randint(min(lo, len(cols)), len(cols))
    chosen = set(rng.sample(range(len(cols)), k))
    return [c for i, c in enumerate(cols) if i in chosen]


def _family(fid: int, theme: Theme, rng: random.Random, rows: tuple[int, int], single: bool) -> list[Logical]:
    """The logical tables of one family (see the module docstring)."""
    n = max(rows[0], min(rows[1], round(math.exp(rng.uniform(math.log(rows[0]), math.log(rows[1]))))))
    tag = f"f{fid:05d}"
    base = _slug(theme.entity)
    key = theme.key
    fact_cols = _subset(theme.cols, rng, max(4, len(theme.cols) // 2))
    keys = _draw(key, n, rng)
    fact = Logical(f"{base}_{tag}", "single" if single else "fact", theme.entity, theme.singular,
                   [key, *fact_cols], {key.name: keys}, key.name, {key.name: f"{tag}.{key.name}"})
    for c in fact_cols:
        fact.data[c.name] = _draw(c, n, rng)
    if single:
        return [fact]

    n_dims = min(len(theme.dims), rng.choice((0, 1, 1, 2)))
    vsplit = rng.random() < 0.45
    bridge = bool(theme.bridged) and rng.random() < 0.3
    if not (n_dims or vsplit or bridge):
        vsplit = True
    out: list[Logical] = []
    for ent_name in rng.sample(theme.dims, n_dims):
        ent = ENTITIES[ent_name]
        m = max(4, n // rng.randint(2, 8))
        dim = _entity_table(f"{ent.name}_{tag}", "dimension", ent, m, tag, rng)
        fk = ent.key if rng.random() < 0.6 or not ent.key.aliases else Col(rng.choice(ent.key.aliases), ent.key.phrase, "id")
        ids = dim.data[ent.key.name]
        fact.data[fk.name] = rng.choices(ids, weights=_weights(len(ids), rng), k=n)
        fact.cols.insert(rng.randint(1, len(fact.cols)), fk)
        fact.domains[fk.name] = dim.domains[ent.key.name]
        out.append(dim)
    parts = _split(fact, rng) if vsplit else [fact]
    if bridge:
        ent = ENTITIES[rng.choice(theme.bridged)]
        other = _entity_table(f"{ent.name}_{tag}", "entity", ent, max(4, n // rng.randint(3, 10)), tag, rng)
        links = sorted({(k, e) for k in keys for e in rng.sample(other.data[ent.key.name], rng.choice((1, 1, 2, 3)))})
        bcols = [key, ent.key]
        data = {key.name: [k for k, _ in links], ent.key.name: [e for _, e in links]}
        if rng.random() < 0.5:
            extra = Col("assigned_date", "assignment date", "date", (2015, 2024))
            bcols.append(extra)
            data[extra.name] = _draw(extra, len(links), rng)
        out.append(Logical(f"{base}_{ent.name}_{tag}", "bridge", f"{theme.singular} {ent.name}", f"{theme.singular} {ent.singular}",
                           bcols, data, None, {key.name: fact.domains[key.name], ent.key.name: other.domains[ent.key.name]}))
        out.append(other)
    return parts + out


def _entity_table(name: str, role: str, ent, m: int, tag: str, rng: random.Random) -> Logical:
    cols = [ent.key, *_subset(ent.cols, rng, 2)]
    t = Logical(name, role, ent.name, ent.singular, cols, {}, ent.key.name, {ent.key.name: f"{tag}.{ent.key.name}"})
    for c in cols:
        t.data[c.name] = _draw(c, m, rng)
    return t


def _split(fact: Logical, rng: random.Random) -> list[Logical]:
    """Vertical parts sharing the key; later parts lose up to 15% of the rows."""
    rest = fact.cols[1:]
    k = 3 if len(rest) >= 9 and rng.random() < 0.4 else 2
    rng.shuffle(rest)
    groups = [sorted(rest[i::k], key=fact.cols.index) for i in range(k)]
    parts = []
    n = fact.n_rows
    for i, g in enumerate(groups):
        rows = list(range(n)) if i == 0 else sorted(rng.sample(range(n), int(n * rng.uniform(0.85, 1.0))))
        cols = [fact.cols[0], *g]
        data = {c.name: [fact.data[c.name][r] for r in rows] for c in cols}
        domains = {c: d for c, d in fact.domains.items() if c in data}
        parts.append(Logical(f"{fact.name}_p{i + 1}", "part", fact.entity, fact.singular, cols, data, fact.key, domains))
    return parts


# ---------------------------------------------------------------------------- files and noise

_STYLES = ("snake", "title", "upper", "camel", "nosep")


def respell(name: str, style: str) -> str:
    words = name.split("_")
    if style == "title":
        return " ".join(w.capitalize() for w in words)
    if style == "upper":
        return name.upper()
    if style == "camel":
        return "".join(w.capitalize() for w in words)
    if style == "nosep":
        return "".join(words)
    return name


@dataclass
class Noise:
    """How one exported file spells its values (fixed per file and column, as real exports are)."""

    date_fmt: str
    datetime_fmt: str
    missing: str
    rng: random.Random
    col_case: dict = field(default_factory=dict)
    col_num: dict = field(default_factory=dict)

    @classmethod
    def draw(cls, rng: random.Random) -> "Noise":
        return cls(
            date_fmt=rng.choice(("%Y-%m-%d", "%m/%d/%Y", "%m/%d/%Y", "%Y-%m-%dT00:00:00.000")),
            datetime_fmt=rng.choice(("%Y-%m-%d %H:%M:%S", "%m/%d/%Y %I:%M:%S %p", "%Y-%m-%dT%H:%M:%S.000")),
            missing=rng.choice(_MISSING),
            rng=rng,
        )

    def column(self, col: Col, values: list, is_key: bool) -> list[str]:
        rng = self.rng
        if col.kind in ("date", "datetime"):
            fmt = self.date_fmt if col.kind == "date" else self.datetime_fmt
            out = [v.strftime(fmt) for v in values]
        elif col.kind in ("int", "float", "money"):
            style = rng.choice(("plain", "plain", "plain", "thousands", "decimal")) if col.kind != "money" else rng.choice(("plain", "currency", "thousands"))
            out = [_number(v, style) for v in values]
        else:
            case = "asis" if is_key else rng.choice(("asis", "asis", "asis", "upper", "lower", "title"))
            out = [_case(str(v), case) for v in values]
        if is_key:
            return out
        text = col.kind in ("vocab", "address", "company", "restaurant")
        for i in range(len(out)):
            r = rng.random()
            if r < 0.02:
                out[i] = self.missing if text or self.missing in ("", "N/A", "NULL") else ""
            elif r < 0.04:
                out[i] = rng.choice((" ", "  ", "")) + out[i] + rng.choice((" ", "  "))
            elif text and r < 0.05:
                out[i] = _typo(out[i], rng)
            elif text and r < 0.06:
                out[i] = _case(out[i], rng.choice(("upper", "lower", "title")))
        return out


def _number(v, style: str) -> str:
    if style == "thousands":
        return f"{v:,}" if isinstance(v, int) else f"{v:,.2f}"
    if style == "decimal":
        return f"{v:.1f}" if isinstance(v, int) else f"{v:.3f}"
    if style == "currency":
        return f"${v:,.2f}"
    return str(v)


def _case(s: str, how: str) -> str:
    return {"upper": s.upper, "lower": s.lower, "title": s.title}.get(how, lambda: s)()


def _typo(s: str, rng: random.Random) -> str:
    if len(s) < 4:
        return s
    i = rng.randrange(1, len(s) - 1)
    op = rng.randrange(3)
    if op == 0:
        return s[:i] + s[i + 1] + s[i] + s[i + 2:]  # swap
    if op == 1:
        return s[:i] + s[i + 1:]  # drop
    return s[:i] + s[i] + s[i:]  # double


def _file_name(seed: int, fid: int, j: int, taken: set[str]) -> str:
    """A Socrata-style '4x4' id (``erm2-nwe9``), stable for (seed, family, table)."""
    alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
    salt = 0
    while True:
        h = hashlib.sha1(f"{seed}:{fid}:{j}:{salt}".encode()).digest()
        s = "".join(alphabet[b % len(alphabet)] for b in h[:8])
        name = f"{s[:4]}-{s[4:]}.csv"
        if name not in taken:
            taken.add(name)
            return name
        salt += 1


@dataclass
class Written:
    """One file of a logical table: its name and the header each logical column got."""

    file: str
    headers: dict[str, str]  # logical column -> header in the file
    shard: int | None


def _write(t: Logical, lake_dir: str, names: list[str], style: str, rng: random.Random) -> list[Written]:
    """Write ``t`` as ``len(names)`` row-wise shards (one file when ``names`` has one name)."""
    n, k = t.n_rows, len(names)
    w = [rng.uniform(0.5, 1.5) for _ in range(k)]
    cuts = [round(n * sum(w[: i + 1]) / sum(w)) for i in range(k - 1)]
    order = list(range(n))
    rng.shuffle(order)
    out = []
    for s, (lo, hi) in enumerate(zip([0, *cuts], [*cuts, n])):
        rows = sorted(order[lo:hi])  # a random share of the rows, in the source's order
        cols = list(t.cols)
        st = style
        if s > 0 and rng.random() < 0.5:  # re-spelled, reordered shard
            st = rng.choice([x for x in _STYLES if x != style])
            rng.shuffle(cols)
        headers = {c.name: respell(c.name, st) for c in cols}
        noise = Noise.draw(rng)
        values = [noise.column(c, [t.data[c.name][r] for r in rows], c.name in t.domains) for c in cols]
        with open(os.path.join(lake_dir, names[s]), "w", newline="", encoding="utf-8") as fh:
            wr = csv.writer(fh)
            wr.writerow([headers[c.name] for c in cols])
            wr.writerows(zip(*values))
        out.append(Written(names[s], headers, s if k > 1 else None))
    return out


# ---------------------------------------------------------------------------- ground truth


def _join_pairs(tables: list[Logical], files: dict[str, list[Written]]) -> tuple[list[list], list[tuple[str, str, str, str]]]:
    """File-level join pairs, and the logical ones ``(table_a, col_a, table_b, col_b)``.

    Two columns of different tables join when they hold the same key domain and at least
    one of them is its table's primary key (two foreign keys to one table do not join).
    """
    logical, pairs = [], []
    holders = [(t, c, d) for t in tables for c, d in t.domains.items()]
    for (ta, ca, da), (tb, cb, db) in itertools.combinations(holders, 2):
        if ta is tb or da != db or not (ta.key == ca or tb.key == cb):
            continue
        kind = "pk-pk" if ta.key == ca and tb.key == cb else "fk-pk"
        logical.append((ta.name, ca, tb.name, cb))
        for fa in files[ta.name]:
            for fb in files[tb.name]:
                pairs.append([fa.file, fa.headers[ca], fb.file, fb.headers[cb], kind])
    return pairs, logical


# ---------------------------------------------------------------------------- questions

_JOIN_TEMPLATES = (
    "Which distinct {T} values belong to {X} linked to {Y} with {F} '{v}'?",
    "Show the {T} of {X} connected to {Y} that have {F} {v}.",
)
_SAME_TEMPLATES = (  # target and filter in two tables of the same entity (vertical parts)
    "List the {T} for {Y} whose {F} is {v}.",
    "Which {T} values are recorded for {Y} where the {F} equals '{v}'?",
    "What is the {T} of the {y} with {F} '{v}'?",
)
_UNION_TEMPLATES = (
    "How many {Y} have {F} '{v}'?",
    "Count all {Y} whose {F} is {v}.",
    "List the {T} of every {y} with {F} '{v}'.",
)
_FILTER_KINDS = ("vocab", "int", "date", "school_year")


@dataclass
class _Material:
    """What questions about one family need, kept after its data is written and dropped."""

    fid: int
    tables: dict[str, Logical]  # name -> table, data cut to a few rows
    edges: list[tuple[str, str, str, str]]
    files: dict[str, list[str]]


def _material(fid: int, tables: list[Logical], logical_pairs, files: dict[str, list[Written]]) -> _Material:
    small = {}
    for t in tables:
        small[t.name] = Logical(t.name, t.role, t.entity, t.singular, t.cols, {c: v[:40] for c, v in t.data.items()}, t.key, t.domains)
    return _Material(fid, small, logical_pairs, {k: [w.file for w in v] for k, v in files.items()})


def _path(m: _Material, a: str, b: str) -> list[tuple[str, str, str, str]] | None:
    """Join steps from table ``a`` to ``b`` (breadth first over the family's join pairs)."""
    adj: dict[str, list] = {}
    for ta, ca, tb, cb in m.edges:
        adj.setdefault(ta, []).append((tb, (ta, ca, tb, cb)))
        adj.setdefault(tb, []).append((ta, (tb, cb, ta, ca)))
    prev = {a: None}
    frontier = [a]
    while frontier:
        nxt = []
        for t in frontier:
            for u, step in adj.get(t, []):
                if u not in prev:
                    prev[u] = step
                    nxt.append(u)
        frontier = nxt
    if b not in prev:
        return None
    steps = []
    while prev[b] is not None:
        steps.append(prev[b])
        b = prev[b][0]
    return steps[::-1]


def _phrase(t: Logical, c: Col) -> str:
    if t.role in ("dimension", "entity") and t.singular.split()[-1] not in c.phrase:
        return f"{t.singular} {c.phrase}"
    return c.phrase


def _question(m: _Material, rng: random.Random) -> dict | None:
    tables = list(m.tables.values())
    y = rng.choice(tables)
    filters = [c for c in y.cols if c.kind in _FILTER_KINDS and c.name not in y.domains]
    if not filters:
        return None
    f = rng.choice(filters)
    v = rng.choice(y.data[f.name])
    v = v.isoformat() if isinstance(v, dt.date) else v
    x = rng.choice(tables)
    targets = [c for c in x.cols if c.name not in x.domains and c is not f]
    if not targets:
        return None
    tc = rng.choice(targets)
    steps = _path(m, x.name, y.name) if x is not y else []
    if steps is None:
        return None
    chain = [x.name] + [s[2] for s in steps]
    gold = sorted(f for name in chain for f in m.files[name])
    if len(gold) < 2:
        return None
    alias = {name: f"T{i + 1}" for i, name in enumerate(chain)}
    lit = f"'{v}'" if isinstance(v, str) else str(v)
    if x is y:
        template = rng.choice(_UNION_TEMPLATES)
        sql = (f"SELECT {tc.name} FROM {y.name} WHERE {f.name} = {lit}" if "{T}" in template
               else f"SELECT count(*) FROM {y.name} WHERE {f.name} = {lit}")
    else:
        template = rng.choice(_SAME_TEMPLATES if x.entity == y.entity else _JOIN_TEMPLATES + _SAME_TEMPLATES[:2])
        joins = " ".join(f"JOIN {tb} AS {alias[tb]} ON {alias[ta]}.{ca} = {alias[tb]}.{cb}" for ta, ca, tb, cb in steps)
        sql = f"SELECT DISTINCT T1.{tc.name} FROM {x.name} AS T1 {joins} WHERE {alias[y.name]}.{f.name} = {lit}"
    text = template.format(T=_phrase(x, tc), X=x.entity, Y=y.entity, y=y.singular, F=_phrase(y, f), v=v)
    return {
        "question": text[0].upper() + text[1:],
        "gold_tables": gold,
        "gold_sql": sql,
        "db_id": f"family_{m.fid:05d}",
        "n_tables": len(chain),
        "n_gold_files": len(gold),
        "has_union_shards": any(len(m.files[name]) > 1 for name in chain),
    }


def make_questions(materials: list[_Material], n: int, seed: int) -> list[dict]:
    """``n`` distinct template questions, spread round-robin over families with 2+ files."""
    rng = random.Random(f"{seed}:questions")
    fams = [m for m in materials if sum(len(v) for v in m.files.values()) >= 2]
    rng.shuffle(fams)
    out, seen = [], set()
    for attempt in range(50 * max(n, 1)):
        if len(out) >= n or not fams:
            break
        q = _question(fams[attempt % len(fams)], rng)
        if q and q["question"] not in seen:
            seen.add(q["question"])
            out.append({"id": f"synth_{len(out):05d}", **q})
    return out


# ---------------------------------------------------------------------------- driver


def generate(out_dir: str, tables: int, seed: int = 0, questions: int = 0, rows: tuple[int, int] = (20, 400)) -> dict:
    """Write a lake of exactly ``tables`` CSV files under ``out_dir``; returns the ground truth."""
    if tables < 1:
        raise ValueError("tables must be at least 1")
    if rows[0] < 12 or rows[1] < rows[0]:
        raise ValueError("rows must be a range with a minimum of at least 12")
    lake_dir = os.path.join(out_dir, "lake")
    os.makedirs(lake_dir, exist_ok=True)
    taken: set[str] = set()
    truth = {"seed": seed, "tables": tables, "rows": list(rows), "families": [], "source_tables": {}, "join_pairs": [], "union_groups": []}
    materials = []
    written = fid = 0
    while written < tables:
        rng = random.Random(f"{seed}:{fid}")
        theme = THEMES[rng.randrange(len(THEMES))]
        style = rng.choices(_STYLES[:3], weights=(0.55, 0.3, 0.15))[0]
        fam = _family(fid, theme, rng, rows, single=rng.random() < 0.15)
        if len(fam) > tables - written:  # the last slots of the lake take single tables
            fam = _family(fid, theme, rng, rows, single=True)
        shards = [rng.randint(2, min(4, t.n_rows // 12)) if t.n_rows >= 24 and rng.random() < 0.3 else 1 for t in fam]
        if sum(shards) > tables - written:
            shards = [1] * len(fam)
        files: dict[str, list[Written]] = {}
        for j, (t, k) in enumerate(zip(fam, shards)):
            ws = _write(t, lake_dir, [_file_name(seed, fid, 10 * j + s, taken) for s in range(k)], style, rng)
            files[t.name] = ws
            for w in ws:
                truth["source_tables"][w.file] = {"family": fid, "source": t.name, "role": t.role, "shard": w.shard}
            if k > 1:
                truth["union_groups"].append(
                    {"source": t.name, "files": [w.file for w in ws], "columns": {w.file: {h: c for c, h in w.headers.items()} for w in ws}}
                )
        pairs, logical = _join_pairs(fam, files)
        truth["join_pairs"].extend(pairs)
        truth["families"].append({"id": fid, "theme": theme.title, "tables": {k: [w.file for w in v] for k, v in files.items()}})
        if questions:
            materials.append(_material(fid, fam, logical, files))
        written += sum(shards)
        fid += 1
    with open(os.path.join(out_dir, "ground_truth.json"), "w", encoding="utf-8") as fh:
        json.dump(truth, fh)
    if questions:
        qs = make_questions(materials, questions, seed)
        with open(os.path.join(out_dir, "questions.jsonl"), "w", encoding="utf-8") as fh:
            for q in qs:
                fh.write(json.dumps(q) + "\n")
        truth["questions"] = len(qs)
    return truth


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.synth", description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="output folder (the lake goes to OUT/lake)")
    p.add_argument("--tables", type=int, default=1000, help="number of CSV files to write")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--questions", type=int, default=0, help="template questions to write to OUT/questions.jsonl")
    p.add_argument("--rows", type=int, nargs=2, default=(20, 400), metavar=("MIN", "MAX"), help="rows per source table (log-uniform)")
    args = p.parse_args(argv)
    truth = generate(args.out, args.tables, args.seed, args.questions, tuple(args.rows))
    print(json.dumps({
        "out": args.out, "tables": len(truth["source_tables"]), "families": len(truth["families"]),
        "join_pairs": len(truth["join_pairs"]), "union_groups": len(truth["union_groups"]), "questions": truth.get("questions", 0),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
