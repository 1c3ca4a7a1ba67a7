"""A local Ray started by the engine listens on the loopback interface only.

The engine runs in a child process with its own Ray (address None: the path of `raylake index`
and `raylake serve` on one machine): it indexes a copy of the example lake, deploys the search
service, says "ready" and waits. The test then lists every listening TCP socket owned by that
process and its descendants (GCS, raylet, agents, workers, Serve proxy and replicas).
A process that started its own Ray removes that Ray's session folder when it exits.
"""
from __future__ import annotations

import ipaddress
import os
import signal
import subprocess
import sys
import textwrap

import psutil
import pytest

from raylake.runtime import is_loopback_address

ENGINE = textwrap.dedent("""
    import socket, sys
    from raylake.index.build import build_index
    from raylake.serve.app import serve_search
    from raylake.serve.config import ServeConfig

    lake, index_dir = sys.argv[1], sys.argv[2]
    build_index(lake, index_dir, progress=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    print("url", serve_search(ServeConfig(index_dir=index_dir, port=port, replica_cpus=0.25)), flush=True)
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    import ray
    from ray import serve
    serve.shutdown()
    ray.shutdown()
""")


def _loopback(ip: str) -> bool:
    addr = ipaddress.ip_address(ip.split("%")[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback


def _listening(root: psutil.Process) -> tuple[list[str], list[tuple[str, str, int]]]:
    names, sockets = [], []
    for p in [root] + root.children(recursive=True):
        try:
            names.append(" ".join(p.cmdline()))
            sockets += [(names[-1][:80], c.laddr.ip, c.laddr.port) for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
        except psutil.NoSuchProcess:
            continue  # a worker that exited while we looked
    return names, sockets


def test_local_ray_and_service_listen_on_loopback_only(example_lake, tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", ENGINE, example_lake, str(tmp_path / ".raylake")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"})
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line.strip())
            if line.strip() == "ready":
                break
        assert lines[-1:] == ["ready"], f"the engine did not start: {proc.stderr.read()[-2000:] if proc.poll() is not None else lines}"
        url = lines[-2].split()[1]
        assert url.startswith("http://127.0.0.1:")
        names, sockets = _listening(psutil.Process(proc.pid))
        # we looked at the right processes: Ray's servers and the HTTP proxy are among them
        assert any("gcs_server" in n for n in names) and any("raylet" in n for n in names)
        assert any(port == int(url.rsplit(":", 1)[1]) for _, _, port in sockets)
        assert len(sockets) >= 6
        assert [s for s in sockets if not _loopback(s[1])] == []
    finally:
        if proc.poll() is None:
            proc.stdin.close()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.mark.parametrize("address, loopback", [
    ("127.0.0.1:6379", True), ("localhost:6379", True), ("[::1]:6379", True), ("127.0.1.1:1", True),
    ("10.0.0.5:6379", False), ("head.example:6379", False), ("ray://127.0.0.1:10001", False), (None, False),
])
def test_loopback_address_detection(address, loopback):
    assert is_loopback_address(address) is loopback


SESSION = textwrap.dedent("""
    import os, sys
    from raylake.runtime import start_ray
    ray = start_ray(sys.argv[1] or None, **({} if sys.argv[1] else {"num_cpus": 1}))
    ctx = ray.get_runtime_context()
    print(os.path.join(ctx.get_temp_dir(), ctx.get_session_name()), flush=True)
    assert ray.get(ray.remote(lambda: os.getpid()).remote()) != os.getpid()  # a worker of this session ran (and logged) too
""")


def _session_of(address: str = "") -> str:
    """Run a child that starts its own Ray (or joins ``address``) and exits; its session folder."""
    out = subprocess.run([sys.executable, "-c", SESSION, address], capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"})
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_own_ray_session_folder_goes_at_exit_and_no_other(ray_session):
    ctx = ray_session.get_runtime_context()
    ours = os.path.join(ctx.get_temp_dir(), ctx.get_session_name())
    assert os.path.isdir(ours)
    # a process that joined this Ray leaves its folder alone
    assert _session_of(ctx.gcs_address) == ours
    assert os.path.isdir(os.path.join(ours, "logs"))
    # a process that started its own Ray removes that one's folder, and only it
    theirs = _session_of()
    assert theirs != ours and os.path.dirname(theirs) == ctx.get_temp_dir()
    assert not os.path.exists(theirs)
    assert os.path.isdir(os.path.join(ours, "logs"))
    assert ray_session.get(ray_session.remote(lambda: os.getpid()).remote()) != os.getpid()  # and this Ray still works
