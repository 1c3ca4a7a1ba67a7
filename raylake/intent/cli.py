"""``raylake intent "question"``: the intent graph of a question, with the evidence behind it.

:func:`register` adds the ``intent`` command to the main parser. The LLM extractor answers
when an endpoint is configured (``LLMClient().available``), falling back to the offline one
with a warning; otherwise the offline extractor answers. People get a tree (entities,
attributes with their values and best columns, joins with their lake keys); ``--json``
prints the Appendix A JSON with ``evidence`` on every tree, attribute and join (an LLM
graph's trees say ``"source": "llm"``, with the lake tables and columns
:func:`raylake.intent.ground.ground` found for them).
"""
from __future__ import annotations

import json
import time


def register(subparsers) -> None:
    """Add ``intent`` to the ``raylake`` subcommands."""
    p = subparsers.add_parser("intent", help="show the intent graph of a question (entities, attributes, values, joins) and its evidence")
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--index-dir", default=".raylake", help="where the index lives (default ./.raylake)")
    p.add_argument("--json", action="store_true", help="print the Appendix A JSON with evidence")
    p.set_defaults(func=cmd_intent)


def extract(question: str, index_dir: str):
    """``(graph, source, ms)`` for ``question`` against the index in ``index_dir``."""
    from raylake.index.reader import LakeIndex
    from raylake.intent.model import check_question

    check_question(question, "intent")
    from raylake.intent.offline import OfflineExtractor
    from raylake.llm.client import LLMClient

    index = LakeIndex.load(index_dir)  # IndexMissingError (exit 2) when there is none
    offline = OfflineExtractor(index)
    client = LLMClient()
    t0 = time.perf_counter()
    if client.available:
        from raylake.intent.llm import LLMExtractor

        graph = LLMExtractor(client, fallback=offline.extract, ground=offline.ground).extract(question)
        source = "llm" if any(t.evidence.get("source") == "llm" for t in graph.trees) else "offline"
    else:
        graph, source = offline.extract(question), "offline"
    return graph, source, (time.perf_counter() - t0) * 1e3


def _columns(ev: dict, k: int = 2) -> str:
    cols = ev.get("columns") or []
    return ", ".join(f"{p}:{c} ({s:.2f})" for p, c, s in cols[:k])


def render(graph, source: str) -> str:
    """The graph as an indented tree, each node with its words and lake evidence."""
    lines = [f"intent graph ({source})"]
    for t in graph.trees:
        ev = t.evidence
        why = ev.get("implied")
        words = ev.get("words")
        head = f"{t.tree_id} entity {t.entity!r}"
        if words and not why:
            head += f"  from {', '.join(map(repr, words)) if isinstance(words, list) else repr(words)}"
        if why:
            head += f"  [{why if isinstance(why, str) else 'implied'}]"
        tabs = ev.get("tables") or []
        if tabs:
            head += f"  → {', '.join(tabs[:3])}"
        lines.append(head)
        reason = ev.get("why")
        if reason:
            lines.append(f"   ·  {tabs[0]}: {reason['from'] or 'candidate'} ({reason['own']:.2f}), context +{reason['context']:.2f}, "
                         f"question +{reason['question']:.2f}, neighbourhood +{reason.get('neighbourhood', 0.0):.2f}"
                         + (f", attributes +{reason['attributes']:.2f}" if "attributes" in reason else "")
                         + (f"; chosen {reason['chosen']}" if reason.get("chosen") else ""))
        for a in t.attributes:
            line = f"   ├─ {a.attribute_id} attribute {a.name!r}"
            if a.evidence.get("also"):
                line += f" (also {', '.join(map(repr, a.evidence['also']))})"
            if a.evidence.get("role") == "key":
                line += "  [join key]"
            if a.evidence.get("aggregate"):
                line += f"  {a.evidence['aggregate']}"
            cols = _columns(a.evidence)
            if cols:
                line += f"  → {cols}"
            lines.append(line)
            for v in a.values:
                op = (a.evidence.get("compare") or {}).get(v)
                lines.append(f"   │    └─ value {v!r}" + (f"  ({op})" if op else ""))
    for j in graph.joins:
        line = f"join {j.from_tree}.{j.from_attribute} — {j.to_tree}.{j.to_attribute}"
        lake = j.evidence.get("lake")
        if lake:
            line += f"  on {lake[0]}:{lake[1]} = {lake[2]}:{lake[3]} (score {lake[4]:.2f})"
        if j.evidence.get("reason"):
            line += f"  [{j.evidence['reason']}]"
        lines.append(line)
    return "\n".join(lines)


def cmd_intent(args) -> int:
    graph, source, ms = extract(args.question, args.index_dir)
    if args.json:
        # exactly the Appendix A object (IntentGraph.from_json reads it back); evidence inline
        print(json.dumps(graph.to_json(evidence=True), ensure_ascii=False, default=str))
    else:
        print(render(graph, source))
        print(f"({ms:.0f} ms, including first-use loading of the model and value index)")
    return 0
