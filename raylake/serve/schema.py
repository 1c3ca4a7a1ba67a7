"""Request bodies of the HTTP API, and how a bad one becomes a one-line 4xx.

Bodies are parsed by hand (size first, then JSON, then the model) rather than by FastAPI,
so that every failure has its own status and one readable reason:

- 413: larger than ``max_body_bytes`` (checked while the body streams in, see :mod:`.guard`);
- 400: not UTF-8 JSON, nested deeper than :data:`MAX_DEPTH`, or not a JSON object;
- 422: an unknown field, a wrong type (strictly: ``"7"`` and ``true`` are not integers), an
  out-of-range number, an over-long question.

Error bodies are ``{"error": {"code": <status>, "message": "<one line>"}}``.
"""
from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


# Our bodies are flat objects; a deeper document only exercises the JSON parser's recursion.
MAX_DEPTH = 16
# Strings first (brackets inside them do not nest), then everything but brackets: both linear.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class AskRequest(BaseModel):
    """``POST /ask``: one question."""

    # strict: a client sending "7" or true for a number has a bug worth hearing about.
    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1, description="the question, in English (at most max_question_chars, 1,000 by default)")
    budget: int | None = Field(None, ge=1, description="L: at most this many tables in the plan (default from the search config)")
    beam: int | None = Field(None, ge=1, description="B: beam width (default from the search config)")
    fuse: bool = Field(False, description="execute the plan and add the fused table's summary under 'fused'")
    preview: int = Field(0, ge=0, description="with fuse: keep this many fused rows under fused.preview")
    answer: bool = Field(False, description="also write and run the answer query over the fused table: 'sql' and 'answer' (its rows)")
    format: Literal["json", "parquet", "csv"] = Field(
        "json", description="'parquet' or 'csv' answers with the fused table as a file (a download) instead of the JSON answer"
    )


class IntentRequest(BaseModel):
    """``POST /intent``: the intent graph of one question, without searching."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1, description="the question, in English")


class BadRequest(Exception):
    """A request that gets ``status`` with a one-line ``message``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def error_body(status: int, message: str) -> dict:
    return {"error": {"code": status, "message": message}}


def parse(raw: bytes, model: type[BaseModel], *, max_bytes: int, max_question_chars: int):
    """``model`` from a request body, or :class:`BadRequest`."""
    if len(raw) > max_bytes:
        raise BadRequest(413, f"request body is {len(raw):,} bytes; the limit is {max_bytes:,}")
    if not raw.strip():
        raise BadRequest(400, "empty request body; send a JSON object such as {\"question\": \"...\"}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(400, f"request body is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    depth = nesting(text)
    if depth > MAX_DEPTH:
        raise BadRequest(400, f"request body nests {depth} levels deep; the limit is {MAX_DEPTH} (send a flat JSON object)")
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise BadRequest(400, f"request body is not valid JSON ({exc})") from None
    if not isinstance(body, dict):
        raise BadRequest(400, f"request body must be a JSON object, not a JSON {type(body).__name__}")
    try:
        req = model.model_validate(body)
    except ValidationError as exc:
        raise BadRequest(422, describe(exc)) from None
    q = getattr(req, "question", None)
    if q is not None and len(q) > max_question_chars:
        raise BadRequest(422, f"question is {len(q):,} characters; the limit is {max_question_chars:,}")
    if q is not None and not q.strip():
        raise BadRequest(422, "question is blank; ask something, e.g. {\"question\": \"which clubs have the most players?\"}")
    return req


def nesting(text: str) -> int:
    """The deepest bracket nesting of a JSON text (brackets in strings do not count)."""
    depth = peak = 0
    for ch in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if ch in "[{" else -1
        peak = max(peak, depth)
    return peak


def describe(exc: ValidationError) -> str:
    """One line for all of a validation error's problems."""
    out = []
    for e in exc.errors():
        field = ".".join(str(x) for x in e.get("loc", ())) or "body"
        if e.get("type") == "extra_forbidden":
            out.append(f"unknown field {field!r}")
        elif e.get("type") == "missing":
            out.append(f"missing field {field!r}")
        else:
            out.append(f"{field!r}: {e.get('msg', 'invalid')}")
    return "; ".join(out)


def openapi_body(model: type[BaseModel]) -> dict:
    """``openapi_extra`` documenting ``model`` as the JSON body of a hand-parsed route."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}
