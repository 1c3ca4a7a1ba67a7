"""Questions files: the one reader of the JSON-lines files that ``raylake ask --questions``,
``raylake relevance train`` and the benchmarks take.

Each non-blank line is a JSON object with a string ``question`` and, where the reader needs
them, an ``id`` and ``gold_tables`` (lake paths relative to the lake root); other fields are
ignored. A UTF-8 byte-order mark is skipped.

Two ways to read one, because the callers want different things from a bad line:

- :func:`read_lines` — a batch to answer: every line becomes a :class:`QuestionLine`, a bad
  one with its own ``error``, so one bad line costs only its own answer;
- :func:`read_questions` — training and benchmark data: the first bad line is a one-line
  :class:`~raylake.errors.RaylakeError` naming ``file:line``, since a result over a silently
  shortened file would mislead.
"""
from __future__ import annotations

import codecs
import json
from dataclasses import dataclass

from raylake.errors import RaylakeError


@dataclass
class QuestionLine:
    """One non-blank line of a questions file."""

    line: int  # 1-based line number in the file
    id: object  # the line's ``id`` (any JSON value), or its line number when it has none
    question: str | None  # None when the line has no string ``question``
    gold_tables: list[str] | None = None  # de-duplicated, in order; None when absent
    error: str | None = None  # ``file:line: why`` when the line cannot be used


def _check(path: str, n: int, obj, need_id: bool, need_gold: bool) -> str | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("question"), str):
        return f"{path}:{n}: each line needs a string field 'question'"
    if need_id and not isinstance(obj.get("id"), (str, int)):
        return f"{path}:{n}: needs string fields 'id' and 'question'"
    gold = obj.get("gold_tables")
    if need_gold and (not isinstance(gold, list) or not gold or not all(isinstance(g, str) for g in gold)):
        return f"{path}:{n}: 'gold_tables' must be a non-empty list of lake paths"
    return None


def read_lines(path: str, need_id: bool = False, need_gold: bool = False) -> list[QuestionLine]:
    """Every non-blank line of ``path``, each with its ``error`` when it cannot be used: not UTF-8,
    not a JSON object, no string ``question`` (no ``id`` / ``gold_tables`` when needed), or an
    ``id`` already used. Raises :class:`RaylakeError` only for an unreadable or empty file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise RaylakeError(f"cannot read questions file {path}: {exc.strerror}") from None
    out, first_use = [], {}
    for n, raw in enumerate(data.removeprefix(codecs.BOM_UTF8).splitlines(), 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.append(QuestionLine(n, n, None, error=f"{path}:{n}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                                                      f"column {exc.start + 1}): save the file as UTF-8"))
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except ValueError as exc:
            out.append(QuestionLine(n, n, None, error=f"{path}:{n}: not a JSON object ({getattr(exc, 'msg', exc)})"))
            continue
        qid = obj.get("id", n) if isinstance(obj, dict) else n
        question = obj.get("question") if isinstance(obj, dict) else None
        question = question if isinstance(question, str) else None
        gold = obj.get("gold_tables") if isinstance(obj, dict) else None
        gold = list(dict.fromkeys(gold)) if isinstance(gold, list) and all(isinstance(g, str) for g in gold) else None
        error = _check(path, n, obj, need_id, need_gold)
        key = json.dumps(qid, sort_keys=True, default=str)
        if error is None and key in first_use:
            error = f"{path}:{n}: duplicate id {key} (first used on line {first_use[key]}); ids must be unique"
        elif error is None:
            first_use[key] = n
        out.append(QuestionLine(n, qid, question, gold, error))
    if not out:
        raise RaylakeError(f"questions file {path} has no questions")
    return out


def read_questions(path: str, need_id: bool = False, need_gold: bool = False) -> list[QuestionLine]:
    """Every line of ``path`` (as :func:`read_lines`), or a :class:`RaylakeError` for its first bad line."""
    lines = read_lines(path, need_id=need_id, need_gold=need_gold)
    bad = next((q for q in lines if q.error), None)
    if bad is not None:
        raise RaylakeError(bad.error)
    return lines
