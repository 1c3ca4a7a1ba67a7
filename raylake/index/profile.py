"""Profile one table: per column its type, counts, key-likeness, sample, summary and MinHash.

Values are normalised before they are compared anywhere in raylake (MinHash, the value
index, join containment): numbers print canonically (``67.0`` → ``67``), timestamps as
``YYYY-MM-DD HH:MM:SS``, text is trimmed and case-folded. So ``"Alabama "`` in one file and
``"alabama"`` in another are the same value, and an integer key stored as a float still
joins.
"""
from __future__ import annotations

import decimal
import json
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from raylake.config import IndexConfig
from raylake.kernels import minhash

# tokens of a humanised header that mark a key (``station id``, ``customer no``); a header of
# these alone (``id``) is a generic key that names no entity
KEY_WORDS = frozenset({"id", "code", "key", "no", "number", "num", "ref"})
# a raw header ending in a key word or in uid/uuid (``Member_ID``, ``userid``) hints at a key
_KEY_NAME = re.compile(r"(^|[^a-z])(" + "|".join(sorted(KEY_WORDS | {"uid", "uuid"})) + r")$|id$", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def humanize(name: str) -> str:
    """``"Budget_in_Billions"`` → ``"budget in billions"``; ``"BornState"`` → ``"born state"``."""
    s = _CAMEL.sub(" ", str(name))
    s = re.sub(r"[_\-./]+", " ", s)
    s = re.sub(r"(?<=[a-zA-Z])(?=\d)|(?<=\d)(?=[a-zA-Z])", " ", s)
    return " ".join(s.lower().split())


def norm_name(name: str) -> str:
    """Spelling-free header key: ``"Born State"``, ``"BORN_STATE"`` and ``"bornstate"`` agree."""
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def dtype_of(t: pa.DataType) -> str:
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "float"
    if pa.types.is_temporal(t):
        return "date"
    return "text"


def canonical(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Normalised string form of a column's values (nulls kept as nulls)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    t = col.type
    if pa.types.is_temporal(t):
        if pa.types.is_timestamp(t) or pa.types.is_date(t):
            out = pc.strftime(col, format="%Y-%m-%d %H:%M:%S" if pa.types.is_timestamp(t) else "%Y-%m-%d")
        else:
            out = pc.cast(col, pa.string())
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        out = pc.utf8_lower(pc.utf8_trim_whitespace(col))
        out = pc.if_else(pc.equal(out, ""), pa.scalar(None, out.type), out)
    elif pa.types.is_decimal(t):
        # a decimal prints its scale ("12.50"); drop the trailing zeros so it reads like the same float ("12.5")
        out = pc.replace_substring_regex(pc.cast(col, pa.string()), r"(\.\d*?)0+$", r"\1")
        out = pc.replace_substring_regex(out, r"\.$", "")
    else:
        out = pc.cast(col, pa.string())
    return out.cast(pa.large_string())


@dataclass
class TableProfile:
    """What a profiling task returns for one file."""

    path: str
    sha256: str
    n_rows: int
    columns: list[dict]  # one record per column (see ``profile_table``)
    signatures: np.ndarray  # (n_cols, num_perm) uint32
    values: list[list[str]]  # per column: its value-index entries (empty when not indexed)
    table_text: str


def json_number(v):
    """A number JSON stores as a number: a Decimal (Parquet decimal128/256) becomes an int when
    whole, else the nearest float; stored as text it would no longer compare with numbers."""
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    return v


def _summary(col: pa.ChunkedArray, dtype: str, canon: pa.Array, cfg: IndexConfig) -> dict:
    valid = canon.drop_null()
    if len(valid) == 0:
        return {}
    if dtype in ("int", "float"):
        mm = pc.min_max(col)
        mean = pc.mean(col).as_py()
        return {"min": json_number(mm["min"].as_py()), "max": json_number(mm["max"].as_py()),
                "mean": None if mean is None else round(float(mean), 6)}
    if dtype == "date":
        return {"min": pc.min(valid).as_py(), "max": pc.max(valid).as_py()}
    vc = pc.value_counts(valid)
    counts = vc.field("counts").to_numpy()
    order = np.argsort(-counts, kind="stable")[: cfg.summary_top]
    vals = vc.field("values")
    return {"top": [[vals[int(i)].as_py(), int(counts[i])] for i in order]}


def profile_table(path: str, table: pa.Table, sha256: str, cfg: IndexConfig) -> TableProfile:
    n = table.num_rows
    records, value_lists, hash_parts, offsets = [], [], [], [0]
    for pos, (name, col) in enumerate(zip(table.column_names, table.columns)):
        dtype = dtype_of(col.type)
        canon = canonical(col)
        nulls = canon.null_count
        distinct = pc.unique(canon.drop_null())
        n_distinct = len(distinct)
        non_null = n - nulls
        uniqueness = n_distinct / non_null if non_null else 0.0
        h = minhash.hash_strings(distinct)
        hash_parts.append(h)
        offsets.append(offsets[-1] + len(h))
        raw = col.drop_null() if isinstance(col, pa.ChunkedArray) else col
        sample = []
        seen = set()
        for v in raw.slice(0, 200).to_pylist():
            s = str(v).strip()
            if s and s not in seen:
                seen.add(s)
                sample.append(s[:60])
                if len(sample) >= cfg.sample_size:
                    break
        words = humanize(name)
        text_sample = ", ".join(sample[: cfg.embed_sample_values])
        records.append(
            {
                "position": pos,
                "name": str(name),
                "norm_name": norm_name(name),
                "words": words,
                "dtype": dtype,
                "n_rows": n,
                "null_frac": (nulls / n) if n else 0.0,
                "n_distinct": n_distinct,
                "uniqueness": uniqueness,
                "key_like": bool(
                    dtype in ("int", "text")
                    and ((non_null >= 2 and uniqueness >= cfg.key_uniqueness and nulls <= 0.05 * n) or (n == 0 and _KEY_NAME.search(str(name))))
                ),
                "name_key_hint": bool(_KEY_NAME.search(str(name))),
                "sample": sample,
                "summary": json.dumps(_summary(col, dtype, canon, cfg), default=str),
                "header_text": words,
                "sample_text": f"{words}: {text_sample}" if text_sample else words,
            }
        )
        if dtype == "text" and 0 < n_distinct <= cfg.value_index_max_distinct:
            vals = [v for v in distinct.to_pylist() if len(v) <= cfg.value_max_chars]
            value_lists.append(vals)
        else:
            value_lists.append([])
    hashes = np.concatenate(hash_parts) if hash_parts else np.empty(0, np.uint32)
    sigs = minhash.signatures(hashes, np.asarray(offsets, np.int64), cfg.num_perm, cfg.minhash_seed)
    return TableProfile(path, sha256, n, records, sigs, value_lists, table_text(table, cfg))


def table_text(table: pa.Table, cfg: IndexConfig) -> str:
    """The text a table is embedded by: its humanised header, then its first rows."""
    header = ", ".join(humanize(c) for c in table.column_names)
    rows = table.slice(0, cfg.table_text_rows).to_pylist()
    body = " ; ".join(", ".join(str(v)[:40] for v in r.values() if v is not None) for r in rows)
    return f"{header} | {body}" if body else header
