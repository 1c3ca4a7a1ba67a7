"""Read one lake file into an Arrow table, or say in one line why it cannot be indexed.

CSV: the encoding (BOM, UTF-8, then cp1252, then Latin-1) and the dialect (delimiter and
quote, with ``csv.Sniffer`` on the first 64 KiB) are sniffed, then pyarrow parses it.
Parquet: pyarrow. Every refusal raises :class:`~raylake.errors.SkipFile` with the reason.

A reason never quotes the file's data (a header name at most): reasons are printed and
stored, and a file that should not have been read must not leak through them. A file is
read exactly or refused; nothing is altered to make it fit: a quote left open (which would
merge rows), headers that differ only in case (SQL engines cannot tell them apart), and
integers too large for a float (kept as text) are each handled explicitly.

A header-only file is a table with zero rows, not an error: its header still tells what
it holds (71 of the Spider lake's files are like that). A file with no bytes, or with
nothing but blank lines, is skipped.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zlib

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from raylake.errors import SkipFile

_SNIFF_BYTES = 64 * 1024
_NUMBER = re.compile(r"^[+-]?(\d+([.,]\d*)?|\.\d+)([eE][+-]?\d+)?$")
_BIG_INT = re.compile(r"^\s*[+-]?\d{16,}\s*$")  # more digits than a float64 holds exactly
# C0 control bytes other than tab, LF, VT, FF, CR and the DOS end-of-file mark: text has almost none
_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 11, 12, 13, 26)) + b"\x7f"


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
        if pa.types.is_dictionary(col.type):  # dictionary encoding is storage, not content
            col = col.cast(col.type.value_type)
        t = col.type
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
            try:
                col = col.cast(pa.string())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # not UTF-8: hex, as SQL prints bytes
                col = pa.array([None if v is None else "0x" + v.hex() for v in col.to_pylist()], pa.string())
        elif pa.types.is_nested(t):
            # nested values become their JSON text, so they can still be profiled and matched
            col = pa.array([None if v is None else json.dumps(v, default=str) for v in col.to_pylist()], pa.string())
        elif pa.types.is_float16(t):
            col = col.cast(pa.float32())  # few compute kernels take half floats
        cols.append(col)
    return pa.table(cols, names=[str(n) for n in table.column_names])


def _decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if b"\x00" in data[:8192]:
        raise SkipFile("binary file, not CSV text (it contains NUL bytes)")
    head = data[:8192]
    controls = sum(head.count(c) for c in _CONTROL)
    if controls > 8 and controls > len(head) // 100:
        raise SkipFile(f"binary file, not CSV text ({controls} control bytes in its first {len(head)})")
    for enc in ("utf-8", "cp1252"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def _sniff(text: str, path: str) -> tuple[str, str]:
    default = "\t" if path.lower().endswith((".tsv", ".tsv.gz")) else ","
    head = text[:_SNIFF_BYTES]
    end = max(head.rfind("\n"), head.rfind("\r"))  # CR alone ends lines too (classic Mac files)
    if end > 0:  # never sniff a partial last line
        head = head[:end]
    try:
        d = csv.Sniffer().sniff(head, delimiters=",;\t|")
        delim, quote = d.delimiter, d.quotechar or '"'
    except csv.Error:
        return default, '"'
    first = head.splitlines()[0] if head else ""
    if first.count(default) > first.count(delim):  # Sniffer is fooled by commas inside values
        delim = default
    elif delim != default and _fields(head, delim, quote) < 2 <= _fields(head, default, quote):
        # Sniffer is fooled by a delimiter inside a quoted field too ('"h"";",h' read as one
        # column 'h";,h'): the default splits every line into the same number (≥ 2) of fields, it
        # not. (A file the sniffed delimiter splits unevenly and the default not at all stays
        # with the sniffed one: a ragged 'a;b / 1;2;3' is refused, not read as one column.)
        delim = default
    return delim, quote


def _fields(head: str, delim: str, quote: str) -> int:
    """Fields per line when every line of ``head`` has the same number, else 0."""
    try:
        counts = {len(r) for r in csv.reader(io.StringIO(head, newline=""), delimiter=delim, quotechar=quote) if r}
    except csv.Error:
        return 0
    return counts.pop() if len(counts) == 1 else 0


def _read_csv(path: str, data: bytes, max_field_bytes: int) -> pa.Table:
    if path.lower().endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):  # the messages quote the stream's first bytes
            raise SkipFile("corrupt gzip: not a complete gzip stream") from None
    text = _decode(data)
    if not text.strip():
        raise SkipFile("no header and no rows (the file is blank)")
    if not text.endswith(("\n", "\r")):
        text += "\n"  # pyarrow cannot infer the columns of a header-only file without a final newline
    delim, quote = _sniff(text, path)
    _raise_field_limit(max_field_bytes)
    try:
        first = next(csv.reader(io.StringIO(text[:_SNIFF_BYTES], newline=""), delimiter=delim, quotechar=quote), [])
    except csv.Error:
        first = []  # a malformed first line: pyarrow or the quote check below names it
    if first and all(_NUMBER.match(v.strip() or "0") for v in first) and any(v.strip() for v in first):
        raise SkipFile(f"no header row: the first line looks like data ({len(first)} numbers)")
    raw = text.encode("utf-8")
    table = _parse(raw, delim, quote, max_field_bytes, text)
    if _has_line_break(table):
        _check_quotes(text, delim, quote)
    big = [n for n, c in zip(table.column_names, table.columns) if pa.types.is_floating(c.type) and _may_hold_big_ints(c)]
    if big:  # integers past 2**53 became floats: read those columns again as text, to keep every digit
        text_cols = _parse(raw, delim, quote, max_field_bytes, text, as_text=big)
        for n in big:
            col = text_cols.column(n)
            if pc.any(pc.match_substring_regex(col, _BIG_INT.pattern)).as_py():
                table = table.set_column(table.column_names.index(n), n, col)
    for name, col in zip(table.column_names, table.columns):
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            longest = pc.max(pc.binary_length(col)).as_py() if len(col) else 0
            if longest and longest > max_field_bytes:
                raise SkipFile(f"a field of column {name!r} is {longest} bytes (limit {max_field_bytes})")
    return table


def _parse(raw: bytes, delim: str, quote: str, max_field_bytes: int, text: str, as_text: list[str] | None = None) -> pa.Table:
    try:
        return pacsv.read_csv(
            io.BytesIO(raw),
            read_options=pacsv.ReadOptions(block_size=max(4 * max_field_bytes, 1 << 22)),
            parse_options=pacsv.ParseOptions(delimiter=delim, quote_char=quote, newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                strings_can_be_null=True, column_types={n: pa.string() for n in as_text or []},
                include_columns=as_text or [],
            ),
        )
    except pa.ArrowInvalid as exc:
        msg = " ".join(str(exc).split())
        if "straddling" in msg or "block" in msg:
            raise SkipFile(f"a field is larger than {max_field_bytes} bytes") from None
        ragged = re.search(r"Expected (\d+) columns, got (\d+)", msg)
        if ragged:
            raise SkipFile(f"malformed CSV: {_ragged_row(text, delim, quote)}has {ragged[2]} fields, the header {ragged[1]}") from None
        # pyarrow's messages end with the offending row: keep only what comes before it
        raise SkipFile(f"malformed CSV: {msg.split(':')[0][:120]}") from None


def _ragged_row(text: str, delim: str, quote: str) -> str:
    """``"line N "`` of the first row whose field count differs from the header's, or ``"a row "``."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, quotechar=quote)
    try:
        width = len(next(reader))
        for row in reader:
            if row and len(row) != width:
                return f"line {reader.line_num} "
    except (csv.Error, StopIteration):
        pass
    return "a row "


