"""cluster/serve.yaml is a valid Serve config whose args build the app; jobs/serve.py fails cleanly."""
from __future__ import annotations

import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_serve_yaml_validates_and_builds():
    from ray.serve.schema import ServeDeploySchema

    from raylake.serve.app import app_builder
    from raylake.serve.config import ServeConfig

    with open(os.path.join(ROOT, "cluster", "serve.yaml")) as fh:
        cfg = yaml.safe_load(fh)
    schema = ServeDeploySchema.model_validate(cfg)
    app = schema.applications[0]
    assert app.import_path == "raylake.serve.app:app_builder"
    assert {d.name for d in app.deployments} <= {"SearchService", "MetricsHub"}
    ServeConfig.from_dict(app.args).check()  # every arg is a known setting
    built = app_builder(app.args)
    assert type(built).__name__ == "Application"


def test_unknown_setting_is_a_user_error():
    from raylake.errors import RaylakeError
    from raylake.serve.app import app_builder

    with pytest.raises(RaylakeError, match="unknown serve setting"):
        app_builder({"index_dir": "/x", "replica": 2})
    with pytest.raises(RaylakeError, match="--replicas must be at least 1"):
        app_builder({"index_dir": "/x", "replicas": 0})


def test_job_entrypoint_reports_missing_index(tmp_path, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("raylake_job_serve", os.path.join(ROOT, "jobs", "serve.py"))
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    assert job.main(["--index-dir", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no index in" in err[0]


def test_limits_that_would_starve_health_are_a_user_error():
    from raylake.errors import RaylakeError
    from raylake.serve.config import ServeConfig

    with pytest.raises(RaylakeError, match="must exceed max_active_requests"):
        ServeConfig(max_active_requests=64, max_ongoing_requests=64).check()
    with pytest.raises(RaylakeError, match="--max-batch-size \\(100\\) must be at most max_active_requests"):
        ServeConfig(max_batch_size=100).check()
    with pytest.raises(RaylakeError, match="body_timeout_s must be positive"):
        ServeConfig(body_timeout_s=0).check()
    d = ServeConfig().check()
    assert d.max_active_requests >= d.max_batch_size and d.max_ongoing_requests > d.max_active_requests
