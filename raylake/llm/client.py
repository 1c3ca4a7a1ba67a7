"""The one LLM client of raylake: OpenAI-compatible chat completions over httpx.

Every LLM call in the project (intent extraction, EcoTable's join validation, the
Octopus agent) goes through :class:`LLMClient`, so retries, timeouts, caching and error
messages behave the same everywhere. It speaks the plain chat-completions protocol
(``POST {base_url}/chat/completions``, ``GET {base_url}/models``), which OpenAI, vLLM
(:mod:`raylake.llm.serve`), llama.cpp, Ollama and most gateways serve.

Replies at temperature 0 are cached, in memory (LRU) and, when ``cache_dir`` is set, on
disk, keyed by the model, the messages and the sampling parameters: re-running a
benchmark or a question costs no tokens and gives the same intent graph.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, TypeVar

import httpx

from raylake.config import LLMConfig, RaylakeContext
from raylake.errors import LLMError, RaylakeError

logger = logging.getLogger(__name__)

T = TypeVar("T")
Messages = list[dict[str, Any]]

# Statuses worth retrying: server-side failures, plus the two 4xx that mean "try later"
# (408 request timeout, 429 rate limit). Every other 4xx is our request's fault.
_RETRY_4XX = (408, 429)
NOT_CONFIGURED = "no LLM endpoint configured; set RAYLAKE_LLM_BASE_URL (e.g. http://localhost:8000/v1)"
_FENCE = re.compile(r"```(?:[A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)


def _one_line(text: str, limit: int = 200) -> str:
    """Collapse whitespace and cut, so an error message stays on one line."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def extract_json(text: str) -> dict:
    """The JSON object in an LLM reply, tolerating markdown fences and text around it.

    Tries the whole reply, then each fenced block, then every ``{`` from the left (with
    :meth:`json.JSONDecoder.raw_decode`, so trailing prose is ignored). Raises
    :class:`ValueError` with the parser's message for the most plausible candidate, which
    is what a repair round quotes back to the model.
    """
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    first_error: str | None = None
    for cand in candidates:
        try:
            obj = json.loads(cand)
        except ValueError as exc:
            first_error = first_error or f"{exc}"
            continue
        if isinstance(obj, dict):
            return obj
        first_error = first_error or f"expected a JSON object, got {type(obj).__name__}"
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except ValueError:
            pass
        else:
            if isinstance(obj, dict):
                return obj
        start = text.find("{", start + 1)
    if "{" not in text:
        raise ValueError("no JSON object in the reply")
    raise ValueError(first_error or "no complete JSON object in the reply")


