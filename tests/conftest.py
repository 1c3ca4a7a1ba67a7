"""Shared fixtures: one local Ray per test session, the example lake, and its index.

``ray.init()`` costs 6–8 s and ~650 MB, so every test that needs Ray shares one instance
(2 CPUs, no dashboard, bound to 127.0.0.1), started on first use.
"""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# the ONNX export cache: a fresh one per session (removed at its end), set before Ray starts so its workers share it
_OWN_CACHE = "RAYLAKE_CACHE" not in os.environ
if _OWN_CACHE:
    os.environ["RAYLAKE_CACHE"] = tempfile.mkdtemp(prefix="raylake-test-cache-")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE_LAKE = os.path.join(ROOT, "examples", "lake")
SPIDER = os.path.abspath(os.path.join(ROOT, "..", "shared", "data", "spider_lake"))


@pytest.fixture(scope="session", autouse=True)
def _export_cache():
    yield
    if _OWN_CACHE:
        shutil.rmtree(os.environ["RAYLAKE_CACHE"], ignore_errors=True)


@pytest.fixture(scope="session")
def ray_session():
    from raylake.runtime import start_ray

    ray = start_ray(num_cpus=2)  # loopback only, like the engine's own
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def example_lake(tmp_path_factory) -> str:
    """A private copy of ``examples/lake`` (tests may not touch the committed files)."""
    dst = tmp_path_factory.mktemp("lake") / "lake"
    shutil.copytree(EXAMPLE_LAKE, dst)
    return str(dst)


@pytest.fixture(scope="session")
def example_index(ray_session, example_lake, tmp_path_factory) -> str:
    from raylake.index.build import build_index

    index_dir = str(tmp_path_factory.mktemp("index") / ".raylake")
    build_index(example_lake, index_dir, progress=False)
    return index_dir
