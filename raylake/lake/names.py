"""What a lake path says about its table: its words, or nothing for a neutral name.

A file or folder name is evidence only when it means something: ``sales/Order_Items_2.csv``
reads ``sales order items`` (camel and snake case split, a shard suffix dropped), while a
neutral name such as ``t0321.csv`` or ``7f3a9c.parquet`` contributes nothing, so a lake
without meaningful names degrades to content alone rather than to noise. The relevance
encoder reads these words (:mod:`raylake.relevance.text`), and the offline extractor takes
entity words from file stems (:func:`raylake.intent.lexicon.name_entity_words`).
"""
from __future__ import annotations

import re

_CAMEL = re.compile(r"([a-z])([A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_VOWEL = re.compile(r"[aeiouy]")


def split_words(name: str) -> list[str]:
    """``'Order_ItemsID'`` → ``['order', 'items', 'id']``: camel and snake case split, lowercased."""
    return [w for w in _SPLIT.split(_CAMEL.sub(r"\1 \2", name).lower()) if w]


def is_word(w: str) -> bool:
    """A token that can carry meaning: letters only, three or more, with a vowel (``t``, ``tbl``
    and hex runs such as ``fd`` do not)."""
    return len(w) >= 3 and w.isalpha() and bool(_VOWEL.search(w))


def name_words(path: str) -> str:
    """The meaningful words of a lake path (folders and file stem), or ``''`` for a neutral name.

    Digits are dropped (shard suffixes ``_1``/``_2``, years in exports); a path none of whose
    tokens is a word (:func:`is_word`) is neutral.
    """
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    words = [w for part in stem.replace("\\", "/").split("/") for w in split_words(part) if w.isalpha()]
    return " ".join(words) if any(is_word(w) for w in words) else ""
