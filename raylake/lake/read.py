"""Read one lake file into an Arrow table, or say in one line why it cannot be indexed.

CSV: the encoding (BOM, UTF-8, then cp1252, then Latin-1) and the dialect (delimiter and
quote, with ``csv.Sniffer`` on the first 64 KiB) are sniffed, then pyarrow parses it.
Parquet: pyarrow. Every refusal raises :class:`~raylake.errors.SkipFile` with the reason.

A header-only file is a table with zero rows, not an error: its header still tells what
it holds (71 of the Spider lake's files are like that). A file with no bytes, or with
nothing but blank lines, is skipped.
"""
from __future__ import annotations

import csv
import io
import json
import re

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from raylake.errors import SkipFile

_SNIFF_BYTES = 64 * 1024
_NUMBER = re.compile(r"^[+-]?(\d+([.,]\d*)?|\.\d+)([eE][+-]?\d+)?$")


def file_kind(path: str) -> str | None:
    p = path.lower()
    if p.endswith((".parquet", ".pq")):
        return "parquet"
    if p.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt")):
        return "csv"
    return None


def read_table(path: str, data: bytes, *, max_field_bytes: int = 1 << 20, max_rows: int | None = None) -> pa.Table:
    """Parse ``data`` (the bytes of lake file ``path``) into a table with string column names."""
    kind = file_kind(path)
    if kind is None:
        raise SkipFile("not a CSV or Parquet file (by its extension)")
    if not data:
        raise SkipFile("empty file (0 bytes)")
    table = _read_parquet(data) if kind == "parquet" else _read_csv(path, data, max_field_bytes)
    _check_header(table.column_names)
    if max_rows is not None and table.num_rows > max_rows:
        table = table.slice(0, max_rows)
    return table


def _read_parquet(data: bytes) -> pa.Table:
    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception as exc:
        raise SkipFile(f"unreadable Parquet: {_one_line(exc)}") from None
    cols = []
    for col in table.columns:
        t = col.type
        if pa.types.is_nested(t) or pa.types.is_dictionary(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
            # nested values become their JSON text, so they can still be profiled and matched
            col = pa.array([None if v is None else json.dumps(v, default=str) for v in col.to_pylist()], pa.string())
        cols.append(col)
    return pa.table(cols, names=[str(n) for n in table.column_names])


def _decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if b"\x00" in data[:8192]:
        raise SkipFile("binary file, not CSV text (it contains NUL bytes)")
    for enc in ("utf-8", "cp1252"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def _sniff(text: str, path: str) -> tuple[str, str]:
    default = "\t" if path.lower().endswith((".tsv", ".tsv.gz")) else ","
    head = text[:_SNIFF_BYTES]
    if "\n" in head:  # never sniff a partial last line
        head = head[: head.rfind("\n")]
    try:
        d = csv.Sniffer().sniff(head, delimiters=",;\t|")
        delim, quote = d.delimiter, d.quotechar or '"'
    except csv.Error:
        return default, '"'
    first = head.split("\n", 1)[0]
    if first.count(default) > first.count(delim):  # Sniffer is fooled by commas inside values
        delim = default
    return delim, quote


def _read_csv(path: str, data: bytes, max_field_bytes: int) -> pa.Table:
    if path.lower().endswith(".gz"):
        import gzip

        try:
            data = gzip.decompress(data)
        except OSError as exc:
            raise SkipFile(f"corrupt gzip: {_one_line(exc)}") from None
    text = _decode(data)
    if not text.strip():
        raise SkipFile("no header and no rows (the file is blank)")
    if not text.endswith(("\n", "\r")):
        text += "\n"  # pyarrow cannot infer the columns of a header-only file without a final newline
    delim, quote = _sniff(text, path)
    first = next(csv.reader(io.StringIO(text[:_SNIFF_BYTES]), delimiter=delim, quotechar=quote), [])
    if first and all(_NUMBER.match(v.strip() or "0") for v in first) and any(v.strip() for v in first):
        raise SkipFile("no header row: the first line looks like data (" + ",".join(first[:4]) + ")")
    try:
        table = pacsv.read_csv(
            io.BytesIO(text.encode("utf-8")),
            read_options=pacsv.ReadOptions(block_size=max(4 * max_field_bytes, 1 << 22)),
            parse_options=pacsv.ParseOptions(delimiter=delim, quote_char=quote, newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(strings_can_be_null=True),
        )
    except pa.ArrowInvalid as exc:
        msg = _one_line(exc)
        if "straddling" in msg or "block" in msg:
            raise SkipFile(f"a field is larger than {max_field_bytes} bytes") from None
        raise SkipFile(f"malformed CSV: {msg}") from None
    for name, col in zip(table.column_names, table.columns):
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            longest = pc.max(pc.binary_length(col)).as_py() if len(col) else 0
            if longest and longest > max_field_bytes:
                raise SkipFile(f"a field of column {name!r} is {longest} bytes (limit {max_field_bytes})")
    return table


def _check_header(names: list[str]) -> None:
    if not names:
        raise SkipFile("no columns")
    empty = [i + 1 for i, n in enumerate(names) if not str(n).strip()]
    if empty:
        raise SkipFile(f"empty header name in column {empty[0]} of {len(names)}")
    seen: dict[str, int] = {}
    for n in names:
        key = str(n).strip()
        if key in seen:
            raise SkipFile(f"duplicate header name {key!r}")
        seen[key] = 1


def _one_line(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    return msg[:200] + ("…" if len(msg) > 200 else "")
