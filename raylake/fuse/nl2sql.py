"""The NL2SQL agent (Octopus Sec. 3.5 and 5.3): an LLM writes the answer's DuckDB SQL over the plan's tables.

Used in place of the offline grammar (:mod:`raylake.fuse.answer`) when an LLM endpoint is
configured (``RAYLAKE_LLM_BASE_URL``, the intent extractor's; ``raylake ask --offline`` turns
both off). As in the paper, the agent is given the question and the tables discovery
returned, with their schemas and sample rows, and may read those tables only; it writes
SQL, DuckDB executes it, and it refines the query on what comes back.

Protocol (plain chat completions, so any OpenAI-compatible server will do, tool calling or
not): each reply is one JSON object ``{"sql": "<one SELECT>"}``, its answer query, or
``{"sql": ..., "probe": true}``, a query run only to look at the data (its rows come back,
the answer is not taken from it). A bare ```` ```sql ```` block, or a reply that is only a
SELECT, is taken as an answer query.

The loop, one LLM reply a turn, at most ``NL2SQLConfig.max_turns`` turns and
``max_seconds``:

- the query runs through the tool harness's read-only guard
  (:class:`raylake.tools.sql.LakeSQL`: one SELECT, no table functions, no file outside the
  lake, row and time caps), restricted to the plan's tables; a refusal or a DuckDB error
  goes back to the model as the next turn's message;
- an answer query with rows is the answer; one with no rows goes back once ("check the
  filter values against the samples"); the same query sent again is taken as an empty answer;
- a probe's first ``result_rows`` rows go back.

At the cap, the last answer query that ran (an empty one) is the answer; with none, the agent
has no answer and the engine falls back to the offline grammar, saying so in the warnings.
An :class:`~raylake.errors.LLMError` (endpoint down, slow) ends the loop the same way: a
flaky endpoint costs quality, never the answer. The answer's ``sql`` is self-contained: each
lake table the query reads becomes a CTE over its file, so DuckDB runs it as printed.
"""
from __future__ import annotations

import json
import logging
import re
import time

from raylake.config import NL2SQLConfig, RaylakeContext
from raylake.errors import LLMError
from raylake.fuse.answer import QueryAnswer
from raylake.llm.client import LLMClient, extract_json
from raylake.tools.base import Toolbox, ToolError
from raylake.tools.sql import quote

logger = logging.getLogger(__name__)

