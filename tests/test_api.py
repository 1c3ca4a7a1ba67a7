"""The Python API: the README's example run as written, the answer's table views, the package surface."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE_LAKE = os.path.join(ROOT, "examples", "lake")


def _readme_example() -> str:
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = readme[readme.index("## Python API"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def example(ray_session, tmp_path_factory):
    """The README's example run in a folder holding a copy of ``examples/lake``: its variables."""
    work = tmp_path_factory.mktemp("api")
    shutil.copytree(EXAMPLE_LAKE, work / "examples" / "lake")
    cwd = os.getcwd()
    os.chdir(work)
    try:
        out = io.StringIO()
        ns: dict = {}
        with contextlib.redirect_stdout(out):
            exec(compile(_readme_example(), "README.md", "exec"), ns)
    finally:
        os.chdir(cwd)
    ns["_stdout"] = out.getvalue()
    return ns


def _gold(question: str) -> set[str]:
    with open(os.path.join(ROOT, "examples", "questions.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    return next(set(r["gold_tables"]) for r in rows if r["question"] == question)


def test_the_readme_example_finds_the_tables_and_fuses_them(example):
    answer, fused = example["answer"], example["fused"]
    assert _gold(answer.question) <= set(answer.paths)  # the example's question, with its known tables
    assert [t["table"] for t in answer.tables] == answer.paths
    assert [s["new"] for s in answer.steps] == answer.paths  # the plan adds each table once, in table order
    assert fused.num_rows > 0 and fused.column_names[-1] == "_provenance"
    # every fused row came through each join the plan made: its key values agree (case-folded text)
    fusion, rows = answer.fusion(), fused.to_pylist()
    label = {t: os.path.splitext(p["tables"][0])[0] for p in fusion.parts for t in p["tables"]}  # a shard: its part's
    left_out = {f["new"] for f in fusion.steps if f.get("left_out")}
    joins = [s for s in answer.steps if s["op"] == "join" and s["new"] not in left_out]
    assert joins
    # a shard unioned into a part started by another table reads as that table's columns: its union mapping
    # ({shard column: part column}) names the key where the fused table holds it
    as_part = {u["new"]: u["mapping"] for u in answer.steps if u["op"] == "union"}
    for s in joins:
        a, b = label[s["anchor"]], label[s["new"]]
        ka, kb = s["keys"]["anchor_column"], s["keys"]["new_column"]
        ka, kb = as_part.get(s["anchor"], {}).get(ka, ka), as_part.get(s["new"], {}).get(kb, kb)
        for r in rows:
            assert str(r[f"{a}.{ka}"]).strip().lower() == str(r[f"{b}.{kb}"]).strip().lower()
    # ... and from the plan's files only, shards of a union part each named where they gave the row
    for r in rows:
        assert set(r["_provenance"].split(" ⋈ ")) <= set(answer.paths)
    assert repr(answer) in example["_stdout"] and str(fused.num_rows) in example["_stdout"]


def test_the_answer_sql_gives_the_fused_rows(example):
    import duckdb

    answer, fused = example["answer"], example["fused"]
    rel = duckdb.sql(answer.sql)
    assert rel.columns == fused.column_names
    prov = sorted(r[0] for r in rel.select("_provenance").fetchall())
    assert prov == sorted(fused.column("_provenance").to_pylist())


def test_table_views_and_display(example, monkeypatch):
    answer, fused = example["answer"], example["fused"]
    assert answer.to_arrow() is fused  # fused once, on first use
    assert answer.to_polars().shape == (fused.num_rows, fused.num_columns)
    assert list(answer.to_pandas().columns) == fused.column_names
    html = answer._repr_html_()
    assert all(p in html for p in answer.paths) and "<table>" in html
    assert len(repr(answer)) < 300 and answer.paths[0] in repr(answer)

    from raylake.errors import RaylakeError

    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(RaylakeError, match="needs pandas"):
        answer.to_pandas()


def test_an_empty_plan_has_nothing_to_fuse(example):
    from raylake.errors import FusionError
    from raylake.search import Answer, Plan

    why = "no table in the lake supports any part of the question"
    empty = Answer("zzqx?", None, "offline", Plan(), [], {}, reason=why, lake_root=example["answer"].lake_root)
    with pytest.raises(FusionError, match=f"nothing to fuse: {why}"):
        empty.to_arrow()
    assert why in empty._repr_html_() and "tables=[]" in repr(empty)


def test_fuse_plan_is_a_function_and_raylake_fuse_a_module():
    import raylake
    import raylake.fuse

    for _ in range(2):  # the lazy export once returned a function, then the subpackage
        assert callable(raylake.fuse_plan) and raylake.fuse_plan is raylake.fuse.fuse
        assert type(raylake.fuse).__name__ == "module"
    assert set(raylake.__all__) >= {"open", "fuse_plan", "Engine", "Answer"}


def test_python_m_raylake_is_the_cli(tmp_path):
    env = {**os.environ, "PYTHONPATH": ROOT}
    ok = subprocess.run([sys.executable, "-m", "raylake", "--help"], capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and "ask" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "raylake", "inspect", "--index-dir", str(tmp_path / "none")],
                         capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and bad.stderr.startswith("raylake: error:") and "Traceback" not in bad.stderr