class LLMClient:
    """A thread-safe OpenAI-compatible chat client with retries and a reply cache.

    ``config`` defaults to ``RaylakeContext.get_current().llm`` (the ``RAYLAKE_LLM_*``
    environment variables). With no ``model`` configured, the first model the endpoint
    lists under ``/models`` is used, which is what a single-model vLLM server wants.
    """

    retry_backoff_s = 0.5  # first pause between attempts; doubles per retry
    memory_cache_size = 1024  # replies kept in the in-memory LRU

    def __init__(self, config: LLMConfig | None = None):
        self.config = config or RaylakeContext.get_current().llm
        self._lock = threading.Lock()
        self._http: httpx.Client | None = None
        self._model: str | None = self.config.model
        self._memory: OrderedDict[str, str] = OrderedDict()

    # ------------------------------------------------------------------ public API

    @property
    def available(self) -> bool:
        """Whether an endpoint is configured (not whether it is up: see :meth:`models`)."""
        return bool(self.config.base_url)

    @property
    def base_url(self) -> str:
        if not self.available:
            raise LLMError(NOT_CONFIGURED)
        return self.config.base_url.rstrip("/")

    @property
    def model(self) -> str:
        """The model name sent with each request (resolved from ``/models`` if not configured)."""
        with self._lock:
            if self._model:
                return self._model
        served = self.models()
        if not served:
            raise LLMError(f"LLM endpoint {self.base_url} serves no models; set RAYLAKE_LLM_MODEL")
        with self._lock:
            self._model = self._model or served[0]
            return self._model

    def models(self) -> list[str]:
        """The model ids the endpoint serves (``GET /models``); doubles as a health check."""
        body = self._request("GET", "/models")
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise LLMError(f"LLM endpoint {self.base_url}/models answered without a 'data' list: {_one_line(json.dumps(body))}")
        return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]

    def chat(
        self,
        messages: Messages | str,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        response_format: dict | None = None,
    ) -> str:
        """Send one chat completion and return the reply text.

        A string is sent as a single user message. Raises :class:`LLMError` when the
        endpoint is unreachable, slow, answers an HTTP error, or returns no text.
        """
        if not self.available:  # fail even when the reply is cached: no endpoint means no LLM
            raise LLMError(NOT_CONFIGURED)
        messages = _as_messages(messages)
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature}
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if response_format is not None:
            payload["response_format"] = response_format
        # Sampling above temperature 0 is meant to vary; caching it would freeze one draw.
        key = _cache_key(payload) if temperature == 0 else None
        if key is not None:
            cached = self._cache_get(key)
            if cached is not None:
                return cached
        body = self._request("POST", "/chat/completions", payload)
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"LLM reply has no choices[0].message.content: {_one_line(json.dumps(body))}") from None
        if not isinstance(content, str):
            raise LLMError(f"LLM reply content is {type(content).__name__}, not text: {_one_line(json.dumps(body))}")
        if key is not None:
            self._cache_put(key, content)
        return content

    def complete_json(self, prompt_or_messages: Messages | str, validate: Callable[[dict], T], repair: bool = True) -> T:
        """Ask for a JSON object and return ``validate(obj)``, with one repair round.

        The object is pulled out of the reply with :func:`extract_json`. If parsing or
        ``validate`` fails (``ValueError``, ``TypeError``, ``KeyError`` or a
        :class:`RaylakeError` such as ``IntentError``), the reply and the error are sent
        back once asking for a corrected object; a second failure raises :class:`LLMError`.
        Transport errors are raised at once: repairing cannot fix a down endpoint.
        """
        messages = _as_messages(prompt_or_messages)
        reply = self.chat(messages)
        try:
            return _parse(reply, validate)
        except _ReplyRejected as exc:
            if not repair:
                raise LLMError(exc.message) from None
            error = exc
        messages = [
            *messages,
            {"role": "assistant", "content": reply},
            {
                "role": "user",
                "content": f"Your reply was rejected: {error.detail}. Reply again with only the corrected JSON object, "
                "no explanations and no markdown fences.",
            },
        ]
        reply = self.chat(messages)
        try:
            return _parse(reply, validate)
        except _ReplyRejected as exc:
            raise LLMError(f"{exc.message} (after one repair round)") from None

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ HTTP

    def _client(self) -> httpx.Client:
        # One pooled connection set per LLMClient; httpx.Client is safe to share across threads.
        with self._lock:
            if self._http is None:
                headers = {"Content-Type": "application/json"}
                if self.config.api_key:
                    headers["Authorization"] = f"Bearer {self.config.api_key}"
                self._http = httpx.Client(headers=headers, timeout=httpx.Timeout(self.config.timeout_s))
            return self._http

    def _request(self, method: str, path: str, payload: dict | None = None) -> Any:
        """One API call with retries on connection errors, timeouts, 5xx, 408 and 429."""
        url = self.base_url + path
        retries = max(0, self.config.max_retries)
        attempt = 0
        while True:
            try:
                resp = self._client().request(method, url, json=payload)
            except httpx.TimeoutException:
                error = f"LLM endpoint {url} did not answer within {self.config.timeout_s:g} s"
            except httpx.TransportError as exc:
                error = f"LLM endpoint {url} unreachable: {_one_line(str(exc) or type(exc).__name__)}"
            else:
                if resp.status_code < 400:
                    try:
                        return resp.json()
                    except ValueError:
                        raise LLMError(f"LLM endpoint {url} answered HTTP {resp.status_code} with a non-JSON body: {_one_line(resp.text)}") from None
                error = f"LLM returned HTTP {resp.status_code} from {url}: {_one_line(resp.text)}{_hint(resp.status_code)}"
                if resp.status_code < 500 and resp.status_code not in _RETRY_4XX:
                    raise LLMError(error)
            if attempt == retries:
                raise LLMError(error + (f" (after {attempt + 1} attempts)" if attempt else ""))
            delay = self.retry_backoff_s * 2**attempt
            logger.info("%s; retrying in %.1f s", error, delay)
            time.sleep(delay)
            attempt += 1

    # ------------------------------------------------------------------ cache

    def _cache_get(self, key: str) -> str | None:
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                return self._memory[key]
        path = self._cache_path(key)
        if path is None:
            return None
        try:
            with open(path, encoding="utf-8") as f:
                reply = json.load(f)["reply"]
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or torn entry: a miss, the next write repairs it
        self._remember(key, reply)
        return reply

    def _cache_put(self, key: str, reply: str) -> None:
        self._remember(key, reply)
        path = self._cache_path(key)
        if path is None:
            return
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            # Write-then-rename: concurrent readers (threads, Ray workers) never see half a file.
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"model": self._model, "reply": reply}, f, ensure_ascii=False)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as exc:
            # The cache is an optimisation: a read-only or full disk must not fail the call.
            logger.warning("LLM cache %s not written: %s", self.config.cache_dir, exc)

    def _remember(self, key: str, reply: str) -> None:
        with self._lock:
            self._memory[key] = reply
            self._memory.move_to_end(key)
            while len(self._memory) > self.memory_cache_size:
                self._memory.popitem(last=False)

    def _cache_path(self, key: str) -> str | None:
        if not self.config.cache_dir:
            return None
        # Two-level fan-out keeps directories small for caches with millions of replies.
        return os.path.join(os.path.expanduser(self.config.cache_dir), key[:2], f"{key}.json")


class _ReplyRejected(Exception):
    """A reply that did not parse or validate; ``detail`` goes to the repair prompt."""

    def __init__(self, message: str, detail: str):
        super().__init__(message)
        self.message, self.detail = message, detail


def _parse(reply: str, validate: Callable[[dict], T]) -> T:
    try:
        obj = extract_json(reply)
    except ValueError as exc:
        raise _ReplyRejected(f"LLM reply is not valid JSON: {_one_line(str(exc))}", f"it is not valid JSON ({exc})") from None
    try:
        return validate(obj)
    except (ValueError, TypeError, KeyError, RaylakeError) as exc:
        raise _ReplyRejected(f"LLM reply failed validation: {_one_line(str(exc))}", f"the JSON is invalid ({exc})") from None


def _as_messages(messages: Messages | str) -> Messages:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return list(messages)


def _cache_key(payload: dict) -> str:
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (check RAYLAKE_LLM_API_KEY)"
    if status == 404:
        return " (check RAYLAKE_LLM_BASE_URL, which usually ends in /v1, and RAYLAKE_LLM_MODEL)"
    return ""
