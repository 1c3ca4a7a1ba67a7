"""Property tests (hypothesis): any CSV that csv.writer writes reads back exactly, through the
reader and through fusion, whatever its headers and values — commas, double quotes and line
breaks inside fields, unicode, SQL metacharacters (the malformed-file corpus in
test_malformed.py covers the index on a seeded batch of such files).

Characters that make the *dialect* ambiguous are left out of the alphabet: another candidate
delimiter (';', '|', tab) or quote character (') inside values can make a one-column file and
a ragged ';' file the same bytes, and a sniffing reader must refuse the ragged one rather
than read it as one column; the corpus covers those cases one by one."""
import csv
import io
import math
import os
import re
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raylake.fuse import fuse
from raylake.lake import read_table

# awkward characters for headers and values: quotes, separators, SQL, unicode, line breaks (values only)
_AWKWARD = st.sampled_from(["a", "Z", "é", "名", "😀", " ", ",", '"', "--", "%", "\\", ".", "_", "$", "(", ")", "=", "*"])
_HEADER = st.lists(_AWKWARD, max_size=6).map(lambda cs: ("h" + "".join(cs)).strip())
# a leading letter keeps text from reading as a number, a date or a null marker
_TEXT = st.lists(st.one_of(_AWKWARD, st.just("\n")), max_size=12).map(lambda cs: "v" + "".join(cs))
_KIND = st.sampled_from(["int", "float", "text"])
_FLOAT = st.floats(-1e6, 1e6, allow_nan=False).filter(lambda x: x != int(x))  # an integral float reads as an int


@st.composite
def tables(draw):
    names = draw(st.lists(_HEADER, min_size=1, max_size=6, unique_by=str.lower))
    n_rows = draw(st.integers(1, 8))
    cols = {}
    for name in names:
        kind = draw(_KIND)
        if kind == "int":
            vals = draw(st.lists(st.integers(-(2**62), 2**62), min_size=n_rows, max_size=n_rows))
        elif kind == "float":
            vals = draw(st.lists(_FLOAT, min_size=n_rows, max_size=n_rows))
        else:
            vals = draw(st.lists(_TEXT, min_size=n_rows, max_size=n_rows))
        if n_rows > 1 and draw(st.booleans()):
            vals[draw(st.integers(0, n_rows - 1))] = None  # one null, never a whole column of them
        cols[name] = vals
    return cols


def _csv(cols: dict) -> bytes:
    names = list(cols)
    n = len(cols[names[0]])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for r in range(n):
        w.writerow(["" if cols[c][r] is None else (repr(cols[c][r]) if isinstance(cols[c][r], float) else cols[c][r]) for c in names])
    return buf.getvalue().encode("utf-8")


def _same(got, want) -> bool:
    if isinstance(want, float) and isinstance(got, float):  # repr() round-trips; DuckDB may print the last digit apart
        return math.isclose(got, want, rel_tol=1e-15)
    return type(got) is type(want) and got == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_any_written_csv_reads_back_exactly(cols):
    data = _csv(cols)
    t = read_table("t.csv", data)
    assert t.column_names == list(cols)
    for name, want in cols.items():
        got = t.column(name).to_pylist()
        assert all(_same(g, w) for g, w in zip(got, want)) and len(got) == len(want), (name, got, want)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_any_written_csv_fuses_back_exactly(cols):
    with tempfile.TemporaryDirectory() as lake:
        with open(os.path.join(lake, "t.csv"), "wb") as fh:
            fh.write(_csv(cols))
        fused = fuse([{"op": "start", "new": "t.csv"}], lake).table
    assert fused.column("_provenance").to_pylist() == ["t.csv"] * len(next(iter(cols.values())))
    got = {re.sub(r"^t\.", "", c): fused.column(c).to_pylist() for c in fused.column_names if c != "_provenance"}
    assert list(got) == list(cols)
    for name, want in cols.items():
        assert all(_same(g, w) for g, w in zip(got[name], want)), (name, got[name], want)


def test_examples_hypothesis_found():
    # a header holding the Sniffer's favourite delimiter in quotes, read as one column 'h";,h' before
    for cols in ({'h";': [0], "h": [0]},):
        t = read_table("t.csv", _csv(cols))
        assert t.column_names == list(cols) and all(t.column(n).to_pylist() == v for n, v in cols.items()), cols
