"""``build_index`` on the example lake: the edges it must find, incremental re-indexing,
the atomic swap after a killed run, and an index of another format version.

Incremental tests start from a copy of the session's ``example_index`` next to a copy of
the example lake (``copy2`` keeps the files' mtimes, so the copied index is up to date with
the copied lake): each test gets a private lake to change without a cold build of its own.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from raylake.cli import main
from raylake.config import IndexConfig
from raylake.errors import IndexVersionError
from raylake.index import build as build_mod
from raylake.index import store
from raylake.index.build import build_index
from raylake.index.reader import LakeIndex

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _edge_key(e: dict) -> tuple:
    return tuple(e[k] if not isinstance(e[k], float) else round(e[k], 9) for k in sorted(e))


def _touching(edges, path):
    return [e for e in edges if path in (e["src_table"], e["dst_table"])]


@pytest.fixture
def lake_and_index(example_lake, example_index, tmp_path):
    """A private copy of the example lake and of its index, the index up to date with it."""
    lake, index_dir = str(tmp_path / "lake"), str(tmp_path / "index")
    shutil.copytree(example_lake, lake)
    shutil.copytree(example_index, index_dir)
    return lake, index_dir


@pytest.fixture
def no_ray(monkeypatch):
    """Fail the test if the build tries to start or join Ray."""

    def refuse(address=None, **kw):
        raise AssertionError("an up-to-date lake must not need Ray")

    monkeypatch.setattr(build_mod, "start_ray", refuse)


# ---------------------------------------------------------------------------- edges of the example lake


def test_example_lake_is_fully_indexed(example_lake, example_index):
    idx = LakeIndex(example_index)
    files = sorted(os.path.relpath(os.path.join(d, f), example_lake).replace(os.sep, "/")
                   for d, _, fs in os.walk(example_lake) for f in fs)
    assert idx.paths == files
    assert idx.summary["skipped"] == 0 and idx.summary["tables"] == len(files)
    assert idx.signatures.shape == (idx.n_columns, idx.manifest["params"]["num_perm"])
    assert idx.emb_table.shape[0] == idx.n_tables
    assert idx.faiss("tables").ntotal == idx.n_tables


def test_reordered_respelled_shards_are_a_union_edge_with_the_right_mapping(example_index):
    idx = LakeIndex(example_index)
    a, b = "sports/points_2019.csv", "sports/points_2020.csv"
    unions = [e for e in idx.edges if e["kind"] == "union" and {e["src_table"], e["dst_table"]} == {a, b}]
    assert len(unions) == 1
    e = unions[0]
    mapping = json.loads(e["mapping"])
    truth = {"Player_ID": "PlayerId", "Match_ID": "MatchId", "Points": "POINTS"}
    assert mapping == (truth if e["src_table"] == a else {v: k for k, v in truth.items()})
    assert e["score"] >= idx.manifest["params"]["union_threshold"]


def test_fully_respelled_row_disjoint_shards_align_by_content(example_index):
    """GRAFT Fig. 1: no shared header and no shared instructor id; codes' format, the shared
    university codes and the role words align them."""
    idx = LakeIndex(example_index)
    a, b = "universities/professors.csv", "universities/lecturers.csv"
    unions = [e for e in idx.edges if e["kind"] == "union" and {e["src_table"], e["dst_table"]} == {a, b}]
    assert len(unions) == 1
    e = unions[0]
    truth = {"UnivID": "SchoolCode", "InstructorID": "EmployeeID", "Role": "Position"}
    assert json.loads(e["mapping"]) == (truth if e["src_table"] == a else {v: k for k, v in truth.items()})
    assert e["row_overlap"] < 0.1  # shards, not copies


def test_value_shapes_and_tokens():
    from raylake.index.unions import value_shapes, value_tokens

    assert value_shapes(["I101", "I103"]) == {"A999"}
    assert value_shapes(["AB-12", "C7"]) == {"AA-99", "A9"}
    assert value_shapes(["Computer Science", "I101"]) is None  # not every value is a code
    assert value_shapes(["101", "102"]) is None  # plain numbers are not codes
    assert value_tokens(["Assistant Professor", "Lecturer"], "text") == {"assistant", "professor", "lecturer"}
    assert value_tokens(["1", "2"], "int") is None


def test_foreign_key_is_a_join_edge_from_fk_to_key(example_index):
    idx = LakeIndex(example_index)
    fk = [e for e in idx.edges if e["kind"] == "join" and e["src_table"] == "sports/player.csv" and e["src_column"] == "Club_ID"
          and e["dst_table"] == "sports/club.csv" and e["dst_column"] == "Club_ID"]
    assert len(fk) == 1
    assert fk[0]["containment"] > 0.8  # every player's club is a club
    # it is the strongest edge of player.Club_ID
    best = max((e for e in idx.edges if e["kind"] == "join" and ("sports/player.csv", "Club_ID") in
                ((e["src_table"], e["src_column"]), (e["dst_table"], e["dst_column"]))), key=lambda e: e["score"])
    assert best is fk[0] or _edge_key(best) == _edge_key(fk[0])


# ---------------------------------------------------------------------------- incremental re-index


def test_unchanged_lake_is_up_to_date_without_ray(lake_and_index, no_ray):
    lake, index_dir = lake_and_index
    build = store.current_build(index_dir)
    s = build_index(lake, index_dir, progress=False)
    assert s["up_to_date"] and s["changed"] == 0 and s["removed"] == 0
    assert s["tables"] == 27
    assert store.current_build(index_dir) == build  # nothing rewritten


def test_touched_file_is_up_to_date_without_ray(lake_and_index, no_ray):
    lake, index_dir = lake_and_index
    path = os.path.join(lake, "sports", "club.csv")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))
    s = build_index(lake, index_dir, progress=False)
    assert s["up_to_date"] and s["changed"] == 0
    # the new mtime is recorded, so the next scan does not hash the file again
    _, manifest = store.read_manifest(index_dir)
    assert manifest["files"]["sports/club.csv"]["mtime_ns"] == st.st_mtime_ns + 5 * 10**9


def test_changed_file_is_the_only_one_reprofiled_and_its_edges_recomputed(ray_session, lake_and_index):
    lake, index_dir = lake_and_index
    before = LakeIndex(index_dir)
    before_edges = before.edges  # load now: the new build deletes the old folder (lazy loads would fail)
    club = "sports/club.csv"
    with open(os.path.join(lake, club), "a", encoding="utf-8") as fh:  # 22 clubs nobody plays for
        fh.writelines(f"{i},New Club {i},Spain,{1900 + i}\n" for i in range(9, 31))

    s = build_index(lake, index_dir, progress=False)
    assert not s["up_to_date"] and s["changed"] == 1 and s["removed"] == 0 and s["tables"] == 27
    after = LakeIndex(index_dir)
    assert after.paths == before.paths
    t = after.path_id[club]
    assert after.tables["n_rows"][t] == 30
    # the other tables were carried over, profile for profile
    for p in before.paths:
        if p != club:
            i, j = before.path_id[p], after.path_id[p]
            assert after.tables["sha256"][j] == before.tables["sha256"][i]
            assert [before.columns["n_distinct"][c] for c in before.table_columns[i]] == [after.columns["n_distinct"][c] for c in after.table_columns[j]]
    # edges between unchanged tables carried as they were; the changed table's recomputed
    assert {_edge_key(e) for e in after.edges if club not in (e["src_table"], e["dst_table"])} == \
        {_edge_key(e) for e in before_edges if club not in (e["src_table"], e["dst_table"])}

    def fk(idx):
        return next(e for e in idx.edges if e["kind"] == "join" and e["src_table"] == "sports/player.csv"
                    and e["src_column"] == "Club_ID" and e["dst_table"] == club and e["dst_column"] == "Club_ID")

    assert fk(before)["containment_rev"] > 0.9  # every club had players
    assert fk(after)["containment_rev"] < 0.5  # now most clubs have none: the edge was recomputed
    assert fk(after)["containment"] > 0.8


def test_added_file_is_profiled_and_joins_its_shards(ray_session, lake_and_index):
    lake, index_dir = lake_and_index
    rng = random.Random(3)
    new = "sports/points_2021.csv"
    with open(os.path.join(lake, new), "w", encoding="utf-8") as fh:  # another shard: re-spelled, reordered
        fh.write("MATCH_ID,POINTS,PLAYER_ID\n")
        fh.writelines(f"{m},{rng.randint(0, 30)},{rng.randint(1, 40)}\n" for m in range(81, 121))
    s = build_index(lake, index_dir, progress=False)
    assert s["changed"] == 1 and s["tables"] == 28 and s["removed"] == 0
    idx = LakeIndex(index_dir)
    assert new in idx.path_id
    shards = {e["src_table"] if e["dst_table"] == new else e["dst_table"]
              for e in _touching(idx.edges, new) if e["kind"] == "union"}
    assert shards & {"sports/points_2019.csv", "sports/points_2020.csv"}
    assert any(e["kind"] == "union" and {e["src_table"], e["dst_table"]} == {"sports/points_2019.csv", "sports/points_2020.csv"}
               for e in idx.edges)  # the old union edge was carried over


def test_removed_file_leaves_the_index_with_its_edges(ray_session, lake_and_index):
    lake, index_dir = lake_and_index
    gone = "sports/points_2020.csv"
    assert _touching(LakeIndex(index_dir).edges, gone)
    os.remove(os.path.join(lake, gone))
    s = build_index(lake, index_dir, progress=False)
    assert s["removed"] == 1 and s["changed"] == 0 and s["tables"] == 26 and not s["up_to_date"]
    idx = LakeIndex(index_dir)
    assert gone not in idx.path_id and not _touching(idx.edges, gone)
    assert gone not in idx.manifest["files"]
    assert len(idx.col_table) == idx.emb_header.shape[0] == idx.signatures.shape[0]


# ---------------------------------------------------------------------------- killed run, atomic swap


def _answers(index_dir: str) -> LakeIndex:
    """The live index loads and answers: a profile with its join edge, a nearest-table search."""
    idx = LakeIndex(index_dir)
    prof = idx.table_profile("sports/player.csv")
    assert [c["name"] for c in prof["columns"]] == ["Player_ID", "Name", "Club_ID", "Position"]
    assert any(e["kind"] == "join" and e["dst_table"] == "sports/club.csv" for e in prof["edges"])
    t = idx.path_id["sports/club.csv"]
    _, nn = idx.faiss("tables").search(np.ascontiguousarray(idx.emb_table[t : t + 1]), 1)
    assert nn[0, 0] == t
    return idx


def _kill_during_write(cmd: list[str], index_dir: str, timeout: float = 120.0) -> bool:
    """Run ``cmd``; SIGKILL it as soon as its build folder appears. False when it finished first."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if any(n.startswith(".tmp-build-") for n in os.listdir(index_dir)):
                os.killpg(proc.pid, signal.SIGKILL)  # its own session: the CLI driver and nothing else of ours
                proc.wait()  # reaped: a zombie's pid would still look alive to the next build
                return True
            time.sleep(0.001)
        if proc.poll() is None:
            pytest.fail("raylake index did not reach its write stage in time")
        return False
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_killed_run_leaves_previous_index_and_next_build_cleans_up(ray_session, lake_and_index):
    lake, index_dir = lake_and_index
    old_build = store.current_build(index_dir)
    before = LakeIndex(index_dir)
    # the CLI in a subprocess, joined to the session's Ray (no second Ray to start)
    address = ray_session.get_runtime_context().gcs_address
    cmd = [sys.executable, "-m", "raylake.cli", "index", lake, "--index-dir", index_dir, "--address", address, "--json", "--quiet"]
    for attempt in range(3):  # the write stage lasts ~0.2 s; in the rare race it is lost, change the lake and go again
        with open(os.path.join(lake, "misc", "weather.csv"), "a", encoding="utf-8") as fh:
            fh.write(f"Nowhere,2099-01-0{attempt + 1},{attempt},0.0\r\n")
        if _kill_during_write(cmd, index_dir):
            break
        old_build = store.current_build(index_dir)
        before = LakeIndex(index_dir)
    else:
        pytest.fail("three runs finished before they could be killed")

    leftovers = [n for n in os.listdir(index_dir) if n.startswith(".tmp-build-")]
    assert len(leftovers) == 1
    assert not os.path.exists(os.path.join(index_dir, leftovers[0], "manifest.json"))  # killed mid-write
    # the previous index is intact and answers queries
    assert store.current_build(index_dir) == old_build
    idx = _answers(index_dir)
    assert idx.paths == before.paths and idx.summary == before.summary
    # the next build succeeds and removes the dead run's folder
    s = build_index(lake, index_dir, progress=False)
    assert s["changed"] == 1 and not s["up_to_date"]
    assert not [n for n in os.listdir(index_dir) if n.startswith(".tmp-build-")]
    assert store.current_build(index_dir) != old_build
    assert LakeIndex(index_dir).tables["n_rows"][idx.path_id["misc/weather.csv"]] > before.tables["n_rows"][before.path_id["misc/weather.csv"]]


