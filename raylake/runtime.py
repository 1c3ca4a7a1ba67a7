"""The one place raylake starts or joins Ray.

A local Ray (no ``address``) binds the loopback interface only. Ray's gRPC servers (GCS,
raylet, object manager, workers) listen on every interface unless the node IP is
127.0.0.1, and ``ray.init(_node_ip_address="127.0.0.1")`` alone is not enough on Linux:
Ray rewrites a loopback node IP to the machine's routable one unless it runs in its
single-machine mode (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, the default on macOS and
Windows). In that mode the node IP stays 127.0.0.1 and every component — GCS, raylet,
dashboard agent, runtime-env agent, metrics exporters, workers — listens on 127.0.0.1
(tests/test_runtime.py checks each listening socket). Joining a cluster (``address``) keeps
the cluster's own settings: its network must protect it.

A local Ray is always a new one (``ray.init(address="local")``: a ``ray start`` head on this
machine is not joined behind the user's back), so the process knows it owns the session:
at exit it shuts Ray down and removes that session's folder under Ray's temp root, which
Ray itself keeps forever. A process killed with SIGKILL leaves its folder behind.
"""
from __future__ import annotations

import atexit
import contextlib
import ipaddress
import os
import shutil
import sys

LOOPBACK = "127.0.0.1"
_SINGLE_MACHINE_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def start_ray(address: str | None = None, *, include_dashboard: bool = False, log_to_driver: bool = False, **kwargs):
    """Start a loopback-only local Ray (``address`` None) or join ``address``; returns ``ray``.

    A process that already runs Ray keeps it. ``kwargs`` go to ``ray.init`` (``num_cpus``,
    ``logging_level``, ...); a requested dashboard binds 127.0.0.1 too.
    """
    import ray

    if ray.is_initialized():
        return ray
    os.environ.setdefault("RAY_DEDUP_LOGS", "1")
    local = address is None and not os.environ.get("RAY_ADDRESS")
    if local or is_loopback_address(address or os.environ.get("RAY_ADDRESS")):
        # a driver joining a loopback Ray must also see its node IP as 127.0.0.1 to find the raylet
        _single_machine_mode()
    kwargs.setdefault("logging_level", "ERROR")
    kwargs["log_to_driver"] = log_to_driver
    if local:
        kwargs.update(_node_ip_address=LOOPBACK, include_dashboard=include_dashboard)
        runtime_env = dict(kwargs.pop("runtime_env", None) or {})
        runtime_env.setdefault("worker_process_setup_hook", f"{__name__}.loopback_worker")
        kwargs["runtime_env"] = runtime_env
        if include_dashboard:
            kwargs.setdefault("dashboard_host", LOOPBACK)
        ray.init(address="local", **kwargs)
        context = ray.get_runtime_context()
        atexit.register(_remove_session_dir, os.path.join(context.get_temp_dir(), context.get_session_name()),
                        context.get_temp_dir(), os.getpid())
    else:
        ray.init(address=address, **kwargs)
    return ray


def _remove_session_dir(session_dir: str, temp_root: str, owner_pid: int) -> None:
    """Exit handler of a process that started a local Ray: ``ray.shutdown()``, then delete
    ``session_dir`` — only a ``session_*`` folder directly under ``temp_root``, and only in
    ``owner_pid`` (a forked child inherits atexit handlers but not the Ray)."""
    if os.getpid() != owner_pid:
        return
    import ray

    # Registered after ray.init, so this runs before Ray's own atexit shutdown: stop the
    # processes (they write logs there) before their folder goes.
    try:
        ray.shutdown(wait_for_processes=True)
    except TypeError:  # a Ray older than the argument stops its processes without it
        ray.shutdown()
    root, session = os.path.realpath(temp_root), os.path.realpath(session_dir)
    name = os.path.basename(session)
    if os.path.dirname(session) != root or not name.startswith("session_") or name == "session_latest":
        return
    shutil.rmtree(session, ignore_errors=True)
    latest = os.path.join(root, "session_latest")
    if os.path.islink(latest) and os.path.realpath(latest) == session:
        with contextlib.suppress(OSError):  # another Ray may be re-pointing it this moment
            os.unlink(latest)


def is_loopback_address(address: str | None) -> bool:
    """True for ``127.x.y.z:port``, ``localhost:port`` and ``[::1]:port`` (a Ray GCS address)."""
    if not address or "://" in address:
        return False
    host = address.rsplit(":", 1)[0].strip("[]") if ":" in address else address
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _single_machine_mode() -> None:
    os.environ[_SINGLE_MACHINE_ENV] = "0"  # read when ray is imported, and by every Ray child process
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = False  # ray was imported before the variable was set


def loopback_worker() -> None:
    """Ray worker setup hook of a local Ray: Ray Serve replicas open their request port on
    ``[::]`` whatever the node IP (hard-coded in ``ray.serve._private.replica``, and requests
    there carry pickles); rewrite that wildcard to loopback before Serve's modules load."""
    from ray._common import tls_utils

    add_port = tls_utils.add_port_to_grpc_server
    if getattr(add_port, "raylake_loopback", False):
        return

    def loopback_port(server, address: str):
        host, _, port = address.rpartition(":")
        return add_port(server, f"{LOOPBACK}:{port}" if host in ("[::]", "0.0.0.0", "") else address)

    loopback_port.raylake_loopback = True
    tls_utils.add_port_to_grpc_server = loopback_port
