"""The habits every ``raylake`` command shares: -v/-q, inspect --list, index --dry-run,
``--index-dir`` on trajectories, and the load notice of ``ask``."""
from __future__ import annotations

import argparse
import json
import logging
import os
import shutil

import pytest

from raylake.cli import build_parser, main


def _leaves(parser: argparse.ArgumentParser, name: str = "raylake"):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield name, parser
    for action in subs:
        for sub_name, sub in action.choices.items():
            yield from _leaves(sub, f"{name} {sub_name}")


def test_every_command_takes_verbose_and_quiet():
    leaves = list(_leaves(build_parser()))
    assert len(leaves) > 10
    for name, leaf in leaves:
        for flag in ("-v", "--verbose", "-q", "--quiet"):
            assert flag in leaf._option_string_actions, f"{name} lacks {flag}"


def test_quiet_and_verbose_parse_before_or_after_the_command():
    p = build_parser()
    args = p.parse_args(["index", "lake", "--quiet"])  # the older spelling still works
    assert args.quiet is True
    assert p.parse_args(["-v", "inspect"]).verbose == 1  # a subcommand's default does not reset a flag given before it
    assert p.parse_args(["inspect", "-vv"]).verbose == 2
    args = p.parse_args(["relevance", "-q", "rank", "a question"])
    assert args.quiet is True


@pytest.fixture
def raylake_logger():
    log = logging.getLogger("raylake")
    level, handlers = log.level, list(log.handlers)
    yield log
    log.setLevel(level)
    log.handlers[:] = handlers


def test_verbose_sets_the_raylake_log_level(tmp_path, raylake_logger):
    missing = str(tmp_path / "none")
    assert main(["inspect", "--index-dir", missing, "-v"]) == 2
    assert raylake_logger.level == logging.INFO
    assert main(["-vv", "inspect", "--index-dir", missing]) == 2
    assert raylake_logger.level == logging.DEBUG
    assert sum(getattr(h, "raylake_cli", False) for h in raylake_logger.handlers) == 1


def test_inspect_list(example_index, capsys):
    from raylake.index.reader import LakeIndex

    paths = list(LakeIndex.load(example_index).paths)
    assert main(["inspect", "--index-dir", example_index, "--list"]) == 0
    assert capsys.readouterr().out.splitlines() == paths
    assert main(["inspect", "--index-dir", example_index, "--list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == paths
    assert main(["inspect", paths[0], "--index-dir", example_index, "--list"]) == 2


def test_index_dry_run(example_index, example_lake, tmp_path, capsys, monkeypatch):
    import raylake.index.build as build
    from raylake.index.store import current_build

    monkeypatch.setattr(build, "start_ray", lambda *a, **k: pytest.fail("a dry run started Ray"))
    lake = tmp_path / "lake"
    shutil.copytree(example_lake, lake)  # copy2 keeps mtimes: nothing changed yet
    before = current_build(example_index)
    assert main(["index", str(lake), "--index-dir", example_index, "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["rebuild"] is None and plan["new"] == plan["changed"] == plan["removed"] == []

    files = sorted(str(p.relative_to(lake)) for p in lake.rglob("*.csv"))
    with open(lake / files[0], "a", encoding="utf-8") as fh:
        fh.write("x\n")
    os.remove(lake / files[1])
    shutil.copy(lake / files[2], lake / "brand_new.csv")
    assert main(["index", str(lake), "--index-dir", example_index, "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["new"], plan["changed"], plan["removed"]) == (["brand_new.csv"], [files[0]], [files[1]])
    assert main(["index", str(lake), "--index-dir", example_index, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "new      brand_new.csv" in out and f"changed  {files[0]}" in out and f"removed  {files[1]}" in out
    assert current_build(example_index) == before  # nothing written

    fresh = tmp_path / ".fresh"
    assert main(["index", str(lake), "--index-dir", str(fresh), "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["rebuild"] == "no index yet" and "brand_new.csv" in plan["new"] and not fresh.exists()


def test_trajectories_takes_index_dir(monkeypatch, tmp_path, capsys):
    import raylake.learn.trajectories as traj

    seen = []

    def fake_generate(index_dir, out, cfg, address=None, progress=True):
        seen.append((index_dir, progress))
        raise KeyboardInterrupt  # stop here: only the arguments matter

    monkeypatch.setattr(traj, "generate", fake_generate)
    out = str(tmp_path / "t")
    main(["trajectories", "--index-dir", "idx", "--out", out, "-q"])
    main(["trajectories", "old_idx", "--out", out])  # the older positional form
    main(["trajectories", "--out", out])
    assert seen == [("idx", False), ("old_idx", True), (".raylake", True)]
    assert main(["trajectories", "a", "--index-dir", "b", "--out", out]) == 2
    assert "two indexes" in capsys.readouterr().err


def test_ask_reports_load_time(monkeypatch, capsys):
    import raylake.index.store as store
    import raylake.search.engine as engine
    from raylake.search.cli import _engine

    class FakeEngine:
        def __init__(self, index_dir, notice=None, **kw):
            notice("relevance model adapted")

    monkeypatch.setattr(engine, "Engine", FakeEngine)
    monkeypatch.setattr(store, "read_manifest", lambda index_dir: ("build", {}))
    ns = dict(model_dir=None, relevance="off", part_actors=False, offline=True, index_dir="x")
    _engine(argparse.Namespace(**ns, quiet=False, json=False))
    err = capsys.readouterr().err
    assert "loading index and models" in err and "relevance model adapted" in err and "loaded in " in err
    _engine(argparse.Namespace(**ns, quiet=False, json=True))
    assert capsys.readouterr().err.strip() == "raylake: relevance model adapted"
    _engine(argparse.Namespace(**ns, quiet=True, json=False))
    assert capsys.readouterr().err == ""


def test_ask_checks_out_before_loading(tmp_path, capsys, monkeypatch):
    import raylake.search.engine as engine

    monkeypatch.setattr(engine, "Engine", lambda *a, **k: pytest.fail("loaded before checking --out"))
    assert main(["ask", "q", "--out", str(tmp_path / "none" / "x.parquet")]) == 2
    assert main(["ask", "q", "--out", str(tmp_path / "x.txt")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "does not exist" in err[0] and ".parquet or .csv" in err[1]
