"""Bad and unusual lake files: each bad one skipped with a one-line reason, the rest indexed.

The CLI's contract (``raylake index``): exit 0 when every file was indexed, 1 when some were
skipped (they are named with their reason on stderr and counted in the summary), 2 on a
user error (missing or empty lake, nothing indexable), with one ``raylake: error:`` line and
never a traceback.

A header-only file is *indexed*, as a table with zero rows: its header still tells what it
holds and lets a question find it. The Spider lake has 71 such files, and its gold sets name
some of them, so skipping them would lose answers.
"""
from __future__ import annotations

import gzip
import io
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from raylake.cli import main
from raylake.config import IndexConfig, RaylakeContext
from raylake.errors import SkipFile
from raylake.lake.read import read_table

MAX_FIELD = 4096  # a small max_field_bytes, so a "huge" field stays a small file

# ---------------------------------------------------------------------------- read_table


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


NESTED = pa.table({
    "id": [1, 2],
    "tags": [["a", "b"], ["c"]],
    "address": [{"street": "Main St", "no": 1}, {"street": "Oak Ave", "no": 2}],
})

# name -> (bytes, expected rows, expected columns, {column: first value})
GOOD = {
    "plain.csv": (b"id,name\n1,Ann\n2,Bob\n", 2, ["id", "name"], {"name": "Ann"}),
    "header_only.csv": (b"Club_ID,Club_Name,Region\n", 0, ["Club_ID", "Club_Name", "Region"], {}),
    "header_only_no_newline.csv": (b"Club_ID,Club_Name,Region", 0, ["Club_ID", "Club_Name", "Region"], {}),
    "semicolon.csv": (b"name;price;qty\nA;1,5;3\nB;2,25;4\n", 2, ["name", "price", "qty"], {"price": "1,5"}),
    "tab.tsv": (b"name\tcity\nAnn\tParis\nBob\tRome\n", 2, ["name", "city"], {"city": "Paris"}),
    "tab_in_csv.csv": (b"name\tcity\nAnn\tParis\nBob\tRome\n", 2, ["name", "city"], {"city": "Paris"}),
    "quoted_commas.csv": (b'name,address\n"Smith, John","1 Main St, NY"\n"Doe, Jane","2 Oak Ave, LA"\n', 2,
                          ["name", "address"], {"name": "Smith, John", "address": "1 Main St, NY"}),
    "utf8_bom.csv": (b"\xef\xbb\xbfid,city\n1,S\xc3\xa3o Paulo\n", 1, ["id", "city"], {"city": "São Paulo"}),
    "cp1252.csv": (b"id,name\n1,caf\xe9 \x93Le Dome\x94\n", 1, ["id", "name"], {"name": "café “Le Dome”"}),
    "latin1.csv": (b"id,name\n1,Ni\xf1o\x81\n", 1, ["id", "name"], {"name": "Niño\x81"}),
    "crlf.csv": (b"a,b\r\n1,x\r\n2,y\r\n", 2, ["a", "b"], {"b": "x"}),
    "multiline.csv": (b'id,note\n1,"two\nlines"\n2,one\n', 2, ["id", "note"], {"note": "two\nlines"}),
    "gzipped.csv.gz": (gzip.compress(b"id,name\n1,Ann\n2,Bob\n"), 2, ["id", "name"], {"name": "Ann"}),
    "nested.parquet": (_parquet(NESTED), 2, ["id", "tags", "address"], {"tags": '["a", "b"]'}),
}

