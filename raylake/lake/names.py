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


def _meaningful(words: list[str]) -> list[str]:
    """``words`` without digits, or ``[]`` when none of them is a word (:func:`is_word`)."""
    words = [w for w in words if w.isalpha()]
    return words if any(is_word(w) for w in words) else []


def _parts(path: str) -> list[str]:
    """The folders and the file stem of ``path`` (its extension dropped), ``/`` or ``\\`` separated."""
    parts = path.replace("\\", "/").split("/")
    if "." in parts[-1]:
        parts[-1] = parts[-1].rsplit(".", 1)[0]
    return parts


def name_words(path: str) -> str:
    """The meaningful words of a lake path (folders and file stem), or ``''`` for a neutral name.

    Digits are dropped (shard suffixes ``_1``/``_2``, years in exports); a path none of whose
    tokens is a word (:func:`is_word`) is neutral.
    """
    return " ".join(_meaningful([w for part in _parts(path) for w in split_words(part)]))


def stem_words(path: str) -> list[str]:
    """The meaningful words of the file stem alone (``pets_1/Has_Pet.csv`` → ``['has', 'pet']``), or
    ``[]`` for a neutral stem, whatever its folders say."""
    return _meaningful(split_words(_parts(path)[-1]))
