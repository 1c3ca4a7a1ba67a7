"""The search service: :class:`raylake.search.Engine` behind a FastAPI ingress on Ray Serve.

Routes (OpenAPI at ``/openapi.json``, browsable at ``/docs``):

- ``POST /ask`` — the JSON of ``raylake ask --json``; with ``fuse``/``preview`` the fused
  table's summary and first rows, with ``format: parquet`` or ``csv`` the fused table as a file;
- ``POST /intent`` — the intent graph (Appendix A JSON) of a question;
- ``GET /tables?q=`` — tables whose name or a column's name contains ``q`` (the lake browser);
- ``GET /tables/{path}`` — what the index knows about one table (profile and edges);
- ``GET /examples`` — a few questions drawn from the lake (what the web page offers);
- ``GET /`` and ``GET /ui/{file}`` — the web page (:mod:`.ui`), static, without the token: the
  API calls it makes carry it;
- ``GET /health`` — 200 with the build served, 503 while the replica has no index;
- ``GET /metrics`` — Prometheus text (see :mod:`.metrics`).

How a replica works:

- **One index per replica.** The constructor loads the index's ``CURRENT`` build once and
  warms it (FAISS, value index, lake graph, model, one question), so a replica takes traffic
  only when it answers fast.
- **Reload without downtime.** A background task reads ``CURRENT`` every
  ``reload_poll_s``; on a change it loads and warms the new build on a loader thread while
  the old engine keeps answering, then swaps the reference. Batches already running finish
  on the engine they started with. A build that fails to load is counted and skipped; the
  old one stays.
- **Batching.** ``/ask`` requests meet in ``@serve.batch``, which runs the work that is
  shared across questions once per batch (:func:`prepare_batch`): an intent graph per
  distinct question and **one** embedding call for every intent atom of the batch (the
  support matrices of all questions then read cached vectors). Anchor look-ups and beam
  search then run per request on the same compute thread (:func:`answer_one`), and each
  request is answered as soon as its own search ends: a fast question does not wait for
  the slow ones of its batch. Requests whose deadline passed while queued are dropped
  unanswered (503), so an overload does not turn into a backlog nobody waits for.
- **Never a crash for bad input.** Every route parses by hand (:mod:`.schema`) and maps
  :class:`RaylakeError` to a 4xx with its message; compute runs off the event loop, so
  ``/health`` and ``/metrics`` answer while a batch searches.
- **Hostile clients** (:mod:`.guard`): bodies capped while they stream, with a deadline;
  a per-replica admission limit that answers JSON 503s, below Serve's own limit so that
  ``/health`` keeps a slot; clients gone mid-request counted as 499, not logged as errors.

The batch work itself, free of Serve, is in :mod:`.batch`.
"""
# No `from __future__ import annotations`: FastAPI must resolve `Request` in the routes at runtime.
import asyncio
import json
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor

from fastapi import FastAPI, Request
from fastapi.responses import Response
from ray import serve

from raylake.errors import RaylakeError
from raylake.serve.batch import Item, Outcome, answer_one, load_engine, prepare_batch
from raylake.serve.config import ServeConfig
from raylake.serve.guard import CLIENT_GONE, Admission, ClientGone, authorized, read_body
from raylake.serve.metrics import Metrics, MetricsHub
from raylake.serve.schema import AskRequest, BadRequest, IntentRequest, error_body, openapi_body, parse

logger = logging.getLogger(__name__)

DESCRIPTION = """Find, join and union the tables of a data lake that answer a question.

Every route but `/health`, the docs and the web page (`/`) needs `Authorization: Bearer <token>` when the service
was started with a token; `/health` without it says only `ok` or `no_index`. Errors are
`{"error": {"code": <status>, "message": "<reason>"}}`: 400 not JSON or nested too deep,
401 bad token, 404 unknown table or no index, 408 body not sent in time, 413 body too large,
422 unknown field / wrong type / question too long, 503 over the time limit or overloaded
(with `Retry-After`)."""

api = FastAPI(title="raylake search", version=__import__("raylake").__version__, description=DESCRIPTION)

