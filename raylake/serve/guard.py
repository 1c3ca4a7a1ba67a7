"""What keeps a replica answering when its clients are hostile, broken or too many.

- **Bodies** are read as a stream and counted while they arrive: past ``max_body_bytes`` the
  replica answers 413 at once, without waiting for (or holding) the rest; Serve then stops
  fetching the body from its proxy (what arrived before the 413, tens of MB on a fast link,
  is buffered once; a public deployment puts a body limit in its load balancer too). A body
  not complete within ``body_timeout_s`` gets 408, so a client trickling bytes holds a
  connection for a bounded time. A client that goes away mid-body is :class:`ClientGone`: counted as 499, logged on one line, no traceback.
- **Admission**: at most ``max_active_requests`` requests per replica do work (``/ask``,
  ``/intent``, ``/tables``); the next one gets a JSON 503 with ``Retry-After`` immediately.
  Ray Serve's own ``max_ongoing_requests`` is set well above that limit: the slots between
  the two keep ``/health``, ``/metrics`` and those fast 503s flowing under load, where the
  proxy would otherwise queue them or answer its own plain-text 503.
- **Auth**: the bearer token compared in constant time.
"""
from __future__ import annotations

import asyncio
import contextlib
import hmac

from ray.exceptions import TaskCancelledError
from starlette.requests import ClientDisconnect, Request

from raylake.serve.schema import BadRequest

# nginx's code for "client closed the request": nobody reads it, but metrics count it apart from our errors.
CLIENT_GONE = 499


class ClientGone(Exception):
    """The client disconnected before its request was read."""


def authorized(request: Request, token: str | None) -> bool:
    if not token:
        return True
    got = request.headers.get("authorization", "")
    return got.startswith("Bearer ") and hmac.compare_digest(got[7:].strip().encode(), token.encode())


async def read_body(request: Request, max_bytes: int, timeout_s: float) -> bytes:
    """The whole body, or 413 as soon as it passes ``max_bytes``, or 408 after ``timeout_s``."""
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > max_bytes:
        raise BadRequest(413, f"request body is {int(length):,} bytes; the limit is {max_bytes:,}")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_bytes:
                    raise BadRequest(413, f"request body is over {max_bytes:,} bytes, the limit")
                chunks.append(chunk)
    except TimeoutError:
        raise BadRequest(408, f"request body not received within {timeout_s:g} s ({size:,} bytes came); send it whole") from None
    except (ClientDisconnect, TaskCancelledError):
        # The second is how Serve reports it when the proxy dropped the request before the
        # replica saw the disconnect message: the same client, gone.
        raise ClientGone() from None
    return b"".join(chunks)


class Admission:
    """A per-replica cap on requests doing work (one event loop: a plain counter suffices)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.active = 0

    @contextlib.contextmanager
    def slot(self):
        if self.active >= self.limit:
            raise BadRequest(503, f"overloaded: {self.active} requests in progress on this replica; retry in a moment")
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1
