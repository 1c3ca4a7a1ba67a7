"""The texts the relevance model reads: a question as asked, a table as its name words
(:func:`raylake.lake.names.name_words`), headers and first rows."""
from __future__ import annotations

from raylake.lake.names import name_words


def table_text(path: str, content: str) -> str:
    """A table as the encoder reads it: ``'<name words>: <headers> | <rows>'``, the name part
    omitted for a neutral name. ``content`` is the index's table text (headers, then rows)."""
    name = name_words(path)
    return f"{name}: {content}" if name else content


def plural(noun: str) -> str:
    """The plural of a singular noun phrase (its last word): 'city' → 'cities', 'match' →
    'matches', 'series' stays; enough for questions built from table names."""
    head, _, last = noun.rpartition(" ")
    if last.endswith(("ies", "ics", "news")):  # series, statistics: the singular is the plural
        return noun
    if last.endswith("y") and last[-2:-1] not in tuple("aeiou"):
        last = last[:-1] + "ies"
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}" if head else last
