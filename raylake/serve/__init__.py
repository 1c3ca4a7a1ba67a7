"""raylake as a Ray Serve application: /ask, /intent, /tables, /health, /metrics.

``raylake serve`` (:mod:`.cli`) or :func:`serve_search` start it locally;
``cluster/serve.yaml`` (``import_path: raylake.serve.app:app_builder``) and ``jobs/serve.py``
deploy it on a cluster. :mod:`.app` has the deployment and its routes, :mod:`.batch` the
batched search work, :mod:`.guard` the limits against hostile clients (body size and time,
admission), :mod:`.schema` the request bodies, :mod:`.metrics` the Prometheus metrics,
:mod:`.config` the settings.
"""
from raylake.serve.config import ServeConfig

__all__ = ["ServeConfig", "build_app", "serve_search"]


def __getattr__(name):  # Serve and FastAPI load only when the service is used
    if name in ("build_app", "serve_search"):
        from raylake.serve import app

        return getattr(app, name)
    raise AttributeError(name)
