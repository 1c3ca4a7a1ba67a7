"""``raylake integrate``: outputs on the example lake, and one-line errors on bad input."""
from __future__ import annotations

import json
import os

import pyarrow.parquet as pq

from raylake.cli import main


def test_integrate_writes_tables_results_and_report(example_index, tmp_path, capsys):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"id": "a/1", "question": "Sales quantity of each product by store city"}) + "\n"
                     + json.dumps({"id": "b", "question": "Which players belong to which club?"}) + "\n")
    out = tmp_path / "out"
    code = main(["integrate", str(qfile), "--index-dir", example_index, "--out", str(out), "-q"])
    assert code in (0, 3)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a/1", "b"]
    report = json.loads((out / "report.json").read_text())
    assert report["questions"] == 2 and report["validations"] <= report["validations_naive"]
    assert report["validations"] == len(report["judged"])
    for r in rows:
        if r["table_file"]:
            assert "/" not in r["table_file"]  # ids become safe file names
            table = pq.read_table(out / r["table_file"])
            assert table.num_rows == r["rows"] and "_provenance" in table.column_names
        for e in r["edges"]:  # every edge of a returned tree was validated
            assert e["validated_by"] == "offline" and e["a"] in r["tables"] and e["b"] in r["tables"]
    assert any(r["table_file"] for r in rows)
    assert "validations:" in capsys.readouterr().out


def test_integrate_bad_input_is_one_line(example_index, tmp_path, capsys):
    good = tmp_path / "q.jsonl"
    good.write_text(json.dumps({"question": "stores"}) + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    cases = [
        (["integrate", str(tmp_path / "missing.jsonl"), "--index-dir", example_index, "--out", str(tmp_path / "o")], "cannot read questions file"),
        (["integrate", str(bad), "--index-dir", example_index, "--out", str(tmp_path / "o")], "bad.jsonl:1: not a JSON object"),
        (["integrate", str(good), "--index-dir", str(tmp_path / "noindex"), "--out", str(tmp_path / "o")], "raylake: error:"),
        (["integrate", str(good), "--index-dir", example_index, "--out", str(a_file)], "is a file"),
        (["integrate", str(good), "--index-dir", example_index, "--out", str(tmp_path / "o"), "--coarse-k", "0"], "--coarse-k"),
    ]
    for argv, expected in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("raylake: error:") and "\n" not in err and expected in err, err
    assert not os.path.exists(tmp_path / "o")  # nothing written on a user error
