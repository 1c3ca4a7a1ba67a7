"""A malformed-file corpus, indexed once by the real CLI: each file read exactly or refused.

The test writes some 80 kinds of hostile, broken and merely unusual lake files (issue #36:
encodings, dialects, broken quoting, binary bytes, Parquet oddities, symbolic links out of
the lake and in loops, a FIFO, a folder named ``x.csv``, ...) next to good files, plus a
seeded batch of random CSVs with awkward headers and values (test_properties.py draws more with hypothesis),
and runs ``raylake index`` once in a subprocess with a timeout. It asserts:

- the run ends in time (a hang, e.g. a FIFO opened or a link loop walked, fails it) with no
  traceback;
- every file is indexed or skipped with its own reason, and each skip reason is the one
  expected for its kind; no reason quotes the file's data;
- every kind that must be read is indexed, and its values come back unaltered through the
  index (row count, column names) and through fusion (the table read back into DuckDB);
- nothing outside the lake is read: its secrets appear in no output and nowhere in the index.
"""
from __future__ import annotations

import csv
import datetime
import decimal
import gzip
import io
import itertools
import json
import os
import random
import re
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import ROOT

SECRET = "TOPSECRET-7f3a"  # in files outside the lake: must never be read
LEAK = "LEAKMARK"  # in the data rows of every file that is refused: must never be quoted


def _parquet(table: pa.Table, **kw) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **kw)
    return buf.getvalue()