_ERRORS = {
    400: {"description": "not JSON, nested too deep, or a question the engine rejects"},
    401: {"description": "missing or wrong bearer token"},
    404: {"description": "no index loaded, or no such table"},
    408: {"description": "request body not received within the body time limit"},
    413: {"description": "request body too large"},
    422: {"description": "unknown field, wrong type, out-of-range value, question too long"},
    503: {"description": "not answered within the time limit, or overloaded"},
}
ASK_RESPONSES = {
    200: {
        "description": "the answer: the JSON object of `raylake ask --json` (tables, plan, score, timings_ms, fused, "
        "intent, intent_source, reason, rejected, ...); with format=parquet or csv the fused table",
        "content": {"application/json": {}, "application/vnd.apache.parquet": {}, "text/csv": {}},
    },
    **_ERRORS,
}


def _jsonable(o):
    if hasattr(o, "item"):  # numpy scalars
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)


def json_response(obj, status: int = 200, headers: dict | None = None) -> Response:
    return Response(json.dumps(obj, ensure_ascii=False, default=_jsonable), status_code=status, media_type="application/json", headers=headers)


# --------------------------------------------------------------------------- the deployment


@serve.deployment(max_ongoing_requests=ServeConfig.max_ongoing_requests, health_check_period_s=10, health_check_timeout_s=60, graceful_shutdown_timeout_s=30)
@serve.ingress(api)
class SearchService:
    """One replica: an engine over the index, its batcher, its watcher, its metrics."""

    async def __init__(self, config: dict, hub=None):
        for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
            os.environ.setdefault(k, v)
        self.cfg = ServeConfig.from_dict(config)
        import torch

        torch.set_num_threads(max(1, self.cfg.torch_threads))
        try:
            self.replica = serve.get_replica_context().replica_id.unique_id
        except Exception:  # outside a Serve replica (unit use)
            self.replica = f"pid{os.getpid()}"
        self.hub = hub
        self.metrics = Metrics()
        self.admission = Admission(self.cfg.max_active_requests)
        self.reading = 0  # requests whose body is still arriving (shown on /health: a slow-body attack shows here)
        self.compute = ThreadPoolExecutor(1, thread_name_prefix="raylake-search")
        self.loader = ThreadPoolExecutor(1, thread_name_prefix="raylake-load")
        self.engine = None
        self.build: str | None = None
        self.failed_build: str | None = None
        self.loaded_at: float | None = None
        self.load_error: str | None = None
        self.example_cache: tuple[str | None, list[str]] = (None, [])
        self._prepare_batch.set_max_batch_size(self.cfg.max_batch_size)
        self._prepare_batch.set_batch_wait_timeout_s(self.cfg.batch_wait_s)
        await self._maybe_reload()
        self._tasks = [asyncio.create_task(self._watch()), asyncio.create_task(self._push_metrics())]

    # ------------------------------------------------------------------ index

    async def _maybe_reload(self) -> None:
        from raylake.index.store import current_build

        build = current_build(self.cfg.index_dir)
        if build is None:
            if self.engine is None:
                self.load_error = (f"no index in {os.path.abspath(self.cfg.index_dir)!r}: run `raylake index LAKE --index-dir "
                                   f"{self.cfg.index_dir}`; this service loads it as soon as it appears")
            return
        name = os.path.basename(build)
        if name in (self.build, self.failed_build):
            return
        loop = asyncio.get_running_loop()
        try:
            engine = await loop.run_in_executor(self.loader, load_engine, self.cfg.index_dir)
        except Exception as exc:
            self.failed_build = name
            self.metrics.reload_failures += 1
            if self.engine is None:
                self.load_error = f"the index in {self.cfg.index_dir!r} could not be loaded: {exc}"
            logger.warning("index build %s not loaded (%s); still serving %s", name, exc, self.build)
            return
        if self.engine is not None:
            self.metrics.reloads += 1
        self.engine, self.build, self.loaded_at, self.load_error = engine, os.path.basename(engine.index.build), time.time(), None
        self.metrics.build = self.build
        logger.info("serving index build %s", self.build)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.cfg.reload_poll_s)
            try:
                await self._maybe_reload()
            except Exception:  # the watcher must outlive any one bad build
                logger.exception("index watcher")

    async def _push_metrics(self) -> None:
        while True:
            await asyncio.sleep(self.cfg.metrics_push_s)
            await self._push()

    async def _push(self) -> None:
        if self.hub is None:
            return
        try:
            await self.hub.push.remote(self.replica, self.metrics.snapshot())
        except Exception:  # metrics must never take a request down
            logger.warning("metrics hub unreachable", exc_info=True)

    # ------------------------------------------------------------------ plumbing

    def _auth(self, request: Request) -> None:
        if not authorized(request, self.cfg.token):
            raise BadRequest(401, "missing or wrong bearer token: send 'Authorization: Bearer <token>'")

    async def _parse(self, request: Request, model):
        cfg = self.cfg
        self.reading += 1
        try:
            raw = await read_body(request, cfg.max_body_bytes, cfg.body_timeout_s)
        finally:
            self.reading -= 1
        return parse(raw, model, max_bytes=cfg.max_body_bytes, max_question_chars=cfg.max_question_chars)

    def _engine(self):
        if self.engine is None:
            raise BadRequest(404, self.load_error or "no index loaded")
        return self.engine

    async def _handle(self, endpoint: str, request: Request, work) -> Response:
        t0 = time.perf_counter()
        try:
            self._auth(request)
            resp = await work(request)
        except BadRequest as exc:
            headers = {401: {"WWW-Authenticate": "Bearer"}, 503: {"Retry-After": "1"}}.get(exc.status)
            resp = json_response(error_body(exc.status, exc.message), exc.status, headers)
        except ClientGone:
            logger.info("client left %s before sending its whole body", endpoint)
            resp = json_response(error_body(CLIENT_GONE, "client closed the request"), CLIENT_GONE)
        except asyncio.CancelledError:  # Serve cancels a request whose client went away
            self.metrics.request(endpoint, CLIENT_GONE, time.perf_counter() - t0)
            raise
        except Exception as exc:  # a bug, not the user's fault: say so, keep the replica up
            logger.exception("internal error on %s", endpoint)
            resp = json_response(error_body(500, f"internal error: {type(exc).__name__}: {exc}"), 500)
        self.metrics.request(endpoint, resp.status_code, time.perf_counter() - t0)
        resp.headers["X-Raylake-Replica"] = self.replica
        return resp

    # ------------------------------------------------------------------ batching

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.02)
    async def _prepare_batch(self, items: list[Item]) -> list:
        engine = self.engine  # the batch finishes on this one even if a reload swaps it meanwhile
        self.metrics.batch.observe(len(items))
        if engine is None:
            return [Outcome(404, error_body(404, self.load_error or "no index loaded")) for _ in items]
        preps = await asyncio.get_running_loop().run_in_executor(self.compute, prepare_batch, engine, items)
        return [(engine, p) for p in preps]

    async def _answer(self, item: Item) -> Outcome:
        got = await self._prepare_batch(item)
        if isinstance(got, Outcome):
            return got
        engine, prep = got
        if isinstance(prep, Outcome):
            return prep
        return await self._compute(answer_one, engine, prep)

    async def _compute(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.compute, fn, *args)

    # ------------------------------------------------------------------ routes

    @api.post("/ask", openapi_extra=openapi_body(AskRequest), responses=ASK_RESPONSES, summary="Answer a question")
    async def ask(self, request: Request) -> Response:
        """The tables that answer the question, the join/union plan with its keys, and why each table is there."""
        return await self._handle("ask", request, self._ask)

    async def _ask(self, request: Request) -> Response:
        cfg = self.cfg
        req = await self._parse(request, AskRequest)
        if req.budget is not None and req.budget > cfg.max_budget:
            raise BadRequest(422, f"'budget': at most {cfg.max_budget} tables, got {req.budget}")
        if req.beam is not None and req.beam > cfg.max_beam:
            raise BadRequest(422, f"'beam': at most {cfg.max_beam}, got {req.beam}")
        if req.preview > cfg.max_preview_rows:
            raise BadRequest(422, f"'preview': at most {cfg.max_preview_rows} rows, got {req.preview}")
        self._engine()
        item = Item(req, time.monotonic() + cfg.request_timeout_s)
        with self.admission.slot():
            self.metrics.queue_depth += 1
            try:
                outcome = await asyncio.wait_for(self._answer(item), cfg.request_timeout_s)
            except asyncio.TimeoutError:
                raise BadRequest(503, f"not answered within the {cfg.request_timeout_s:g} s request time limit; retry later") from None
            finally:
                self.metrics.queue_depth -= 1
        for stage, ms in outcome.stages_ms.items():
            self.metrics.stage(stage, ms / 1e3)
        if isinstance(outcome.body, bytes):
            return Response(outcome.body, status_code=outcome.status, media_type=outcome.media_type, headers=outcome.headers)
        return json_response(outcome.body, outcome.status, outcome.headers)

    @api.post("/intent", openapi_extra=openapi_body(IntentRequest), responses=_ERRORS, summary="Intent graph of a question")
    async def intent(self, request: Request) -> Response:
        """The Appendix A intent graph the engine extracts from the question (no search)."""
        return await self._handle("intent", request, self._intent)

    async def _intent(self, request: Request) -> Response:
        cfg = self.cfg
        req = await self._parse(request, IntentRequest)
        engine = self._engine()

        def work():
            t = time.perf_counter()
            try:
                g, src = engine.intent(req.question)
            except RaylakeError as exc:
                raise BadRequest(400, str(exc)) from None
            ms = (time.perf_counter() - t) * 1e3
            return {"question": req.question, "intent": g.to_json(evidence=True), "intent_source": src, "timings_ms": {"intent": round(ms, 2)}}

        try:
            with self.admission.slot():
                body = await asyncio.wait_for(self._compute(work), cfg.request_timeout_s)
        except asyncio.TimeoutError:
            raise BadRequest(503, f"not answered within the {cfg.request_timeout_s:g} s request time limit; retry later") from None
        return json_response(body)

    @api.get("/tables", responses=_ERRORS, summary="Search tables by name or column")
    async def find_tables(self, request: Request) -> Response:
        """Tables whose path or a column's name contains ``q`` (case, ``_`` and spaces ignored), path matches
        first; ``limit`` (default and most: max_table_hits) caps the list, ``total`` counts every hit."""

        async def work(request):
            cfg = self.cfg
            unknown = sorted(set(request.query_params) - {"q", "limit"})
            if unknown:
                raise BadRequest(422, f"unknown parameter(s) {', '.join(unknown)}; GET /tables takes q and limit")
            q = request.query_params.get("q", "")
            if len(q) > cfg.max_question_chars:
                raise BadRequest(422, f"'q' is {len(q):,} characters; the limit is {cfg.max_question_chars:,}")
            raw = request.query_params.get("limit", str(cfg.max_table_hits))
            if not raw.isdigit() or not 1 <= int(raw) <= cfg.max_table_hits:
                raise BadRequest(422, f"'limit': a whole number from 1 to {cfg.max_table_hits}, got {raw!r}")
            engine = self._engine()
            with self.admission.slot():
                found = await asyncio.to_thread(engine.index.find_tables, q, int(raw))
            return json_response(found)

        return await self._handle("tables", request, work)

    @api.get("/tables/{path:path}", responses=_ERRORS, summary="Profile of one table")
    async def table(self, path: str, request: Request) -> Response:
        """Columns (type, distinct count, nulls, key-likeness, samples, value summary) and join/union edges of a table;
        ``path`` is relative to the lake root, as in answers."""

        async def work(request):
            engine = self._engine()
            if path not in engine.index.path_id:
                raise BadRequest(404, f"no table {path!r} in the index; paths are relative to the lake root, e.g. {engine.index.paths[0]!r}"
                                 if engine.index.paths else f"no table {path!r}: the index is empty")
            with self.admission.slot():
                prof = await asyncio.to_thread(engine.index.table_profile, path)
            return json_response(prof)

        return await self._handle("tables", request, work)

    @api.get("/examples", responses=_ERRORS, summary="Example questions drawn from the lake")
    async def examples(self, request: Request) -> Response:
        """A few questions built from the lake's foreign keys and sample values, and the limits of ``/ask``."""

        async def work(request):
            from raylake.serve.ui import example_questions

            engine = self._engine()
            if self.example_cache[0] != self.build:  # the edges of a large lake are worth reading once per build
                self.example_cache = (self.build, await asyncio.to_thread(example_questions, engine.index))
            return json_response({"examples": self.example_cache[1], "tables": engine.index.n_tables,
                                  "max_budget": self.cfg.max_budget, "max_preview_rows": self.cfg.max_preview_rows})

        return await self._handle("examples", request, work)

    @api.get("/", include_in_schema=False)
    async def page(self) -> Response:
        # Whether to ask for the token at once, rather than after a refused call (a console error in the browser).
        return self._asset("index.html", {"{{token}}": "required" if self.cfg.token else "none"})

    @api.get("/ui/{name}", include_in_schema=False)
    async def ui_file(self, name: str) -> Response:
        return self._asset(name)

    def _asset(self, name: str, fill: dict | None = None) -> Response:
        from raylake.serve.ui import CSP, asset

        got = asset(name)
        if got is None:
            return json_response(error_body(404, f"no file {name!r} in the web page"), 404)
        body = got[0]
        for k, v in (fill or {}).items():
            body = body.replace(k.encode(), v.encode())
        return Response(body, media_type=got[1], headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                                                            "Cache-Control": "no-cache"})

    @api.get("/health", summary="Liveness and the index build served")
    async def health(self, request: Request) -> Response:
        """200 while this replica serves an index, 503 while it has none. With the token (or when the
        service has none): the build, its load time, the replica and, without an index, the reason."""
        body = {"status": "ok" if self.engine is not None else "no_index"}
        # Paths and process ids help an attacker, not a load balancer: details only for token holders.
        if authorized(request, self.cfg.token):
            body |= {"replica": self.replica, "pid": os.getpid(), "index_dir": os.path.abspath(self.cfg.index_dir),
                     "build": self.build, "loaded_at": self.loaded_at, "reloads": self.metrics.reloads,
                     "active_requests": self.admission.active, "reading_bodies": self.reading}
            if self.engine is not None:
                body["tables"] = self.engine.index.n_tables
            else:
                body["reason"] = self.load_error
        resp = json_response(body, 200 if self.engine is not None else 503)
        self.metrics.request("health", resp.status_code)
        resp.headers["X-Raylake-Replica"] = self.replica
        return resp

    @api.get("/metrics", summary="Prometheus metrics of the whole service", responses={200: {"content": {"text/plain": {}}}, 401: _ERRORS[401]})
    async def metrics_text(self, request: Request) -> Response:
        """Requests, errors, per-stage latency histograms, batch sizes, queue depth, index reloads (summed over replicas)."""

        async def work(request):
            from raylake.serve.metrics import merge, render

            await self._push()
            if self.hub is not None:
                try:
                    text = await self.hub.render.remote()
                except Exception:
                    text = render(merge([self.metrics.snapshot()]))
            else:
                text = render(merge([self.metrics.snapshot()]))
            return Response(text, media_type="text/plain; version=0.0.4; charset=utf-8")

        return await self._handle("metrics", request, work)