# name -> (bytes, words the one-line reason must contain)
BAD = {
    "notes.json": (b'{"a": 1}', "not a CSV or Parquet"),
    "binary.csv": (bytes(range(256)) * 8, "binary"),
    "corrupt.parquet": (b"PAR1 this is not parquet", "unreadable Parquet"),
    "ragged.csv": (b"a,b,c\n1,2,3\n4,5\n", "malformed CSV"),
    "no_header.csv": (b"1,2,3\n4,5,6\n", "no header"),
    "dup_header.csv": (b"id,name,id\n1,a,2\n", "duplicate header name 'id'"),
    "empty_header.csv": (b"id,,name\n1,2,3\n", "empty header name in column 2"),
    "empty.csv": (b"", "empty file (0 bytes)"),
    "blank.csv": (b"\n\n  \n", "blank"),
    "huge_field.csv": (b"id,text\n1," + b"x" * (3 * MAX_FIELD) + b"\n", f"limit {MAX_FIELD}"),
    "corrupt.csv.gz": (b"not gzip at all", "corrupt gzip"),
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_read_good_file(name):
    data, rows, cols, first = GOOD[name]
    t = read_table(name, data, max_field_bytes=MAX_FIELD)
    assert t.num_rows == rows
    assert t.column_names == cols
    row = t.to_pylist()[0] if rows else {}
    for col, value in first.items():
        assert row[col] == value


@pytest.mark.parametrize("name", sorted(BAD))
def test_read_bad_file_raises_skipfile_with_one_line_reason(name):
    data, words = BAD[name]
    with pytest.raises(SkipFile) as info:
        read_table(name, data, max_field_bytes=MAX_FIELD)
    reason = str(info.value)
    assert words in reason and "\n" not in reason and len(reason) < 300


def test_huge_field_is_fine_under_the_default_limit():
    data, _ = BAD["huge_field.csv"]
    assert read_table("huge_field.csv", data).num_rows == 1


def test_unreadable_file_is_skipped_with_its_reason(tmp_path, monkeypatch):
    """The profiling task's own handling of a file that cannot be opened (runs even as root)."""
    from raylake.index.build import _profile_one
    from raylake.lake import files, open_lake

    (tmp_path / "locked.csv").write_text("id\n1\n")

    def denied(self, f):
        raise PermissionError(13, "Permission denied", f.location)

    monkeypatch.setattr(files.Lake, "read_bytes", denied)
    lake = open_lake(str(tmp_path))
    path, sha, reason = _profile_one(lake, lake.files[0], IndexConfig())
    assert path == "locked.csv" and sha == "" and reason.startswith("unreadable:") and "Permission denied" in reason


# ---------------------------------------------------------------------------- the CLI on a bad lake


def _write(root, files: dict) -> None:
    for name, data in files.items():
        p = os.path.join(root, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as fh:
            fh.write(data)


def _stderr_ok(err: str) -> None:
    assert "Traceback" not in err


@pytest.fixture
def small_field_limit(monkeypatch):
    """The CLI reads its IndexConfig from the current context: a small max_field_bytes for this test."""
    monkeypatch.setattr(RaylakeContext, "_current", RaylakeContext(index=IndexConfig(max_field_bytes=MAX_FIELD)))


def test_cli_indexes_the_good_files_and_names_the_bad_ones(ray_session, tmp_path, capsys, small_field_limit):
    lake = str(tmp_path / "lake")
    _write(lake, {f"good/{k}": v[0] for k, v in GOOD.items()})
    _write(lake, {f"bad/{k}": v[0] for k, v in BAD.items()})
    _write(lake, {".hidden/ignored.csv": b"a\n1\n"})  # hidden folders are not lake tables
    locked = os.path.join(lake, "bad", "locked.csv")
    _write(lake, {"bad/locked.csv": b"id,name\n1,Ann\n"})
    os.chmod(locked, 0)
    can_lock = not os.access(locked, os.R_OK)  # root reads it anyway
    try:
        index_dir = str(tmp_path / "index")
        rc = main(["index", lake, "--index-dir", index_dir, "--json", "--quiet"])
    finally:
        os.chmod(locked, 0o644)
    out, err = capsys.readouterr()
    _stderr_ok(err)
    assert rc == 3  # something was skipped (1 would be a crash)
    summary = json.loads(out.strip().splitlines()[-1])
    expected_bad = {f"bad/{k}" for k in BAD} | ({"bad/locked.csv"} if can_lock else set())
    assert set(summary["skipped_files"]) == expected_bad
    assert summary["skipped"] == len(expected_bad)
    assert summary["files"] == len(GOOD) + len(BAD) + 1
    assert summary["tables"] == summary["files"] - summary["skipped"]
    for name, (_, words) in BAD.items():
        reason = summary["skipped_files"][f"bad/{name}"]
        assert words in reason and "\n" not in reason
    if can_lock:
        assert summary["skipped_files"]["bad/locked.csv"].startswith("unreadable")

    # for people: the (up-to-date) re-run names every skipped file on stderr, one line each, and still exits 3
    assert main(["index", lake, "--index-dir", index_dir, "--quiet"]) == 3
    out, err = capsys.readouterr()
    _stderr_ok(err)
    assert "up to date" in out
    for path, reason in summary["skipped_files"].items():
        assert f"  skipped {path}: {reason}\n" in err

    from raylake.index.reader import LakeIndex

    idx = LakeIndex(index_dir)
    assert set(idx.paths) >= {f"good/{k}" for k in GOOD}
    for name, (_, rows, cols, first) in GOOD.items():
        t = idx.path_id[f"good/{name}"]
        assert idx.tables["n_rows"][t] == rows, name
        names = [idx.columns["name"][c] for c in idx.table_columns[t]]
        assert names == cols, name
        for col, value in first.items():
            c = idx.col_index[(f"good/{name}", col)]
            assert idx.columns["sample"][c][0] == value.strip()
    nested = idx.col_index[("good/nested.parquet", "address")]
    assert idx.columns["dtype"][nested] == "text"

    # inspect repeats the skipped files, and --json counts them
    assert main(["inspect", "--index-dir", index_dir, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["skipped"] == len(expected_bad) and set(info["skipped_files"]) == expected_bad


def test_cli_touched_unreadable_file_is_rescanned_not_a_crash(ray_session, tmp_path, capsys, monkeypatch):
    """A file whose content hash cannot be read while scanning is re-profiled, not a traceback."""
    from raylake.lake import files

    lake = str(tmp_path / "lake")
    _write(lake, {"a.csv": b"id,name\n1,Ann\n2,Bob\n", "b.csv": b"id,city\n1,Paris\n"})
    index_dir = str(tmp_path / "index")
    assert main(["index", lake, "--index-dir", index_dir, "--json", "--quiet"]) == 0
    capsys.readouterr()
    st = os.stat(os.path.join(lake, "a.csv"))
    os.utime(os.path.join(lake, "a.csv"), ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    real = files.Lake.read_bytes

    def scan_denied(self, f):  # the driver's scan cannot read it; the profiling task (another process) can
        if f.path == "a.csv":
            raise PermissionError(13, "Permission denied", f.location)
        return real(self, f)

    monkeypatch.setattr(files.Lake, "read_bytes", scan_denied)
    rc = main(["index", lake, "--index-dir", index_dir, "--json", "--quiet"])
    out, err = capsys.readouterr()
    _stderr_ok(err)
    assert rc == 0
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["changed"] == 1 and summary["tables"] == 2 and not summary["up_to_date"]


@pytest.mark.parametrize("case", ["missing", "empty_folder", "only_hidden", "empty_glob"])
def test_cli_user_errors_are_one_line_exit_2(case, tmp_path, capsys):
    index_dir = str(tmp_path / "index")
    if case == "missing":
        path, words = str(tmp_path / "no_such_lake"), "does not exist"
    elif case == "empty_folder":
        os.makedirs(tmp_path / "lake")
        path, words = str(tmp_path / "lake"), "empty"
    elif case == "only_hidden":
        _write(str(tmp_path / "lake"), {".git/config": b"x", ".DS_Store": b"x"})
        path, words = str(tmp_path / "lake"), "empty"
    else:
        _write(str(tmp_path / "lake"), {"a.csv": b"a\n1\n"})
        path, words = str(tmp_path / "lake" / "*.parquet"), "empty"
    rc = main(["index", path, "--index-dir", index_dir, "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("raylake: error:") and words in lines[0]
    assert not os.path.exists(os.path.join(index_dir, "CURRENT"))


def test_cli_lake_of_only_bad_files_is_a_user_error(ray_session, tmp_path, capsys):
    lake = str(tmp_path / "lake")
    _write(lake, {"empty.csv": b"", "notes.json": b"{}", "ragged.csv": BAD["ragged.csv"][0]})
    rc = main(["index", lake, "--index-dir", str(tmp_path / "index"), "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "nothing to index" in lines[0] and "all 3 files were skipped" in lines[0]
    assert "empty.csv: empty file (0 bytes)" in lines[0] and "ragged.csv: malformed CSV" in lines[0]  # says why
    _stderr_ok(err)
