"""Pseudo-questions: self-supervised (question, tables) pairs drawn from a lake's own index.

GRAFT Sec. 4.1 (Algorithm 1 Stages 1–3, Algorithm 2) trains its guide on subgraphs sampled
from the lake graph G_D and compressed into pseudo-intent graphs. Here the same pipeline
ends in text, so a question → tables relevance model can learn on a lake no one has asked
questions about:

1. **Seed** — a start table drawn uniformly among the *usable* ones: rows and at least one
   payload column (a header that does not spell a key, ``name_key_hint``). ``key_like``
   alone would drop names and descriptions, unique in every row and the attributes
   questions ask for most.
2. **Expand** — 1..``max_tables`` tables by Algorithm 1's centrality walk
   (:func:`~raylake.learn.expand.expand_centrality`, α = 1) over join links of score
   ≥ 0.5 between tables with rows; union links are left out of the walk (shards are added
   to the answer instead, step 5).
3. **Columns and value** — H⁺'s join keys and edges come from
   :func:`~raylake.learn.trajectories.sample_columns`; each table adds 1–3 payload columns,
   and most questions (``P_VALUE``) carry one literal drawn from a payload column's sample.
4. **Compress** — G_I = C(H⁺) (:func:`~raylake.learn.compress.compress`, Algorithm 2):
   one entity–attribute–value tree per table with payload, key-only tables become bridges,
   joins between trees are abstracted over them.
5. **Verbalise** — G_I read out by one of several templates (lookup, filter, count,
   aggregate, join); entity words are file-name words when the name means something,
   else the word :class:`~raylake.learn.lake_arrays.LakeArrays` derives from the table's own key.
   The question's tables are those witnessing G_I — reference trees and the bridges on
   their join paths (a key-only table left dangling by the walk is needed by nothing) —
   each with its whole union shard cluster (``LakeGraph.shards``; Sec. 3.1 resolves
   unions at the homomorphism level).
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import numpy as np

from raylake.errors import RaylakeError
from raylake.index.profile import KEY_WORDS
from raylake.intent.lexicon import lemma
from raylake.lake.names import name_words, split_words
from raylake.learn.compress import compress
from raylake.learn.lake_arrays import DTYPES, LakeArrays
from raylake.learn.expand import expand_centrality
from raylake.learn.trajectories import sample_columns
from raylake.relevance.text import plural

P_VALUE = 0.7  # share of questions that filter on a literal; the rest ask for columns only
MAX_VALUE_CHARS = 40  # longer cells (addresses, free text) read as no question would quote them
NUMERIC = {DTYPES.index("int"), DTYPES.index("float")}
VERBS = ("List", "Show", "Find", "Give", "Return")
AGGREGATES = ("average", "maximum", "minimum", "total")
GENERIC = KEY_WORDS | {"name"}  # headers that name no entity


@dataclass
class PseudoQuestion:
    question: str  # natural-language text
    tables: list[int]  # table ids (index order) the question needs, each with all its union shards


def pseudo_questions(index, n: int, seed: int = 0, max_tables: int = 3) -> list[PseudoQuestion]:
    """n pseudo-questions over ``index`` (a :class:`~raylake.index.reader.LakeIndex`), deterministic for a seed."""
    if max_tables < 1:
        raise RaylakeError(f"max_tables must be at least 1, got {max_tables}")
    arrays, payload = _prepare(index)
    starts = [t for t in range(index.n_tables) if payload[t]]
    if not starts:
        raise RaylakeError("no table of the index has rows and a non-key column to ask about")
    rng = np.random.default_rng(seed)
    out: list[PseudoQuestion] = []
    while len(out) < n:  # ends: a one-table draw (probability 1/max_tables) always gives a question
        q = _question(index, arrays, payload, starts[int(rng.integers(len(starts)))], max_tables, rng)
        if q is not None:
            out.append(q)
    return out


def _prepare(index) -> tuple[LakeArrays, list[list[int]]]:
    """The lake arrays the samplers walk, restricted to what a question can use, and each table's payload columns."""
    arrays = LakeArrays.from_index(index, pseudo_atoms=False)  # structure only: no embedding is needed for text
    rows = [n > 0 for n in index.tables["n_rows"]]
    # name-based join links reach empty tables too; a table without rows answers nothing
    join = [{u: links for u, links in j.items() if rows[u]} if rows[t] else {} for t, j in enumerate(arrays.join)]
    names, dtypes = index.columns["name"], index.columns["dtype"]
    entity = [_entity(index.paths[t], arrays.entity_text[t], [names[c] for c in index.table_columns[t] if dtypes[c] == "text"])
              for t in range(index.n_tables)]
    arrays = dataclasses.replace(arrays, join=join, union=[{} for _ in join], entity_text=entity)
    hint, nulls = index.columns["name_key_hint"], index.columns["null_frac"]
    payload = [[int(c) for c in index.table_columns[t] if not hint[c] and nulls[c] < 1.0] if rows[t] else []
               for t in range(index.n_tables)]
    return arrays, payload


