"""Pseudo-questions over a tiny concert lake: count, determinism, valid and connected tables,
text grounded in the tables' headers and values, and no neutral file name in the text."""
from __future__ import annotations

import os
import random

import pytest

from raylake.relevance.pseudo import PseudoQuestion, pseudo_questions
from raylake.lake.names import split_words


def _write(path: str, header: list[str], rows: list[list]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(",".join(header) + "\n")
        fh.writelines(",".join(str(v) for v in r) + "\n" for r in rows)


@pytest.fixture(scope="module")
def index(ray_session, tmp_path_factory):
    from raylake.index.build import build_index
    from raylake.index.reader import LakeIndex

    rng = random.Random(3)
    lake = str(tmp_path_factory.mktemp("pseudo") / "lake")
    names = ["Joe Sharp", "Timbaland", "Justin Brown", "Rose White", "John Nizinik", "Tribal King",
             "Ana Lopez", "Li Wei", "Sam Cole", "Eva Stone", "Max Ruiz", "Ola Berg"]
    _write(f"{lake}/concert_singer/singer.csv", ["singer_id", "name", "country", "age"],
           [[i, n, rng.choice(["France", "Netherlands", "United States"]), rng.randint(20, 60)] for i, n in enumerate(names, 1)])
    _write(f"{lake}/concert_singer/concert.csv", ["concert_id", "concert_name", "year", "stadium_id"],
           [[100 + i, f"{w} Night", rng.choice([2014, 2015]), rng.randint(201, 205)]
            for i, w in enumerate(["Auditions", "Super bootcamp", "Home Visits", "Week 1", "Week 2", "Finale", "Encore", "Gala"], 1)])
    _write(f"{lake}/concert_singer/singer_in_concert.csv", ["concert_id", "singer_id"],
           [[100 + rng.randint(1, 8), rng.randint(1, 12)] for _ in range(20)])
    # a neutral file name: the stadium table must be named by its key, never as 't0007'
    _write(f"{lake}/concert_singer/t0007.csv", ["stadium_id", "location", "capacity"],
           [[200 + i, loc, rng.randint(2000, 50000)] for i, loc in enumerate(["Raith Rovers", "Ayr United", "East Fife", "Queen's Park", "Stirling"], 1)])
    index_dir = str(tmp_path_factory.mktemp("pseudo_index") / ".raylake")
    build_index(lake, index_dir, progress=False)
    return LakeIndex.load(index_dir)


def _connected(index, tables: list[int]) -> bool:
    inside, seen, todo = set(tables), {tables[0]}, [tables[0]]
    while todo:
        t = todo.pop()
        for u in list(index.graph.join[t]) + index.graph.shards(t):
            if u in inside and u not in seen:
                seen.add(u)
                todo.append(u)
    return seen == inside


def test_pseudo_questions_are_deterministic_valid_and_grounded(index):
    qs = pseudo_questions(index, 40, seed=5)
    assert len(qs) == 40 and all(isinstance(q, PseudoQuestion) for q in qs)
    assert pseudo_questions(index, 40, seed=5) == qs
    assert pseudo_questions(index, 40, seed=6) != qs
    assert any(len(q.tables) > 1 for q in qs), "no question joins two tables"
    for q in qs:
        assert q.tables == sorted(set(q.tables)) and all(0 <= t < index.n_tables for t in q.tables)
        assert _connected(index, q.tables), q
        assert "t0007" not in q.question
        text = q.question.lower()
        words = {w for t in q.tables for c in index.table_columns[t] for w in split_words(index.columns["name"][c])}
        values = {str(v).lower() for t in q.tables for c in index.table_columns[t] for v in index.columns["sample"][c] or []}
        assert words & set(split_words(text)) or any(v in text for v in values), q


def test_a_question_over_singers_and_concerts_needs_the_table_linking_them(index):
    by_path = {os.path.basename(p): t for t, p in enumerate(index.paths)}
    singer, concert, link = by_path["singer.csv"], by_path["concert.csv"], by_path["singer_in_concert.csv"]
    assert concert not in index.graph.join[singer]  # only the link table joins them
    both = [q for q in pseudo_questions(index, 200, seed=0) if singer in q.tables and concert in q.tables]
    assert both, "no question over singers and concerts"
    assert all(link in q.tables for q in both)
    assert any("singer" in q.question and "concert" in q.question for q in both)
