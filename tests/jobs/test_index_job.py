"""``jobs/index.py`` submitted as a real Ray job to a separate local head (~40 s).

The job-submission API lives in the dashboard, which the session's ``ray_session`` does not
start, so this test starts its own head: one CPU, free ports, and a private temp dir
(``RAY_TMPDIR`` and ``--temp-dir``), so that neither the test session's Ray nor any other
Ray on the machine finds or joins it. The head is stopped by process id, never with
``ray stop``, which kills every Ray process of the user on the machine (the test session's
and other people's included). It runs in plain ``pytest`` / ``make test``: no marker
deselects it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import psutil
import pytest

from raylake.index.reader import LakeIndex

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(ROOT, "jobs", "index.py")
RAY = os.path.join(os.path.dirname(sys.executable), "ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_dashboard(url: str, head: subprocess.Popen, log_path: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if head.poll() is not None:
            pytest.fail(f"ray start exited with {head.returncode}:\n{open(log_path).read()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/version", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the dashboard at {url} did not come up in {timeout:.0f} s:\n{open(log_path).read()[-3000:]}")


def _stop_head(head: subprocess.Popen) -> None:
    """SIGTERM the blocking ``ray start`` (it shuts its node down), then SIGKILL what is left of its tree."""
    try:
        tree = psutil.Process(head.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        tree = []
    head.send_signal(signal.SIGTERM)
    try:
        head.wait(timeout=20)
    except subprocess.TimeoutExpired:
        head.kill()
        head.wait()
    _, alive = psutil.wait_procs(tree, timeout=10)
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=10)


@pytest.fixture
def ray_head():
    """``(dashboard URL, env)`` of a private one-CPU head with the job API."""
    tmp = tempfile.mkdtemp(prefix="rlj-", dir="/tmp")  # short: Ray's unix socket paths must fit in 107 bytes
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": tmp, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    dash = _free_port()
    log_path = os.path.join(tmp, "head.log")
    cmd = [
        RAY, "start", "--head", "--block", "--num-cpus=1", "--include-dashboard=true", "--dashboard-host=127.0.0.1",
        f"--port={_free_port()}", f"--dashboard-port={dash}", f"--ray-client-server-port={_free_port()}",
        f"--dashboard-agent-listen-port={_free_port()}", f"--temp-dir={tmp}/ray", "--disable-usage-stats",
    ]
    with open(log_path, "w") as log:
        head = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{dash}"
    try:
        _wait_for_dashboard(url, head, log_path)
        yield url, env
    finally:
        _stop_head(head)
        shutil.rmtree(tmp, ignore_errors=True)


def test_index_job_on_a_separate_head(ray_head, example_lake, tmp_path):
    url, env = ray_head
    index_dir = str(tmp_path / "index")
    runtime_env = {"env_vars": {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}}
    # no --working-dir: raylake is installed in the venv the head's workers run
    cmd = [RAY, "job", "submit", "--address", url, "--runtime-env-json", json.dumps(runtime_env), "--",
           sys.executable, JOB, example_lake, "--index-dir", index_dir]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "succeeded" in out, out[-4000:]
    summary = json.loads(next(line for line in reversed(proc.stdout.splitlines()) if line.startswith("{")))
    assert summary["skipped"] == 0 and not summary["up_to_date"]

    expected = sorted(os.path.relpath(os.path.join(d, f), example_lake).replace(os.sep, "/")
                      for d, _, files in os.walk(example_lake) for f in files)
    idx = LakeIndex(index_dir)
    assert idx.paths == expected
    assert summary["tables"] == idx.n_tables == len(expected)
    assert any(e["kind"] == "join" and {e["src_table"], e["dst_table"]} == {"sports/player.csv", "sports/club.csv"} for e in idx.edges)
