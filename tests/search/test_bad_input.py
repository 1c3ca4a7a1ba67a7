"""Hostile and careless input to ``raylake ask``: a decimal column, bytes that are not UTF-8,
lone surrogates, and questions files with bad lines. Each gets an answer or its own one-line
error; none gets a traceback or stops a batch."""
from __future__ import annotations

import codecs
import decimal
import json
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from raylake.cli import main
from raylake.errors import RaylakeError

GOOD = "which clubs have the most players?"


@pytest.fixture(scope="module")
def decimal_index(ray_session, tmp_path_factory):
    from raylake.index.build import build_index

    lake = tmp_path_factory.mktemp("declake") / "lake"
    lake.mkdir()
    prices = [decimal.Decimal(p) for p in ("12.50", "7.25", "30.00", "19.99", "12.50", "4.10")]
    pq.write_table(pa.table({
        "product": ["kettle", "mug", "lamp", "chair", "toaster", "spoon"],
        "price": pa.array(prices, pa.decimal128(10, 2)),
        "stock": pa.array([decimal.Decimal(n) for n in (3, 0, 12, 5, 8, 40)], pa.decimal128(12, 0)),
    }), lake / "products.parquet")
    (lake / "shops.csv").write_text("shop,city\nNorth,Oslo\nSouth,Rome\n")
    index_dir = str(lake.parent / ".raylake")
    build_index(str(lake), index_dir, progress=False)
    return index_dir


def test_decimal_bounds_are_numbers_and_a_numeric_question_is_answered(decimal_index, capsys):
    from raylake.index.reader import LakeIndex
    from raylake.search import Engine

    idx = LakeIndex(decimal_index)
    summary = {idx.columns["name"][c]: idx.column_summary(c) for c in idx.table_columns[idx.path_id["products.parquet"]]}
    assert summary["price"]["min"] == pytest.approx(4.10) and summary["price"]["max"] == pytest.approx(30.0)
    assert summary["stock"]["min"] == 0 and summary["stock"]["max"] == 40 and isinstance(summary["stock"]["max"], int)
    ans = Engine(decimal_index).ask("which products have a price of 12.5?")
    assert "products.parquet" in [t["table"] for t in ans.to_json()["tables"]]
    assert main(["ask", "products with a price between 5 and 20", "--index-dir", decimal_index, "--json", "--offline"]) == 0
    assert "products.parquet" in [t["table"] for t in json.loads(capsys.readouterr().out)["tables"]]


def test_decimal_values_read_like_the_same_numbers_elsewhere():
    from raylake.index.profile import canonical

    col = pa.array([decimal.Decimal(v) for v in ("12.50", "67.00", "-0.10", "0.00")] + [None], pa.decimal128(10, 2))
    assert canonical(col).to_pylist() == canonical(pa.array([12.5, 67.0, -0.1, 0.0, None])).to_pylist()


def test_question_bytes_that_are_not_utf8_are_one_line_errors(example_index):
    # argv bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape)
    r = subprocess.run([sys.executable, "-m", "raylake.cli", "ask", b"caf\xe9 with clubs?", "--index-dir", example_index, "--offline"],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().startswith("raylake: error: the question is not valid text at character 4") and r.stderr.count("\n") == 1


def test_lone_surrogate_question_is_refused(example_index, capsys):
    from raylake.search import Engine

    assert main(["ask", "clubs \ud800 players?", "--index-dir", example_index, "--offline"]) == 2
    assert "not valid text at character 7" in capsys.readouterr().err
    with pytest.raises(RaylakeError, match="not valid text"):
        Engine(example_index).intent("\udcff")


def test_a_batch_answers_every_good_line_and_names_every_bad_one(example_index, tmp_path, capsys):
    lines = [
        json.dumps({"id": "a", "question": GOOD}).encode(),
        '{"id": "b", "question": "Café clubs?"}'.encode("latin-1"),  # a Latin-1 line in a UTF-8 file
        b"not json at all",
        json.dumps({"id": "d", "text": "no question field"}).encode(),
        b'{"id": "e", "question": "clubs \\ud800?"}',  # a lone surrogate through a JSON escape
        json.dumps({"id": "a", "question": "players of AIB?"}).encode(),  # id "a" again
        b"",
        json.dumps({"question": "players of the club AIB?"}).encode(),  # no id: the line number
        json.dumps({"id": 9, "question": "  "}).encode(),
    ]
    qfile = tmp_path / "q.jsonl"
    qfile.write_bytes(codecs.BOM_UTF8 + b"\n".join(lines) + b"\n")
    assert main(["ask", "--questions", str(qfile), "--index-dir", example_index, "--offline"]) == 3
    captured = capsys.readouterr()
    out = [json.loads(l) for l in captured.out.splitlines()]
    assert [o["id"] for o in out] == ["a", 2, 3, "d", "e", "a", 8, 9]  # one line out per non-blank line in
    answered = {o["id"]: o for o in out if "error" not in o}
    assert set(answered) == {"a", 8} and answered["a"]["question"] == GOOD and answered["a"]["tables"]
    errors = {o.get("line"): o["error"] for o in out if "error" in o}
    assert "not UTF-8 text (byte 0xe9" in errors[2]
    assert "not a JSON object" in errors[3] and "'question'" in errors[4]
    assert "not valid text" in errors[5] and "duplicate id" in errors[6] and "line 1" in errors[6]
    assert "empty question" in errors[9]
    assert "6 of 8 lines got an error" in captured.err and "Traceback" not in captured.err


def test_a_latin1_questions_file_gets_an_error_per_bad_line(example_index, tmp_path, capsys):
    qfile = tmp_path / "latin1.jsonl"
    qfile.write_text('{"id": 1, "question": "Qui sont les joueurs du club né à Málaga?"}\n'
                     '{"id": 2, "question": "which clubs have players?"}\n', encoding="latin-1")
    assert main(["ask", "--questions", str(qfile), "--index-dir", example_index, "--offline"]) == 3
    first, second = (json.loads(l) for l in capsys.readouterr().out.splitlines())
    assert "not UTF-8 text" in first["error"] and "save the file as UTF-8" in first["error"]
    assert second["id"] == 2 and "error" not in second


def test_relevance_questions_file_that_is_not_utf8_names_its_line(example_index, tmp_path):
    from raylake.index.reader import LakeIndex
    from raylake.relevance.train import read_examples

    qfile = tmp_path / "q.jsonl"
    qfile.write_bytes(codecs.BOM_UTF8 + b'{"question": "clubs?", "gold_tables": ["sports/club.csv"]}\n'
                      + '{"question": "Málaga?", "gold_tables": ["sports/club.csv"]}\n'.encode("latin-1"))
    with pytest.raises(RaylakeError, match=r"q\.jsonl:2: not UTF-8 text"):
        read_examples(str(qfile), LakeIndex(example_index))