# --------------------------------------------------------------------------- deploy


def build_app(cfg: ServeConfig | dict | None = None, **overrides) -> serve.Application:
    """The bound Serve application (the search deployment plus its metrics hub)."""
    if not isinstance(cfg, ServeConfig):
        cfg = ServeConfig.from_dict({**(cfg or {}), **overrides})
    elif overrides:
        cfg = ServeConfig.from_dict({**cfg.to_dict(), **overrides})
    cfg.check()
    hub = MetricsHub.bind()
    return SearchService.options(
        num_replicas=cfg.replicas,
        max_ongoing_requests=cfg.max_ongoing_requests,
        max_queued_requests=cfg.max_queued_requests,
        ray_actor_options={"num_cpus": cfg.replica_cpus},
    ).bind(cfg.to_dict(), hub)


def app_builder(args: dict) -> serve.Application:
    """Serve config entry point (``import_path: raylake.serve.app:app_builder``); ``args`` are :class:`ServeConfig` fields."""
    return build_app(args)


APP_NAME = "raylake"


def serve_search(cfg: ServeConfig, *, address: str | None = None, name: str = APP_NAME) -> str:
    """Start (or join) Ray, start Serve on ``cfg.host:cfg.port`` and deploy; returns the base URL."""
    from raylake.runtime import start_ray

    cfg.check()
    app = build_app(cfg)
    ray = start_ray(address)
    serve.start(http_options={"host": cfg.host, "port": cfg.port})
    try:
        serve.run(app, name=name, route_prefix="/")
    except RuntimeError as exc:
        lines = [ln for ln in str(exc).splitlines() if ln.strip()]
        raise RaylakeError(f"the search service failed to start: {lines[-1] if lines else type(exc).__name__}") from None
    host = cfg.host if cfg.host not in ("0.0.0.0", "::") else ray.util.get_node_ip_address()
    return f"http://{host}:{cfg.port}"
