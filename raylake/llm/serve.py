"""vLLM as a Ray Serve deployment, OpenAI-compatible, for the intent extractor and agents.

One replica loads a local model folder with vLLM on a GPU node and answers
``GET /v1/models`` and ``POST /v1/chat/completions`` (non-streaming), which is all
:class:`raylake.llm.LLMClient` needs. vLLM is imported only inside the replica: the
driver, the head node and every CPU install import this module without it.

Three ways in, one code path:

- :func:`serve_vllm` (and ``raylake llm serve``) from Python or the CLI;
- ``serve deploy cluster/serve-vllm.yaml``, which calls :func:`app_builder`;
- :func:`build_app` to compose the deployment into another Serve application.
"""
from __future__ import annotations

import importlib.util
import inspect
import logging
import os
import time
import uuid
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from ray import serve

from raylake.errors import LLMError
from raylake.runtime import LOOPBACK

logger = logging.getLogger(__name__)

GPU_HINT = "vLLM is not installed; install raylake[gpu] on the GPU nodes"
# vLLM's default share of GPU memory for weights + KV cache; scaled down for a fractional GPU.
GPU_MEMORY_UTILIZATION = 0.9

api = FastAPI(title="raylake vLLM", docs_url=None, redoc_url=None)


@serve.deployment(max_ongoing_requests=64, health_check_period_s=10, health_check_timeout_s=60)
@serve.ingress(api)
class VLLMServer:
    """One vLLM engine behind the OpenAI chat-completions routes.

    ``max_ongoing_requests`` is high on purpose: vLLM batches concurrent requests
    continuously, so queueing them in Serve instead would waste the GPU.
    """

    def __init__(self, model_path: str, name: str, tensor_parallel_size: int = 1, gpu_memory_utilization: float = GPU_MEMORY_UTILIZATION):
        self.name = name
        self.created = int(time.time())
        self.engine = _start_engine(model_path, tensor_parallel_size, gpu_memory_utilization)

    async def check_health(self) -> None:
        # Serve restarts the replica when this raises, e.g. after the engine loop died.
        await self.engine.check_health()

    @api.get("/v1/models")
    async def models(self) -> dict:
        return {"object": "list", "data": [{"id": self.name, "object": "model", "created": self.created, "owned_by": "raylake"}]}

    @api.post("/v1/chat/completions")
    async def chat_completions(self, request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the request body is not JSON")
        problem = check_request(body, self.name)
        if problem:
            return _error(*problem)
        from vllm import SamplingParams

        tokenizer = self.engine.get_tokenizer()
        if inspect.isawaitable(tokenizer):  # async in vLLM's engines, sync in some versions
            tokenizer = await tokenizer
        try:
            # Token ids, not text: re-tokenising a rendered template would add a second BOS.
            ids = tokenizer.apply_chat_template(body["messages"], tokenize=True, add_generation_prompt=True)
        except Exception as exc:  # jinja errors, a base model without a chat template, bad roles
            return _error(400, f"cannot apply the model's chat template: {exc}")
        if isinstance(ids, Mapping):  # newer transformers return a BatchEncoding
            ids = ids["input_ids"]
        try:
            params = SamplingParams(**sampling_kwargs(body))
        except (TypeError, ValueError) as exc:  # e.g. a negative temperature, a string max_tokens
            return _error(400, f"invalid sampling parameters: {exc}")
        final = None
        async for output in self.engine.generate({"prompt_token_ids": list(ids)}, params, uuid.uuid4().hex):
            final = output
        choice = final.outputs[0]
        return JSONResponse(completion_body(self.name, choice.text, choice.finish_reason, len(ids), len(choice.token_ids)))


def _start_engine(model_path: str, tensor_parallel_size: int, gpu_memory_utilization: float):
    """Load the model with vLLM on this node; the only place vLLM is imported."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing downloads at run time
    try:
        from vllm import AsyncEngineArgs, AsyncLLMEngine
    except ImportError as exc:
        raise LLMError(f"{GPU_HINT} ({exc})") from None
    if not os.path.isdir(model_path):
        raise LLMError(f"model path {model_path!r} is not a folder on this GPU node; weights are never downloaded")
    args = AsyncEngineArgs(
        model=model_path,
        tensor_parallel_size=tensor_parallel_size,
        gpu_memory_utilization=gpu_memory_utilization,
        # Sharded workers run as Ray actors in the replica's placement group (see build_app).
        distributed_executor_backend="ray" if tensor_parallel_size > 1 else None,
    )
    return AsyncLLMEngine.from_engine_args(args)


# --------------------------------------------------------------------------- OpenAI protocol


def check_request(body: Any, name: str) -> tuple[int, str] | None:
    """``(status, message)`` when a chat request cannot be served, else ``None``."""
    if not isinstance(body, dict):
        return 400, "the request body must be a JSON object"
    if body.get("model") != name:
        return 404, f"model {body.get('model')!r} is not served here; this endpoint serves {name!r}"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) and "role" in m for m in messages):
        return 400, "'messages' must be a non-empty list of {role, content} objects"
    if body.get("stream"):
        return 400, "streaming is not supported by this endpoint; send stream=false"
    if body.get("n", 1) != 1:
        return 400, "only n=1 is supported"
    return None


def sampling_kwargs(body: dict) -> dict:
    """vLLM ``SamplingParams`` arguments from an OpenAI request (its defaults when absent).

    ``response_format`` is accepted and not enforced: structured-output options change
    name across vLLM releases, and the client's JSON extraction and repair round cover it.
    """
    kwargs: dict[str, Any] = {"temperature": float(body.get("temperature", 1.0))}
    if body.get("max_tokens") is not None:
        kwargs["max_tokens"] = int(body["max_tokens"])
    if body.get("top_p") is not None:
        kwargs["top_p"] = float(body["top_p"])
    if body.get("seed") is not None:
        kwargs["seed"] = int(body["seed"])
    stop = body.get("stop")
    if stop:
        kwargs["stop"] = [stop] if isinstance(stop, str) else list(stop)
    return kwargs


def completion_body(model: str, text: str, finish_reason: str | None, prompt_tokens: int, completion_tokens: int) -> dict:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason or "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }


def _error(status: int, message: str) -> JSONResponse:
    kind = "not_found_error" if status == 404 else "invalid_request_error"
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


# --------------------------------------------------------------------------- deploy


def build_app(model_path: str, *, name: str, num_gpus: float = 1, tensor_parallel_size: int = 1) -> serve.Application:
    """The bound Serve application; builds without vLLM (the replica imports it).

    With ``tensor_parallel_size == 1`` the replica takes ``num_gpus`` (≤ 1; a fraction
    shares a GPU and scales vLLM's memory share with it). With ``N > 1`` it reserves a
    STRICT_PACK placement group of one CPU bundle for the replica plus N one-GPU bundles
    for vLLM's Ray workers on a single node, and ``num_gpus`` must equal N.
    """
    if tensor_parallel_size < 1:
        raise LLMError(f"tensor_parallel_size must be at least 1, not {tensor_parallel_size}")
    if tensor_parallel_size > 1:
        if num_gpus != tensor_parallel_size:
            raise LLMError(f"tensor_parallel_size={tensor_parallel_size} shards the model over that many GPUs; pass num_gpus={tensor_parallel_size}")
        options: dict[str, Any] = {
            "ray_actor_options": {"num_cpus": 1},
            "placement_group_bundles": [{"CPU": 1}] + [{"CPU": 1, "GPU": 1}] * tensor_parallel_size,
            "placement_group_strategy": "STRICT_PACK",
        }
    else:
        if not 0 < num_gpus <= 1:
            raise LLMError(f"num_gpus={num_gpus:g} without tensor parallelism; use 0 < num_gpus ≤ 1, or tensor_parallel_size=N to use N GPUs")
        options = {"ray_actor_options": {"num_cpus": 1, "num_gpus": num_gpus}}
    memory = GPU_MEMORY_UTILIZATION * min(1.0, num_gpus)
    return VLLMServer.options(name=name, **options).bind(model_path, name, tensor_parallel_size, memory)


def app_builder(args: dict) -> serve.Application:
    """Serve config entry point (``import_path: raylake.llm.serve:app_builder``); ``args`` as :func:`build_app`."""
    return build_app(**args)


def http_options(host: str = LOOPBACK, port: int = 8000) -> dict:
    """Ray Serve's HTTP options for the endpoint: this machine only unless ``host`` says
    otherwise. The endpoint has no token, so another host exposes the model to its network."""
    if not 0 < port < 65536:
        raise LLMError(f"--port must be in 1..65535, got {port}")
    return {"host": host, "port": port}


def serve_vllm(
    model_path: str,
    *,
    name: str,
    num_gpus: float = 1,
    tensor_parallel_size: int = 1,
    route_prefix: str = "/",
    host: str = LOOPBACK,
    port: int = 8000,
    blocking: bool = False,
    address: str | None = None,
) -> str:
    """Deploy the model and return its OpenAI base URL (``http://<host>:<port><prefix>/v1``).

    ``address=None`` starts a local Ray on this machine, which must then have
    vLLM and the GPUs; with a cluster ``address`` the replica lands on a GPU node of the
    cluster (scaled up by the autoscaler if needed) and only that node needs vLLM. The
    deployment lives as long as the Ray instance: ``blocking=True`` keeps this process,
    and so a local Ray, alive until Ctrl-C. Serve listens where :func:`http_options` says.
    """
    options = http_options(host, port)
    app = build_app(model_path, name=name, num_gpus=num_gpus, tensor_parallel_size=tensor_parallel_size)
    if address is None and importlib.util.find_spec("vllm") is None:
        raise LLMError(GPU_HINT)
    from raylake.runtime import start_ray

    ray = start_ray(address, log_to_driver=True)
    if address is None:
        # Locally no autoscaler will add GPUs: a replica that cannot fit would wait forever.
        have, need = ray.cluster_resources().get("GPU", 0), max(num_gpus, tensor_parallel_size)
        if have < need:
            raise LLMError(f"this machine offers Ray {have:g} GPUs; serving {name!r} needs {need:g}")
    serve.start(http_options=options)
    try:
        serve.run(app, name=name, route_prefix=route_prefix)
    except RuntimeError as exc:
        # The replica's LLMError arrives inside Serve's deployment-failure message.
        if GPU_HINT in str(exc):
            raise LLMError(f"{GPU_HINT} (the node that hosts the {name!r} replica has none)") from None
        lines = [ln for ln in str(exc).splitlines() if ln.strip()]
        raise LLMError(f"vLLM deployment {name!r} failed to start: {lines[-1] if lines else type(exc).__name__}") from None
    reach = host if host not in ("0.0.0.0", "::") else ray.util.get_node_ip_address()
    base_url = f"http://{reach}:{port}{route_prefix.rstrip('/')}/v1"
    logger.info("vLLM model %r serving at %s", name, base_url)
    if blocking:
        block_until_interrupted()
    return base_url


def block_until_interrupted() -> None:
    """Sleep until Ctrl-C (``KeyboardInterrupt`` propagates to the caller)."""
    while True:
        time.sleep(3600)