_HOLD_A_BUILD = """
import sys, time
from raylake.index.store import BuildWriter
w = BuildWriter(sys.argv[1])
print(w.tmp, flush=True)
time.sleep(600)
"""


def _build_in_child(index_dir: str) -> tuple[subprocess.Popen, str]:
    """A child process midway through writing a build (its folder made and locked)."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLD_A_BUILD, index_dir], stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def test_every_run_clears_a_killed_builds_folder_and_keeps_a_live_ones(lake_and_index, no_ray):
    lake, index_dir = lake_and_index
    killed, killed_tmp = _build_in_child(index_dir)
    killed.kill()
    killed.wait()
    live, live_tmp = _build_in_child(index_dir)  # a concurrent build, still writing
    here = store.BuildWriter(index_dir)  # one of this very process, still writing
    legacy = os.path.join(index_dir, ".tmp-build-legacy")  # left by a raylake that recorded only its pid
    os.makedirs(legacy)
    with open(os.path.join(legacy, ".owner.pid"), "w") as fh:
        fh.write(str(killed.pid))
    starting = os.path.join(index_dir, ".tmp-new-starting")  # a build taking its lock this moment
    abandoned = os.path.join(index_dir, ".tmp-new-abandoned")  # one killed while taking it, long ago
    os.makedirs(starting)
    os.makedirs(abandoned)
    os.utime(abandoned, (time.time() - 3600, time.time() - 3600))
    try:
        assert all(os.path.isdir(p) for p in (killed_tmp, live_tmp, here.tmp))
        s = build_index(lake, index_dir, progress=False)
        assert s["up_to_date"]  # nothing to rebuild, and still the leftovers went
        left = {n for n in os.listdir(index_dir) if n.startswith(".tmp-")}
        assert left == {os.path.basename(live_tmp), os.path.basename(here.tmp), ".tmp-new-starting"}
        live.kill()
        live.wait()
        here.abort()
        assert store.clear_stale(index_dir) == [os.path.basename(live_tmp)]
    finally:
        for p in (killed, live):
            if p.poll() is None:
                p.kill()
                p.wait()


# A warm interpreter that runs `raylake index` on demand: for each argv (a JSON line on stdin) it
# forks a child that runs raylake.cli.main on it, prints "pid N", reaps it and prints "exit RC".
# The child is the command itself, minus the 1-2 s of imports a fresh `python -m raylake.cli`
# pays before it does anything worth killing.
_INDEX_ON_DEMAND = """
import json, os, sys
import ray, raylake.cli, raylake.index.build
for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        rc = raylake.cli.main(json.loads(line))
        ray.shutdown()
        os._exit(rc)
    print("pid", pid, flush=True)
    print("exit", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


def test_ten_kills_at_random_moments_never_break_the_index(ray_session, lake_and_index, tmp_path):
    """Each run re-indexes a changed lake and is SIGKILLed at a random moment: the index left is
    the previous one or the new one, it loads and answers, and no leftovers pile up."""
    lake, index_dir = lake_and_index
    weather = os.path.join(lake, "misc", "weather.csv")
    argv = json.dumps(["index", lake, "--index-dir", index_dir, "--address", ray_session.get_runtime_context().gcs_address, "--quiet"])
    with open(tmp_path / "stderr", "w") as err:
        runner = subprocess.Popen([sys.executable, "-c", _INDEX_ON_DEMAND], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=err, text=True, bufsize=1, env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})

    def run(kill_after: float | None) -> tuple[int, float]:
        """One re-index, SIGKILLed after ``kill_after`` s unless it ends first; (exit code, seconds)."""
        runner.stdin.write(argv + "\n")
        runner.stdin.flush()
        line = runner.stdout.readline()
        assert line.startswith("pid "), f"the runner died: {(tmp_path / 'stderr').read_text()[-2000:]}"
        pid, start = int(line.split()[1]), time.monotonic()
        if not select.select([runner.stdout], [], [], 300 if kill_after is None else kill_after)[0]:
            with contextlib.suppress(ProcessLookupError):  # it ended this instant (the pid stays ours until reaped)
                os.kill(pid, signal.SIGKILL)
        return int(runner.stdout.readline().split()[1]), time.monotonic() - start

    rng = random.Random(36)
    moments: list[float] = []
    idx = _answers(index_dir)
    weather_rows = lake_rows = idx.tables["n_rows"][idx.path_id["misc/weather.csv"]]
    appended = kills = finished = 0
    try:
        for attempt in range(25):
            with open(weather, "a", encoding="utf-8") as fh:  # a change, so the run has work to do
                fh.write(f"Nowhere,2099-{1 + appended // 28:02d}-{1 + appended % 28:02d},{appended},0.0\r\n")
            appended += 1
            lake_rows += 1
            build_before = store.current_build(index_dir)
            # the first run, unkilled, times a whole re-index; the others die at a random moment of
            # each tenth of one, in random order (a run that ends first leaves its moment to the next)
            rc, took = run(moments[kills] if moments else None)
            if not moments:
                moments = [0.95 * took * (k + rng.random()) / 10 for k in range(10)]
                rng.shuffle(moments)
            kills += rc == -signal.SIGKILL
            finished += rc == 0
            assert rc in (0, -signal.SIGKILL), (tmp_path / "stderr").read_text()[-2000:]
            idx = _answers(index_dir)
            n = idx.tables["n_rows"][idx.path_id["misc/weather.csv"]]
            if store.current_build(index_dir) == build_before:  # the previous index, as it was
                assert rc != 0 and n == weather_rows
            else:  # or the new one, with every row of the lake
                assert n == lake_rows
                weather_rows = n
            names = os.listdir(index_dir)
            assert sum(name.startswith(".tmp-build-") for name in names) <= 1  # the dead run's own; the next run clears it
            assert sum(name.startswith(".tmp-new-") for name in names) <= 1
            assert sum(name.startswith("build-") for name in names) <= 3  # the live one, its predecessor, a killed commit's
            if kills == 10:
                break
        assert kills == 10, f"{kills} kills, {finished} runs finished first"
        rc, _ = run(None)
        assert rc == 0
        idx = _answers(index_dir)
        assert idx.tables["n_rows"][idx.path_id["misc/weather.csv"]] == lake_rows
        names = os.listdir(index_dir)
        assert not [name for name in names if name.startswith(".tmp-")]
        assert sum(name.startswith("build-") for name in names) <= 2
    finally:
        runner.stdin.close()
        try:
            runner.wait(timeout=60)
        except subprocess.TimeoutExpired:
            runner.kill()
            runner.wait()