def _has_line_break(table: pa.Table) -> bool:
    for col in table.columns:
        if (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) and len(col):
            if pc.any(pc.match_substring_regex(col, "[\r\n]")).as_py():
                return True
    return False


def _check_quotes(text: str, delim: str, quote: str) -> None:
    """A value holding a line break came from a quoted field; make sure every quote closes
    where a field ends. An unclosed quote swallows the rows after it into one value, which
    pyarrow accepts without a word."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, quotechar=quote, strict=True)
    start = 1
    try:
        for _ in reader:
            start = reader.line_num + 1
    except csv.Error:
        raise SkipFile(
            f"malformed CSV: the quoted field starting on line {start} is never closed or has text after its "
            f"closing quote; reading it would merge rows"
        ) from None


def _may_hold_big_ints(col: pa.ChunkedArray) -> bool:
    big = pc.greater(pc.abs(col), 2.0**53)
    return bool(pc.any(big).as_py())


def _raise_field_limit(max_field_bytes: int) -> None:
    # the csv module's limit is process-wide; a quoted field may be as large as pyarrow's
    if csv.field_size_limit() < 4 * max_field_bytes:
        csv.field_size_limit(4 * max_field_bytes)


def _check_header(names: list[str]) -> None:
    if not names:
        raise SkipFile("no columns")
    empty = [i + 1 for i, n in enumerate(names) if not str(n).strip()]
    if empty:
        raise SkipFile(f"empty header name in column {empty[0]} of {len(names)}")
    exact: set[str] = set()
    folded: dict[str, str] = {}
    for n in names:
        key = str(n).strip()
        if key in exact:
            raise SkipFile(f"duplicate header name {_short(key)}")
        if key.lower() in folded:
            raise SkipFile(
                f"header names {_short(folded[key.lower()])} and {_short(key)} differ only in case, "
                f"which SQL cannot tell apart"
            )
        exact.add(key)
        folded[key.lower()] = key


def _short(name: str) -> str:
    return repr(name if len(name) <= 40 else name[:40] + "…")


def _one_line(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    return msg[:200] + ("…" if len(msg) > 200 else "")
