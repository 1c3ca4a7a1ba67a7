"""Set operations of the offline answer (:mod:`raylake.fuse.answer`): 'not' as a set difference
over the asked table's rows, 'both' as an intersection. ``w`` is the answer's clause writer, a
:class:`~raylake.fuse.plan_columns.PlanColumns` whose ``filters()`` have run (``terms``, ``either``)."""
from __future__ import annotations

import re

from raylake.fuse.fuse import Fused
from raylake.fuse.plan_columns import Unanswerable, quote

NEGATION = re.compile(r"\b(not|never|without|no|none|both)\b|n't\b", re.I)


def set_operation(question: str, graph, w) -> tuple[str, int] | None:
    """``("except", where the cue starts)`` for 'not', 'never', 'without', 'no', 'none', "n't";
    ``("intersect", 0)`` for 'both' where an attribute has two '=' values ('both the races named A
    and the races named B'); ``None`` where the graph marks the negation itself (a ``!=``) or
    'both' has no such attribute ('list both title and id': a plain conjunction)."""
    if any("!=" in a.evidence.get("compare", {}).values() for t in graph.trees for a in t.attributes):
        return None
    cues = list(NEGATION.finditer(question))
    negations = [m for m in cues if m.group(0).lower() != "both"]
    if negations:
        return "except", negations[0].start()
    if cues and w.either:
        return "intersect", 0
    return None


def difference(w, fused: Fused, where: list[str], read_cols: list[str], cue: int) -> tuple[str, list[str], int]:
    """A set difference: ``(FROM clause, WHERE terms, part index)``.

    The answer reads the rows of one part E (the table of the asked columns) that do not occur
    in the fused join under the negated filters: ``FROM q<k> AS e WHERE <outer> AND NOT EXISTS
    (SELECT 1 FROM fused AS f WHERE <inner> AND f.c IS NOT DISTINCT FROM e.c …)`` over every
    column c of E. A filter on E whose value the question says before the cue ('members from
    USA who did not …') is outer; every other filter is what the question negates ('… haven't
    built a mill before 1850'). The fusion's inner joins dropped the rows of E that match nothing,
    so E is read from its own part (``Fused.part_tables``), not from the fused table."""
    parts = {w.part_of(c) for c in read_cols}
    if len(parts) != 1:
        raise Unanswerable("the question negates ('not', 'no', 'without'), and a set difference is over one table's rows, "
                            f"but the answer reads {len(parts) or 'no'} tables' columns")
    label = parts.pop()
    k = next(i for i, p in enumerate(fused.parts) if p["label"] == label)
    lower = w.question.lower()
    outer, inner = [], []
    for term, col, values in w.terms:
        said = [lower.find(v.lower()) for v in values if v.lower() in lower]
        (outer if w.part_of(col) == label and said and min(said) < cue else inner).append(term)
    others = {w.part[c] for c in fused.table.column_names if c in w.part} - {label}
    if not inner and not others:
        raise Unanswerable("the question negates ('not', 'no', 'without'), but the plan holds nothing beside the asked "
                            "table for the answer to exclude")
    ident = [f"f.{quote(c)} IS NOT DISTINCT FROM e.{quote(c)}" for c in fused.part_tables[k].column_names if c != f"_src{k}"]
    return f"q{k} AS e", outer + [f"NOT EXISTS (SELECT 1 FROM fused AS f WHERE {' AND '.join(inner + ident)})"], k
