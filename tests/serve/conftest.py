"""The search service deployed once for the serve tests (the replica loads the index and the
model once): ``raylake`` over a copy of the example index, with a token and small limits, and
``empty`` over an empty directory (the missing-index path, and an index that appears later).
Serve is shut down at the end so other test packages get their CPUs back.
"""
from __future__ import annotations

import os
import shutil
import socket
import time

import pytest
import ray

TOKEN = "test-token-123"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="package")
def served(ray_session, example_index, tmp_path_factory):
    from ray import serve

    from raylake.serve.app import build_app
    from raylake.serve.config import ServeConfig

    index_dir = str(tmp_path_factory.mktemp("served") / "idx")
    shutil.copytree(example_index, index_dir)
    empty_dir = str(tmp_path_factory.mktemp("empty") / "idx")
    os.makedirs(empty_dir)
    port = _port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    fast = dict(replica_cpus=0.25, reload_poll_s=0.3, metrics_push_s=0.3, batch_wait_s=0.2, request_timeout_s=30)
    # Small limits, so that the hostile tests reach them with few connections.
    limits = dict(max_body_bytes=4096, max_question_chars=300, body_timeout_s=3, max_active_requests=16)
    serve.run(build_app(ServeConfig(index_dir=index_dir, token=TOKEN, **limits, **fast)),
              name="raylake", route_prefix="/")
    serve.run(build_app(ServeConfig(index_dir=empty_dir, **fast)), name="empty", route_prefix="/empty")
    url = f"http://127.0.0.1:{port}"
    yield {"url": url, "token": TOKEN, "index_dir": index_dir, "empty_dir": empty_dir, "source_index": example_index}
    serve.shutdown()
    deadline = time.time() + 60  # replicas finish their graceful shutdown: later tests need the CPUs back
    while time.time() < deadline and ray.available_resources().get("CPU", 0) < ray.cluster_resources().get("CPU", 0):
        time.sleep(0.5)