def _csv(rows: list[list]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


WIDE = 5000
# 5,000 distinct header names that all humanise to "wide" ("wide_", "wide-.", ...), and
# values from 0-6: the embedding stage, about 40 texts/s on the shared test CPUs, then has
# a handful of texts to embed, while profiling, joins and fusion still see 5,000 columns
_SEPS = ["".join(p) for n in range(7) for p in itertools.product("_-./", repeat=n)]
WIDE_NAMES = ["wide" + sep for sep in _SEPS[:WIDE]]
_GOOD_PARQUET = pa.table({"id": [1, 2], "name": ["Ann", "Bob"]})

# name -> (bytes, {column: values}): must be indexed, and read back exactly
READ = {
    "plain.csv": (b"id,name\n1,Ann\n2,Bob\n", {"id": [1, 2], "name": ["Ann", "Bob"]}),
    "UPPER.CSV": (b"id,name\n1,Ann\n", {"id": [1], "name": ["Ann"]}),
    "header_only.csv": (b"Club_ID,Club_Name\n", {"Club_ID": [], "Club_Name": []}),
    "header_only_no_newline.csv": (b"Club_ID,Club_Name", {"Club_ID": [], "Club_Name": []}),
    "utf8_bom.csv": (b"\xef\xbb\xbfid,city\n1,S\xc3\xa3o Paulo\n", {"id": [1], "city": ["São Paulo"]}),
    "utf16_bom.csv": ("id,city\n1,Zürich\n".encode("utf-16"), {"id": [1], "city": ["Zürich"]}),
    "cp1252.csv": (b"id,name\n1,caf\xe9 \x93Le Dome\x94\n", {"id": [1], "name": ["café “Le Dome”"]}),
    "latin1.csv": (b"id,name\n1,Ni\xf1o\x81\n", {"id": [1], "name": ["Niño\x81"]}),
    "crlf.csv": (b"a,b\r\n1,x\r\n2,y\r\n", {"a": [1, 2], "b": ["x", "y"]}),
    "cr_only.csv": (b"id,name\r1,Ann\r2,Bob\r", {"id": [1, 2], "name": ["Ann", "Bob"]}),
    "semicolon.csv": (b"name;price\nA;1,5\nB;2,25\n", {"name": ["A", "B"], "price": ["1,5", "2,25"]}),
    "tab.tsv": (b"name\tcity\nAnn\tParis\n", {"name": ["Ann"], "city": ["Paris"]}),
    "tab_in_csv.csv": (b"name\tcity\nAnn\tParis\n", {"name": ["Ann"], "city": ["Paris"]}),
    "pipe.csv": (b"name|city\nAnn|Paris\nBob|Rome\n", {"name": ["Ann", "Bob"], "city": ["Paris", "Rome"]}),
    "quoted_newlines.csv": (b'id,note\n1,"two\nlines"\n2,"three\r\nmore\nlines"\n', {"id": [1, 2], "note": ["two\nlines", "three\r\nmore\nlines"]}),
    "quoted_delimiters.csv": (b'name,address\n"Smith, John","1 Main St, NY"\n', {"name": ["Smith, John"], "address": ["1 Main St, NY"]}),
    "escaped_quotes.csv": (b'id,said\n1,"he said ""hi"""\n', {"id": [1], "said": ['he said "hi"']}),
    "literal_quotes.csv": (b"h,w\n5'11\",x\n", {"h": ["5'11\""], "w": ["x"]}),
    "blank_lines.csv": (b"a,b\n1,x\n\n2,y\n\n", {"a": [1, 2], "b": ["x", "y"]}),
    "only_nulls.csv": (b"a,b\n,\n,\n", {"a": [None, None], "b": [None, None]}),
    "single_column.csv": (b"name\nAnn\nBob\n", {"name": ["Ann", "Bob"]}),
    "long_header.csv": (("h" * 300 + ",id\nx,1\n").encode(), {"h" * 300: ["x"], "id": [1]}),
    "unicode_header.csv": ("名前,Größe,emoji😀\nAnn,1,ok\n".encode(), {"名前": ["Ann"], "Größe": [1], "emoji😀": ["ok"]}),
    "sql_header.csv": (_csv([['x"; DROP TABLE t; --', "it's", "select * from", "a.b"], ["'; DROP TABLE u; --", "o'hara", "1=1", "v"]]),
                       {'x"; DROP TABLE t; --': ["'; DROP TABLE u; --"], "it's": ["o'hara"], "select * from": ["1=1"], "a.b": ["v"]}),
    "it's; DROP TABLE x;--.csv": (b"id,name\n1,Ann\n", {"id": [1], "name": ["Ann"]}),
    "src_column.csv": (b"_src,_provenance,id\nmine,also mine,1\n", {"_src": ["mine"], "_provenance": ["also mine"], "id": [1]}),
    "huge_integers.csv": (b"id,big,i64\n1,12345678901234567890123,9223372036854775807\n2,5,-9223372036854775808\n",
                          {"id": [1, 2], "big": ["12345678901234567890123", "5"], "i64": [2**63 - 1, -(2**63)]}),
    "mixed_dates.csv": (b"id,d\n1,2021-01-02\n2,01/02/2021\n3,Jan 3 2021\n", {"id": [1, 2, 3], "d": ["2021-01-02", "01/02/2021", "Jan 3 2021"]}),
    "iso_dates.csv": (b"id,d\n1,2021-01-02\n2,2022-12-31\n", {"id": [1, 2], "d": [datetime.date(2021, 1, 2), datetime.date(2022, 12, 31)]}),
    "booleans.csv": (b"id,ok\n1,true\n2,false\n", {"id": [1, 2], "ok": [True, False]}),
    "floats.csv": (b"id,x\n1,1e300\n2,-0.5\n", {"id": [1, 2], "x": [1e300, -0.5]}),
    "gzipped.csv.gz": (gzip.compress(b"id,name\n1,Ann\n2,Bob\n"), {"id": [1, 2], "name": ["Ann", "Bob"]}),
    "plain.parquet": (_parquet(_GOOD_PARQUET), {"id": [1, 2], "name": ["Ann", "Bob"]}),
    "dictionary.parquet": (_parquet(pa.table({"d": pa.array(["a", "b", "a"]).dictionary_encode(), "n": [1, 2, 3]})),
                           {"d": ["a", "b", "a"], "n": [1, 2, 3]}),
    "dictionary_written.parquet": (_parquet(pa.table({"d": ["x", "y", "x"]}), use_dictionary=True), {"d": ["x", "y", "x"]}),
    "binary_utf8.parquet": (_parquet(pa.table({"b": pa.array([b"abc", b"d"], pa.binary())})), {"b": ["abc", "d"]}),
    "binary_raw.parquet": (_parquet(pa.table({"b": pa.array([b"\xff\x00", b"a"], pa.binary())})), {"b": ["0xff00", "0x61"]}),
    "nested.parquet": (_parquet(pa.table({"id": [1, 2], "tags": [["a", "b"], ["c"]], "addr": [{"street": "Main"}, {"street": "Oak"}]})),
                       {"id": [1, 2], "tags": ['["a", "b"]', '["c"]'], "addr": ['{"street": "Main"}', '{"street": "Oak"}']}),
    "uint64.parquet": (_parquet(pa.table({"u": pa.array([2**64 - 1, 0], pa.uint64())})), {"u": [2**64 - 1, 0]}),
    "decimal.parquet": (_parquet(pa.table({"p": pa.array([decimal.Decimal("12345678901234567890.12"), None], pa.decimal128(22, 2))})),
                        {"p": [decimal.Decimal("12345678901234567890.12"), None]}),
    "timestamps.parquet": (_parquet(pa.table({"t": pa.array([datetime.datetime(2020, 5, 17, 8, 30)], pa.timestamp("s"))})),
                           {"t": [datetime.datetime(2020, 5, 17, 8, 30)]}),
    "wide_5000.csv": ((",".join(WIDE_NAMES) + "\n" + ",".join(str(i % 7) for i in range(WIDE)) + "\n").encode(),
                      {WIDE_NAMES[i]: [i % 7] for i in (0, 1, 2500, WIDE - 1)}),
    "notes.txt": (b"id,name\n1,Ann\n", {"id": [1], "name": ["Ann"]}),
    "x.csv/inside.csv": (b"id,name\n7,Zed\n", {"id": [7], "name": ["Zed"]}),  # a folder named x.csv
    "deep/a/b/c/d/e/deep.csv": (b"id\n1\n", {"id": [1]}),
}

_TRUNCATED_PARQUET = _parquet(pa.table({"id": list(range(100)), "v": [LEAK] * 100}))
_GZ = gzip.compress(b"id,name\n1," + LEAK.encode() + b"\n")

# name -> (bytes, words its skip reason must hold)
REFUSE = {
    "empty.csv": (b"", "empty file (0 bytes)"),
    "blank.csv": (b"\n\n  \n", "blank"),
    "binary.csv": (bytes(range(256)) * 8, "NUL bytes"),
    "random_no_nul.csv": (bytes(b for b in random.Random(36).randbytes(4096) if b), "control bytes"),
    "nul_in_text.csv": (b"id,name\n1," + LEAK.encode() + b"\x00x\n", "NUL bytes"),
    "utf16_no_bom.csv": (f"id,name\n1,{LEAK}\n".encode("utf-16-le"), "NUL bytes"),
    "truncated.parquet": (_TRUNCATED_PARQUET[: len(_TRUNCATED_PARQUET) // 2], "unreadable Parquet"),
    "not_parquet.parquet": (b"PAR1 " + LEAK.encode(), "unreadable Parquet"),
    "parquet_named.csv": (_parquet(_GOOD_PARQUET), "NUL bytes"),
    "csv_named.parquet": (b"id,name\n1," + LEAK.encode() + b"\n", "unreadable Parquet"),
    "gzip_named.csv": (_GZ, "binary file"),
    "notes.json": (b'{"a": "' + LEAK.encode() + b'"}', "not a CSV or Parquet"),
    "sheet.xlsx": (b"PK\x03\x04" + LEAK.encode(), "not a CSV or Parquet"),
    "corrupt.csv.gz": (b"no gzip " + LEAK.encode(), "corrupt gzip"),
    "truncated.csv.gz": (_GZ[: len(_GZ) // 2], "corrupt gzip"),
    "duplicate_header.csv": (b"id,name,id\n1," + LEAK.encode() + b",2\n", "duplicate header name 'id'"),
    "duplicate_after_trim.csv": (b"id, id\n1," + LEAK.encode() + b"\n", "duplicate header name 'id'"),
    "case_duplicate_header.csv": (b"name,NAME\n" + LEAK.encode() + b",b\n", "differ only in case"),
    "empty_header.csv": (b"id,,name\n1,2," + LEAK.encode() + b"\n", "empty header name in column 2"),
    "huge_field.csv": (b"id,text\n1," + LEAK.encode() + b"x" * (3 << 20) + b"\n", "bytes"),
    "ragged.csv": (b"a,b,c\n1,2,3\n" + LEAK.encode() + b",5\n", "line 3 has 2 fields, the header 3"),
    "ragged_long.csv": (b"a,b\n1,2\n3,4," + LEAK.encode() + b"\n", "line 3 has 3 fields, the header 2"),
    "unterminated_quote.csv": (b'id,name\n1,"Ann\n2,' + LEAK.encode() + b"\n3,Cy\n", "never closed"),
    "text_after_quote.csv": (b'id,name\n1,"Ann\nB"x\n2,' + LEAK.encode() + b"\n", "never closed or has text after"),
    "no_header.csv": (b"1,2,3\n4,5,6\n", "no header row"),
}

SEEDED = 12  # random CSVs from a seeded generator


def _random_csvs(seed: int = 36) -> dict[str, tuple[bytes, dict]]:
    """CSV files with awkward headers (quotes, SQL, unicode, dots, spaces) and values (commas,
    quotes, line breaks, unicode, huge and negative numbers, nulls), written by csv.writer,
    with the values each column must read back as."""
    rnd = random.Random(seed)
    pieces = ["a", "Z", "é", "名", "😀", " ", ",", ";", "|", "'", '"', "\n", "--", "%", "\\", ".", "x"]
    out = {}
    for k in range(SEEDED):
        n_cols, n_rows = rnd.randint(1, 8), rnd.randint(1, 15)
        names: list[str] = []
        while len(names) < n_cols:
            name = "h" + "".join(rnd.choice(pieces[:-6] + ["_", "$", "(", ")"]) for _ in range(rnd.randint(0, 6))).strip()
            if "\n" not in name and name.lower() not in {n.lower() for n in names}:
                names.append(name)
        cols: dict[str, list] = {}
        for name in names:
            kind = rnd.choice(["int", "float", "text", "text"])
            if kind == "int":
                vals = [rnd.choice([rnd.randint(-10**6, 10**6), rnd.randint(-(2**62), 2**62)]) for _ in range(n_rows)]
            elif kind == "float":
                vals = [rnd.uniform(-1e6, 1e6) for _ in range(n_rows)]
            else:  # a leading letter keeps text from reading as a number, a date or a null marker
                vals = ["v" + "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12))) for _ in range(n_rows)]
            if n_rows > 1 and rnd.random() < 0.3:
                vals[rnd.randrange(n_rows)] = None
            cols[name] = vals
        rows = [names] + [["" if cols[n][r] is None else (repr(cols[n][r]) if isinstance(cols[n][r], float) else cols[n][r]) for n in names]
                          for r in range(n_rows)]
        out[f"random/r{k:02d}.csv"] = (_csv(rows), cols)
    return out


def _build_lake(tmp_path) -> tuple[str, str, dict, dict]:
    lake = tmp_path / "lake"
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secrets.csv").write_text(f"id,password\n1,{SECRET}\n")
    (outside / "passwd").write_text(f"root:x:0:0:{SECRET}:/root:/bin/bash\n")
    (outside / "dir" / "more.csv").write_text(f"id,token\n1,{SECRET}\n")
    read = dict(READ) | _random_csvs()
    for name, (data, _) in list(read.items()) + [(k, (v[0], None)) for k, v in REFUSE.items()]:
        p = lake / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    (lake / ".hidden").mkdir()
    (lake / ".hidden" / "h.csv").write_text("id\n1\n")  # hidden: not a lake table, not listed
    (lake / "empty_folder.csv").mkdir()  # a folder with a table's name holds nothing
    refuse = {k: v[1] for k, v in REFUSE.items()}
    links = {
        "innocent.csv": (outside / "secrets.csv", "outside the lake"),
        "passwd.csv": (outside / "passwd", "outside the lake"),
        "outdir": (outside / "dir", "outside the lake"),
        "loop": (lake, "folder '.', already listed"),
        "deep/a/up": (lake / "deep", "folder 'deep', already listed"),
        "alias.csv": (lake / "plain.csv", "'plain.csv', already listed"),
        "broken.csv": (lake / "no_such_file.csv", "broken symbolic link"),
        "to_hidden.csv": (lake / ".hidden" / "h.csv", "hidden folder"),
    }
    for name, (target, words) in links.items():
        os.symlink(target, lake / name)
        refuse[name] = words
    os.symlink("self_loop.csv", lake / "self_loop.csv")
    refuse["self_loop.csv"] = "loop"
    os.mkfifo(lake / "fifo.csv")
    refuse["fifo.csv"] = "a FIFO"
    return str(lake), str(tmp_path / "index"), read, refuse


def _fused_values(lake: str, path: str) -> dict[str, list]:
    from raylake.fuse import fuse

    fused = fuse([{"op": "start", "new": path}], lake).table
    assert fused.column("_provenance").to_pylist() == [path] * fused.num_rows
    prefix = re.sub(r"\.(csv\.gz|tsv\.gz|parquet|csv|tsv|txt|pq)$", "", path, flags=re.IGNORECASE) + "."
    assert all(c.startswith(prefix) for c in fused.column_names if c != "_provenance")
    return {c[len(prefix):]: fused.column(c).to_pylist() for c in fused.column_names if c != "_provenance"}


def _same(got, want) -> bool:
    if isinstance(want, float) and isinstance(got, float):  # repr() round-trips; DuckDB may print the last digit apart
        return abs(got - want) <= 1e-15 * abs(want)
    return type(got) is type(want) and got == want


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("corpus")
    lake, index_dir, read, refuse = _build_lake(tmp)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "raylake.cli", "index", lake, "--index-dir", index_dir, "--json", "--quiet"],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,  # a hang fails here, not forever
    )
    return lake, index_dir, read, refuse, proc


def test_corpus_has_at_least_50_kinds(corpus):
    _, _, read, refuse, _ = corpus
    assert len(READ) + len(refuse) >= 50 and len(read) == len(READ) + SEEDED


def test_every_file_is_indexed_or_refused_with_its_own_reason(corpus):
    lake, _, read, refuse, proc = corpus
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert proc.returncode == 3, proc.stderr[-2000:]  # files were skipped, and said so
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    skipped = summary["skipped_files"]
    assert set(skipped) == set(refuse), (set(skipped) ^ set(refuse))
    for name, words in refuse.items():
        assert words in skipped[name], (name, skipped[name])
        assert "\n" not in skipped[name] and LEAK not in skipped[name] and SECRET not in skipped[name]
        assert "cannot profile" not in skipped[name]
    assert summary["tables"] == len(read) and summary["files"] == len(read) + len(refuse)


def test_every_readable_file_round_trips_through_index_and_fusion(corpus):
    from raylake.index.reader import LakeIndex

    lake, index_dir, read, _, _ = corpus
    idx = LakeIndex(index_dir)
    assert set(idx.paths) == set(read)
    bad = []
    for path, (_, want) in sorted(read.items()):
        t = idx.path_id[path]
        names = [idx.columns["name"][c] for c in idx.table_columns[t]]
        n_rows = len(next(iter(want.values())))
        if idx.tables["n_rows"][t] != n_rows or not set(want) <= set(names):
            bad.append((path, "index", idx.tables["n_rows"][t], names[:8]))
            continue
        if path != "wide_5000.csv":
            assert names == list(want), path
        got = _fused_values(lake, path)
        for col, values in want.items():
            if len(got[col]) != len(values) or not all(_same(g, w) for g, w in zip(got[col], values)):
                bad.append((path, col, got[col][:4], values[:4]))
    assert not bad, bad


def test_nothing_outside_the_lake_is_read_or_shown(corpus):
    from raylake.index.reader import LakeIndex
    from raylake.index.store import current_build

    lake, index_dir, _, _, proc = corpus
    assert SECRET not in proc.stdout + proc.stderr
    for name in os.listdir(current_build(index_dir)):
        if name.endswith(".parquet"):
            assert SECRET not in json.dumps(pq.read_table(os.path.join(current_build(index_dir), name)).to_pylist(), default=str)
    idx = LakeIndex(index_dir)
    assert not any(p.startswith(("innocent", "passwd", "outdir", "loop/", "deep/a/up/")) for p in idx.paths)
    env = dict(os.environ, PYTHONPATH=ROOT)
    shown = subprocess.run([sys.executable, "-m", "raylake.cli", "inspect", "innocent.csv", "--index-dir", index_dir],
                           capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert shown.returncode == 2 and SECRET not in shown.stdout + shown.stderr and "Traceback" not in shown.stderr


def test_a_plan_path_out_of_the_lake_is_refused(corpus, tmp_path):
    from raylake.errors import LakeError
    from raylake.fuse import fuse

    lake, _, _, _, _ = corpus
    for path in ("../outside/secrets.csv", "/etc/passwd", "random/../../outside/secrets.csv", "innocent.csv"):
        with pytest.raises(Exception) as info:
            fuse([{"op": "start", "new": path}], lake)
        assert isinstance(info.value, LakeError) or "no longer" in str(info.value), path
        assert SECRET not in str(info.value)


def test_an_index_naming_a_table_outside_the_lake_is_refused(corpus, tmp_path):
    """The index folder is not trusted to stay inside the lake: an edited tables.parquet with
    ``../`` is refused when the index loads, before any plan can read through it."""
    import shutil

    from raylake.errors import LakeError
    from raylake.index.reader import LakeIndex
    from raylake.index.store import current_build

    _, index_dir, _, _, _ = corpus
    copy = tmp_path / "index"
    shutil.copytree(index_dir, copy)
    tables_file = os.path.join(current_build(str(copy)), "tables.parquet")
    tables = pq.read_table(tables_file).to_pydict()
    tables["path"][0] = "../outside/secrets.csv"
    pq.write_table(pa.table(tables), tables_file)
    with pytest.raises(LakeError, match="not a path inside the lake"):
        LakeIndex(str(copy))


def test_link_loops_are_walked_once_and_links_out_are_not_followed(tmp_path):
    """``ln -s . loop`` turned 4 files into 161, and two such links hung the listing."""
    from raylake.lake import open_lake

    lake = tmp_path / "lake"
    (lake / "sub").mkdir(parents=True)
    for name in ("a.csv", "b.csv", "sub/c.csv", "sub/d.csv"):
        (lake / name).write_text("id\n1\n")
    (tmp_path / "secret.csv").write_text(f"id\n{SECRET}\n")
    os.symlink(lake, lake / "loop")
    os.symlink("..", lake / "sub" / "up")
    os.symlink(tmp_path, lake / "sub" / "out")
    os.symlink("sub", lake / "inner")  # a second name for a folder inside the lake
    listed = open_lake(str(lake))
    assert [f.path for f in listed.files] == ["a.csv", "b.csv", "sub/c.csv", "sub/d.csv"]
    assert set(listed.refused) == {"loop", "sub/up", "sub/out", "inner"}
    assert "outside the lake" in listed.refused["sub/out"] and "already listed" in listed.refused["inner"]
    assert [f.path for f in open_lake(str(lake / "*.csv")).files] == ["a.csv", "b.csv", "sub/c.csv", "sub/d.csv"]


def test_a_second_run_over_the_same_corpus_is_up_to_date(corpus):
    """Refused links and FIFOs are remembered with their reasons: an unchanged lake is not rebuilt."""
    lake, index_dir, _, refuse, first = corpus
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "raylake.cli", "index", lake, "--index-dir", index_dir, "--json", "--quiet"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["up_to_date"] and summary["skipped_files"] == json.loads(first.stdout.strip().splitlines()[-1])["skipped_files"]
    assert set(summary["skipped_files"]) == set(refuse)