SYSTEM = (
    "You answer questions over a few tables by writing one DuckDB SQL query. The tables are DuckDB views named by "
    'their file path, always in double quotes: SELECT * FROM "folder/table.csv". Only SELECT (or WITH ... SELECT) '
    "runs, and only over the tables listed. Reply with one JSON object and nothing else: "
    '{"sql": "<your answer query>"} for the query whose rows answer the question, or {"sql": "<query>", "probe": true} '
    "to look at the data first (its rows are shown to you; the answer is not taken from it). Select only the columns "
    "the question asks for, in the order it asks. Text values may differ from the question in case or spacing."
)
_SQL_FENCE = re.compile(r"```sql\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_BARE = re.compile(r"^\s*(SELECT|WITH)\b", re.IGNORECASE)
_WITH = re.compile(r"^\s*WITH\s+(RECURSIVE\s+)?", re.IGNORECASE)


def parse_reply(reply: str) -> tuple[str, bool]:
    """``(sql, probe)`` from one reply (module docstring), or ``ValueError`` saying what is wrong."""
    try:
        obj = extract_json(reply)
    except ValueError as exc:
        fenced = _SQL_FENCE.search(reply)
        if fenced:
            obj = {"sql": fenced.group(1)}
        elif _BARE.match(reply):  # a reply that is nothing but the query
            obj = {"sql": reply}
        else:
            raise ValueError(f"no JSON object with an 'sql' field ({exc})") from None
    sql = obj.get("sql")
    if not isinstance(sql, str) or not sql.strip():
        raise ValueError("the JSON object has no 'sql' string")
    probe = obj.get("probe", False)
    if not isinstance(probe, bool):
        raise ValueError("'probe' must be true or false")
    return sql.strip().rstrip(";").strip(), probe


def self_contained(sql: str, sources: dict[str, str]) -> str:
    """``sql`` with each lake table it reads defined as a CTE over its file (``sources``: path →
    table function), merged into the query's own ``WITH`` when it has one."""
    if not sources:
        return sql
    ctes = ",\n".join(f"{quote(p)} AS (SELECT * FROM {src})" for p, src in sorted(sources.items()))
    m = _WITH.match(sql)
    if m:
        return f"WITH {m.group(1) or ''}{ctes},\n{sql[m.end():]}"
    return f"WITH {ctes}\n{sql}"


def _table_text(rows: dict) -> str:
    lines = [" | ".join(rows["columns"])]
    lines += [" | ".join("NULL" if v is None else str(v) for v in r) for r in rows["rows"]]
    return "\n".join("    " + x for x in lines)


class NL2SQLAgent:
    """Question + plan tables → :class:`QueryAnswer` with ``source = "llm"`` (module docstring).

    ``toolbox`` supplies the read-only SQL connection (``toolbox.db``); ``client`` the LLM.
    """

    def __init__(self, client: LLMClient, toolbox: Toolbox, cfg: NL2SQLConfig | None = None):
        self.client, self.tb = client, toolbox
        self.cfg = cfg or RaylakeContext.get_current().nl2sql

    def prompt(self, question: str, tables: list[str], steps: list[dict]) -> str:
        """The first user message: the question, each table's schema (DuckDB types) and sample
        rows, and the joins and unions the plan found between them."""
        db, n = self.tb.db, self.cfg.sample_rows
        parts = [f"Question: {question.strip()}", "", "Tables:"]
        for path in tables:
            cols = ", ".join(f"{c} {t}" for c, t in db.schema(path))
            rows = int(self.tb.index.tables["n_rows"][self.tb.table(path)])
            sample = db.run(f"SELECT * FROM {quote(path)} LIMIT {n}", n, self.tb.cfg.sql_timeout_s, {path})
            parts += [f'  "{path}" ({rows} rows): {cols}', "  first rows:", _table_text(sample)]
        links = []
        for s in steps:
            if s.get("op") == "join" and s.get("keys"):
                links.append(f'  join: "{s["anchor"]}".{quote(s["keys"]["anchor_column"])} = "{s["new"]}".{quote(s["keys"]["new_column"])}')
            elif s.get("op") == "union":
                links.append(f'  union: "{s["new"]}" holds more rows of "{s["anchor"]}" (shards: combine them with UNION ALL BY NAME; '
                             f"its columns → the other's: {json.dumps(s.get('mapping') or {})})")
        if links:
            parts += ["", "How the tables connect (found in the data, may be incomplete):", *links]
        return "\n".join(parts)

    def answer(self, question: str, tables: list[str], steps: list[dict] | None = None, max_rows: int = 1_000) -> QueryAnswer:
        """Run the loop (module docstring) over ``tables`` (lake paths); ``steps`` is the plan
        (``Answer.steps``), whose join keys and union mappings the prompt quotes."""
        cfg, db = self.cfg, self.tb.db
        allowed = set(tables)
        turns: list[dict] = []
        start = time.monotonic()
        try:
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": self.prompt(question, tables, steps or [])}]
        except ToolError as exc:  # a plan table that can no longer be read: no prompt to send
            return QueryAnswer(None, reason=f"the NL2SQL agent cannot read the plan's tables: {exc}", source="llm")
        last_empty: str | None = None
        kept: tuple[str, dict] | None = None  # the last answer query that ran (with no rows)
        reason = f"no answer query ran in {cfg.max_turns} turns"
        for _ in range(cfg.max_turns):
            if time.monotonic() - start > cfg.max_seconds:
                reason = f"the {cfg.max_seconds:g} s time cap passed after {len(turns)} turns"
                break
            try:
                reply = self.client.chat(messages)
            except LLMError as exc:
                logger.warning("NL2SQL agent: the LLM failed after %d turns: %s", len(turns), exc)
                reason = f"the LLM failed ({exc})"
                break
            messages.append({"role": "assistant", "content": reply})
            try:
                sql, probe = parse_reply(reply)
            except ValueError as exc:
                turns.append({"error": f"unusable reply: {exc}"})
                messages.append({"role": "user", "content": f'Your reply was not usable: {exc}. Reply with only {{"sql": "..."}}.'})
                continue
            try:
                res = db.run(sql, cfg.result_rows if probe else max_rows, self.tb.cfg.sql_timeout_s, allowed)
            except ToolError as exc:
                turns.append({"sql": sql, "probe": probe, "error": str(exc)})
                messages.append({"role": "user", "content": f"The query did not run: {exc}\nFix it and reply with the JSON object."})
                continue
            turns.append({"sql": sql, "probe": probe, "rows": len(res["rows"])})
            if probe:
                more = " (first rows only)" if res["truncated"] else ""
                messages.append({"role": "user", "content": f"Probe result{more}:\n{_table_text(res)}\nReply with the next JSON object."})
                continue
            if res["rows"] or sql == last_empty:
                return self._done(sql, res, max_rows, allowed, turns, [])
            last_empty, kept = sql, (sql, res)
            messages.append({"role": "user", "content": (
                "The query ran but returned no rows. Check each filter value against the sample rows (spelling, case, "
                "type) and the join keys, then reply with a corrected query; if no rows is the right answer, send the "
                "same query again.")})
        if kept is not None:
            return self._done(*kept, max_rows, allowed, turns,
                              [f"the NL2SQL agent's answer query returned no rows and {reason}; that empty answer is kept"])
        return QueryAnswer(None, reason=f"the NL2SQL agent found no answer: {reason}", source="llm", turns=turns)

    def _done(self, sql: str, res: dict, max_rows: int, allowed: set[str], turns: list[dict], warnings: list[str]) -> QueryAnswer:
        db = self.tb.db
        total = len(res["rows"])
        if res["truncated"]:  # rows past the cap were not fetched: count them
            total = db.run(f"SELECT count(*) FROM ({sql})", 1, self.tb.cfg.sql_timeout_s, allowed)["rows"][0][0]
        read = db.check(sql, allowed)
        full = self_contained(sql, {p: db.source(p) for p in read})
        return QueryAnswer(full, res["columns"], res["rows"], total, warnings, source="llm", turns=turns)