def test_changed_edge_parameters_derive_every_edge_again_from_the_reused_profiles(ray_session, lake_and_index, tmp_path):
    lake, index_dir = lake_and_index
    before = {_edge_key(e) for e in LakeIndex(index_dir).edges}
    cfg = IndexConfig(join_max_per_column=1)
    s = build_index(lake, index_dir, cfg=cfg, progress=False)
    assert not s["up_to_date"] and s["changed"] == 0  # no file re-profiled ...
    cold = str(tmp_path / "cold")
    build_index(lake, cold, cfg=cfg, progress=False)
    # ... and the edges are those a cold build with these parameters finds, not the carried ones
    got, want = {_edge_key(e) for e in LakeIndex(index_dir).edges}, {_edge_key(e) for e in LakeIndex(cold).edges}
    assert got == want and got != before
    assert build_index(lake, index_dir, cfg=cfg, progress=False)["up_to_date"]  # recorded: the next run has nothing to do


def test_another_number_of_parts_partitions_again_with_profiles_and_edges_reused(ray_session, lake_and_index, monkeypatch):
    lake, index_dir = lake_and_index
    before = LakeIndex(index_dir)
    assert before.summary["parts"] == 1  # the session's example index: one part on 2 CPUs
    s = build_index(lake, index_dir, cfg=IndexConfig(num_parts=2), progress=False)
    assert not s["up_to_date"] and s["changed"] == 0 and s["parts"] == 2
    after = LakeIndex(index_dir)
    assert sorted(set(after.tables["part"])) == [0, 1]
    assert {_edge_key(e) for e in after.edges} == {_edge_key(e) for e in before.edges}
    monkeypatch.setattr(build_mod, "start_ray", lambda address=None, **kw: pytest.fail("an up-to-date lake must not need Ray"))
    assert build_index(lake, index_dir, cfg=IndexConfig(num_parts=2), progress=False)["up_to_date"]
    assert build_index(lake, index_dir, progress=False)["up_to_date"]  # the default asks for no particular number


def test_index_of_an_older_join_scoring_has_its_edges_derived_again(lake_and_index, no_ray):
    lake, index_dir = lake_and_index
    build = store.current_build(index_dir)
    with open(os.path.join(build, "manifest.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    del manifest["join_scoring"]  # as an index written before the field (scoring 1) has it
    with open(os.path.join(build, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh)
    with pytest.raises(AssertionError, match="must not need Ray"):
        build_index(lake, index_dir, progress=False)  # not 'up to date': the edges need Ray


# ---------------------------------------------------------------------------- format version


def test_index_of_another_format_version_is_a_clear_error(example_index, tmp_path, capsys):
    index_dir = str(tmp_path / "old")
    shutil.copytree(example_index, index_dir)
    build = store.current_build(index_dir)
    with open(os.path.join(build, "manifest.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    manifest["format_version"] = 0
    with open(os.path.join(build, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh)

    with pytest.raises(IndexVersionError) as info:
        LakeIndex(index_dir)
    msg = str(info.value)
    assert "format 0" in msg and "raylake index" in msg and "\n" not in msg

    assert main(["inspect", "--index-dir", index_dir]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and lines[0].startswith("raylake: error:") and "format 0" in lines[0]
