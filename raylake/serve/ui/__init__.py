"""The web page of ``raylake serve`` (``GET /``): static files written by hand, plus the example
questions it offers.

The page is plain HTML, CSS and JavaScript (no framework, no build step, nothing fetched from
another host): it calls the same HTTP API as any client (``/examples``, ``/ask``, ``/tables``),
with the bearer token the user typed when the service has one. The files are package data,
read once; :data:`CSP` keeps the browser from loading anything that is not ours.
"""
from __future__ import annotations

import functools
import os
import re

from raylake.intent.lexicon import lemma
from raylake.lake.names import name_words, split_words
from raylake.relevance.text import plural

HERE = os.path.dirname(os.path.abspath(__file__))
MEDIA_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
# The page and its scripts come from this service only; a value in a table cannot inject a script.
CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"


@functools.cache
def asset(name: str) -> tuple[bytes, str] | None:
    """The bytes and media type of one file of the page, or ``None`` for a name that is not one."""
    ext = os.path.splitext(name)[1]
    if "/" in name or "\\" in name or name.startswith(".") or ext not in MEDIA_TYPES:
        return None
    path = os.path.join(HERE, name)
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as fh:
        return fh.read(), MEDIA_TYPES[ext]


def noun(path: str) -> str:
    """A table's file name as a singular noun: ``sports/points_2019.csv`` -> ``point``; a neutral
    name (``t0321.csv``) stays as it is."""
    stem = os.path.splitext(os.path.basename(path))[0]
    words = name_words(os.path.basename(path)).split()
    return " ".join(words[:-1] + [lemma(words[-1])]) if words else stem.lower()


def example_questions(index, n: int = 4) -> list[str]:
    """Up to ``n`` questions this lake can answer, built from its strongest join edges and its
    tables' sample values (so a new user sees words the lake knows, not ours)."""
    out: list[str] = []
    seen = set()
    joins = sorted((e for e in index.edges if e["kind"] == "join" and noun(e["src_table"]) != noun(e["dst_table"])),
                   key=lambda e: (-e["score"], e["src_table"], e["dst_table"]))
    for e in joins:
        pair = frozenset((noun(e["src_table"]), noun(e["dst_table"])))
        if pair in seen:
            continue
        # A one-to-many link (unique on one side only) reads as "which <ones> have the most <manys>".
        src_u, dst_u = _unique(index, e["src_table"], e["src_column"]), _unique(index, e["dst_table"], e["dst_column"])
        if src_u == dst_u or not _same_key(e["src_column"], e["dst_column"]):
            continue
        one, many = (e["dst_table"], e["src_table"]) if dst_u else (e["src_table"], e["dst_table"])
        seen.add(pair)
        out.append(f"Which {plural(noun(one))} have the most {plural(noun(many))}?")
        if len(out) >= (n + 1) // 2:
            break
    cols = index.columns
    for t, path in enumerate(index.paths):
        if len(out) >= n:
            break
        ids = list(index.table_columns[t])
        text = [c for c in ids if cols["dtype"][c] == "text" and not cols["key_like"][c] and cols["sample"][c]]
        num = [c for c in ids if cols["dtype"][c] in ("int", "float") and not cols["key_like"][c]]
        if text and num and noun(path) not in seen:
            seen.add(noun(path))
            value = str(cols["sample"][text[0]][0]).replace("'", "")
            out.append(f"What is the {' '.join(split_words(cols['name'][num[0]]))} of the {noun(path)} with "
                       f"{' '.join(split_words(cols['name'][text[0]]))} '{value}'?")
    return out[:n]


def _same_key(a: str, b: str) -> bool:
    """Both sides name the same id column: a foreign key, not two tables that share a city."""
    a, b = (re.sub(r"[^a-z0-9]", "", x.lower()) for x in (a, b))
    return a == b and a.endswith("id")


def _unique(index, path: str, column: str) -> bool:
    c = index.col_index.get((path, column))
    return c is not None and (index.columns["uniqueness"][c] or 0) >= 0.999