def _entity(path: str, key_word: str, text_headers: list[str]) -> str:
    """The singular noun a question uses for a table: its file name's words, else the word of its
    own key (``LakeArrays.entity_text``), else its first text header, else 'record'.

    Only the file's own name counts (``concert_singer/singer.csv`` is about singers, not
    concerts); a neutral name (``t0321.csv``) gives no words and must never reach the text.
    A key word that is a bare key (``id``) or a letter (``i`` of ``I_ID``) names nothing, nor
    does a first header every table has (``name``).
    """
    words = name_words(os.path.basename(path)).split()
    if not words:
        words = next((ws for ws in map(split_words, [key_word] + text_headers[:1])
                      if ws and all(w.isalpha() and len(w) > 1 for w in ws) and not set(ws) <= GENERIC), [])
    return " ".join(words[:-1] + [lemma(words[-1])]) if words else "record"


def _question(index, arrays: LakeArrays, payload: list[list[int]], start: int, max_tables: int, rng) -> PseudoQuestion | None:
    """One pseudo-question grown from ``start``, or None when G_I has a tree with nothing to ask."""
    size = int(rng.integers(1, max_tables + 1))
    tables = [new for _op, _anchor, new, _link in expand_centrality(arrays, start, size, 1.0, rng)]
    h = sample_columns(arrays, tables, 0.0, rng)  # β = 0: join keys and edges of H⁺ only, payload below
    picked = []
    for t in tables:
        free = [c for c in payload[t] if c not in h.keys[t]]
        k = int(rng.integers(1, min(3, len(free)) + 1)) if free else 0
        cols = sorted(int(c) for c in rng.choice(free, k, replace=False)) if k else []
        h.columns[t] = h.columns[t] + cols
        picked += cols
    h.values = _value(index, picked, rng)
    comp = compress(h, arrays)
    needed = {t for m in comp.refs for t in comp.clusters[m]} | {u for j in comp.intent.joins for u in j.evidence["via"]}
    label = sorted({int(s) for t in needed for s in index.graph.shards(t)})
    text = _verbalise(comp, arrays, rng)
    return PseudoQuestion(text, label) if text else None


def _value(index, columns: list[int], rng) -> dict[int, str]:
    """One literal, from the sample of one of ``columns``, for most questions; none otherwise."""
    if rng.random() >= P_VALUE:
        return {}
    options = []
    for c in columns:
        lits = [str(s).strip() for s in index.columns["sample"][c] or []]
        lits = [s for s in lits if s and "\n" not in s and len(s) <= MAX_VALUE_CHARS]
        if lits:
            options.append((c, lits))
    if not options:
        return {}
    c, lits = options[int(rng.integers(len(options)))]
    return {c: lits[int(rng.integers(len(lits)))]}


# --------------------------------------------------------------------------- verbalisation


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in tuple("aeiou") else f"a {noun}"


