"""Settings of the search service (one :class:`ServeConfig` per deployment)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass
class ServeConfig:
    index_dir: str = ".raylake"  # index directory; each replica loads its CURRENT build
    host: str = "127.0.0.1"  # HTTP bind address; localhost unless the user opens it up
    port: int = 8000  # HTTP port of Ray Serve's proxy
    replicas: int = 1  # search replicas; each holds its own copy of the index and model
    replica_cpus: float = 1.0  # Ray CPUs reserved per replica (search is single-threaded Python)
    torch_threads: int = 1  # intra-op threads of the embedding model per replica; more fight over cores
    token: str | None = None  # bearer token required on every route but the docs; /health without it says only ok/no_index
    max_batch_size: int = 8  # @serve.batch: most /ask requests answered in one batch
    batch_wait_s: float = 0.02  # @serve.batch: how long a batch waits to fill once one request is in
    max_active_requests: int = 64  # per replica, doing work (/ask, /intent, /tables); beyond it a JSON 503 at once
    max_ongoing_requests: int = 512  # Serve's per-replica cap, well above max_active_requests: the rest keep /health answering
    max_queued_requests: int = 256  # waiting at the proxy for a replica; beyond this the proxy answers a plain-text 503
    max_body_bytes: int = 16_384  # request bodies above this get 413 (counted while they stream in)
    body_timeout_s: float = 10.0  # a body not complete by then gets 408; 16 KB takes milliseconds on any real link
    max_question_chars: int = 1_000  # longer questions get 422
    max_budget: int = 50  # largest plan (tables) a client may ask for
    max_beam: int = 64  # widest beam a client may ask for
    max_preview_rows: int = 1_000  # most fused rows returned inline
    max_table_hits: int = 200  # most tables one GET /tables?q= search lists (the web page's lake browser)
    request_timeout_s: float = 60.0  # an /ask or /intent not answered in this time gets 503 (and is dropped from its batch)
    reload_poll_s: float = 2.0  # how often a replica checks the index's CURRENT pointer
    metrics_push_s: float = 2.0  # how often a replica sends its counters to the metrics hub

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict | None) -> "ServeConfig":
        d = dict(d or {})
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            from raylake.errors import RaylakeError

            raise RaylakeError(f"unknown serve setting(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
        return cls(**d)

    def check(self) -> "ServeConfig":
        from raylake.errors import RaylakeError

        if self.replicas < 1:
            raise RaylakeError(f"--replicas must be at least 1, got {self.replicas}")
        if not 0 < self.port < 65536:
            raise RaylakeError(f"--port must be in 1..65535, got {self.port}")
        if self.max_batch_size < 1:
            raise RaylakeError(f"--max-batch-size must be at least 1, got {self.max_batch_size}")
        if self.max_active_requests < self.max_batch_size:
            raise RaylakeError(f"--max-batch-size ({self.max_batch_size}) must be at most max_active_requests "
                               f"({self.max_active_requests}): a batch fills only from requests admitted to work")
        if self.max_ongoing_requests <= self.max_active_requests:
            raise RaylakeError(f"max_ongoing_requests ({self.max_ongoing_requests}) must exceed max_active_requests "
                               f"({self.max_active_requests}): the difference keeps /health and overload answers flowing")
        if self.body_timeout_s <= 0:
            raise RaylakeError(f"body_timeout_s must be positive, got {self.body_timeout_s}")
        if self.token is not None and not self.token.strip():
            raise RaylakeError("--token is empty; give a non-empty secret or leave it out")
        return self
