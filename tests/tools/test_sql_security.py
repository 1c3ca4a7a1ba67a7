"""The read-only SQL tool against adversarial queries: each is refused with a one-line reason,
and nothing is written anywhere (the probe files stay absent, the lake unchanged)."""
from __future__ import annotations

import hashlib
import os

import pytest

from raylake.tools import ToolError, sql


def _lake_digest(root: str) -> str:
    h = hashlib.sha256()
    for folder, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            p = os.path.join(folder, f)
            h.update(p.encode())
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


ATTACKS = [
    # writes and DDL
    ("COPY (SELECT 1) TO '{probe}'", "only SELECT"),
    ("COPY \"sports/player.csv\" TO '{probe}'", "only SELECT"),
    ("CREATE TABLE t AS SELECT 1", "only SELECT"),
    ("INSERT INTO \"sports/player.csv\" VALUES (1, 'x', 1, 'y')", "only SELECT"),
    ("DROP VIEW \"sports/player.csv\"", "only SELECT"),
    ("EXPORT DATABASE '{probe}'", "only SELECT"),
    # databases, extensions, settings
    ("ATTACH '{probe}' AS evil", "only SELECT"),
    ("INSTALL httpfs", "only SELECT"),
    ("LOAD httpfs", "only SELECT"),
    ("SET enable_external_access = true", "only SELECT"),
    ("PRAGMA enable_profiling", "only SELECT"),
    # files outside the lake, and file functions at all
    ("SELECT * FROM read_csv('/etc/passwd')", "not allowed"),
    ("SELECT * FROM read_csv_auto('/etc/passwd')", "not allowed"),
    ("SELECT * FROM read_text('/etc/passwd')", "not allowed"),
    ("SELECT * FROM glob('/etc/*')", "not allowed"),
    ("SELECT * FROM read_parquet('https://example.com/x.parquet')", "not allowed"),
    ("SELECT * FROM '/etc/passwd'", "no table"),
    ("SELECT * FROM \"../../etc/passwd\"", "no table"),
    ("SELECT * FROM (SELECT * FROM read_csv('/etc/passwd'))", "not allowed"),
    ("WITH x AS (SELECT * FROM read_csv('/etc/passwd')) SELECT * FROM x", "not allowed"),
    ("SELECT (SELECT count(*) FROM read_csv('/etc/passwd'))", "not allowed"),
    ("SELECT * FROM duckdb_settings()", "not allowed"),
    ("SELECT * FROM information_schema.tables", "no table"),
    # multi-statement injections
    ("SELECT 1; COPY (SELECT 1) TO '{probe}'", "one SQL statement"),
    ("SELECT * FROM \"sports/player.csv\" WHERE Name = 'x'; DROP TABLE y; --'", "one SQL statement"),
    ("SELECT 1; ATTACH '{probe}' AS evil", "one SQL statement"),
    ("SELECT 1;;INSTALL httpfs", "one SQL statement"),
    # not SQL
    ("", "empty"),
    ("SELEC 1", "does not parse"),
]


@pytest.mark.parametrize("query, needle", ATTACKS)
def test_attack_is_refused_and_writes_nothing(toolbox, example_lake, tmp_path, query, needle):
    probe = tmp_path / "probe.out"
    before = _lake_digest(example_lake)
    with pytest.raises(ToolError) as e:
        sql(toolbox, query.format(probe=probe))
    msg = str(e.value)
    assert needle in msg and "\n" not in msg
    assert not probe.exists() and os.listdir(tmp_path) == []
    assert _lake_digest(example_lake) == before


def test_scalar_file_and_env_access_fails(toolbox):
    # no table function is named, so this reaches DuckDB, whose locked configuration refuses it
    with pytest.raises(ToolError):
        sql(toolbox, "SELECT getenv('HOME')")


def test_lake_views_still_work_after_refusals(toolbox):
    with pytest.raises(ToolError):
        sql(toolbox, "SELECT * FROM read_csv('/etc/passwd')")
    assert sql(toolbox, 'SELECT count(*) FROM "sports/club.csv"')["rows"][0][0] > 0


def test_time_cap_interrupts_a_runaway_query(toolbox):
    from dataclasses import replace

    from raylake.tools import Toolbox

    slow = Toolbox(toolbox.index.index_dir, toolbox.ctx.replace(tools=replace(toolbox.cfg, sql_timeout_s=0.2)))
    with pytest.raises(ToolError, match="time cap"):
        sql(slow, "SELECT count(*) FROM range(100000000000) a, range(1000) b WHERE a.range * b.range = -1")