def _listing(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _attr_words(header: str, entity: str) -> str:
    """A header as words, without the entity's own name in front (``singer_name`` of a singer: 'name')."""
    words, ent = split_words(header), entity.split()
    if any(w.isalpha() for w in words[len(ent):]) and [lemma(w) for w in words[: len(ent)]] == ent:
        words = words[len(ent):]
    return " ".join(words)


def _verbalise(comp, arrays: LakeArrays, rng) -> str | None:
    """One English question for G_I = ``comp.intent`` (tree 0 is the subject), or None when a tree
    has only join keys: every payload column of the start table joined another sampled table,
    and Algorithm 2 kept a key-only cluster as the one reference tree."""
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    trees, value = [], None  # per tree: (entity, [(attribute words, numeric)]); value: (tree, words, literal)
    for i, tree in enumerate(comp.intent.trees):
        attrs = []
        for a in tree.attributes:
            if a.evidence.get("key"):  # join keys were added for the joins, no one asks for them
                continue
            col = comp.attr_col[a.attribute_id]
            words = _attr_words(a.name, tree.entity)
            if a.values:
                v = a.values[0]
                lit = v.removesuffix(".0") if int(arrays.col_dtype_code[col]) in NUMERIC else f"'{v}'"
                value = (i, words, lit)
            attrs.append((words, int(arrays.col_dtype_code[col]) in NUMERIC))
        if not attrs:
            return None
        trees.append((tree.entity, attrs))
    verb = pick(VERBS)
    e0 = trees[0][0]
    asked = [[w for w, _ in attrs if value is None or (i, w) != value[:2]] for i, (_, attrs) in enumerate(trees)]
    numeric = [w for w, num in trees[0][1] if num and w in asked[0]]
    options = []
    if len(trees) == 1:
        if value is None:
            options += [f"{verb} the {_listing(asked[0])} of each {e0}.", f"What is the {_listing(asked[0])} of every {e0}?"]
            options += [f"What is the {pick(AGGREGATES)} {w} of all {plural(e0)}?" for w in numeric[:1]]
        else:
            _, w, lit = value
            options += [f"How many {plural(e0)} have {w} {lit}?", f"Which {plural(e0)} have {_a(w)} of {lit}?"]
            if asked[0]:
                options += [f"{verb} the {_listing(asked[0])} of {plural(e0)} whose {w} is {lit}.",
                            f"What is the {_listing(asked[0])} of the {e0} with {w} {lit}?"]
            options += [f"What is the {pick(AGGREGATES)} {x} of {plural(e0)} whose {w} is {lit}?" for x in numeric[:1]]
        return pick(options)
    # several trees: the subject tree, a filter where the value lies, the others' attributes through their joins
    cond = ""
    if value is not None:
        k, w, lit = value
        cond = f" whose {w} is {lit}" if k == 0 else f" that have {_a(trees[k][0])} with {w} {lit}"
    head = f"the {_listing(asked[0])} of {plural(e0)}" if asked[0] else plural(e0)
    rest = [f"the {_listing(asked[i])} of their {e}" for i, (e, _) in enumerate(trees) if i and asked[i]]
    options.append(f"{verb} {head}{cond}" + (f", with {_listing(rest)}." if rest else "."))
    if asked[1] and (value is None or value[0] != 1):
        its = f"the {_listing(asked[0])} of its {plural(e0)}" if asked[0] else f"its {plural(e0)}"
        options.append(f"For each {trees[1][0]}, {verb.lower()} {_listing([f'its {_listing(asked[1])}', its + cond] + rest[1:])}.")
    if len(trees) == 2:
        if value is not None and value[0] == 1:
            options.append(f"How many {plural(e0)} does the {trees[1][0]} with {value[1]} {value[2]} have?")
        else:
            options.append(f"How many {plural(e0)}{cond} are there for each {trees[1][0]}?")
    return pick(options)
