"""raylake as a Ray Serve application: /ask, /intent, /tables, /health, /metrics."""
