"""The intent graph of GRAFT (Sec. 3.1, Appendix A): a forest of intent trees plus joins.

Each tree is one data need: an ``entity`` root, its ``attributes``, and optional value
leaves on an attribute. Cross-tree ``joins`` link an attribute of one tree to an attribute
of another. The JSON form is exactly the Appendix A schema::

    {"trees": [{"tree_id", "entity", "attributes": [{"attribute_id", "name", "values": [...]}]}],
     "joins": [{"from_tree", "from_attribute", "to_tree", "to_attribute"}]}

The atoms A_I = V_I ∪ E_I (Sec. 3.1) are what IGMS scores support for:

- nodes: one per entity, per attribute and per value leaf;
- edges: entity→attribute and attribute→value (intra-tree containment, χ = column of a
  table / value of a column) and each cross-tree join (χ = a join path in the lake).

Optional ``evidence`` on trees, attributes and joins records which words of the question
and which lake objects produced them (the offline extractor fills it); it is not part of
the Appendix A JSON unless ``to_json(evidence=True)``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from raylake.errors import IntentError, RaylakeError


def check_question(question, command: str = "ask") -> str:
    """``question`` if it is non-empty text, else a one-line error. Bytes that are not UTF-8
    reach Python as lone surrogates (from argv, or a JSON ``\\ud800`` escape); no later stage
    could print, encode or send them."""
    if not isinstance(question, str) or not question.strip():
        raise RaylakeError(f'empty question: ask something, e.g. raylake {command} "which clubs have the most players?"')
    bad = next((i for i, ch in enumerate(question) if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        raise RaylakeError(f"the question is not valid text at character {bad + 1} (a byte that is not UTF-8, "
                           "or a lone surrogate): send UTF-8 text")
    return question


@dataclass
class Attribute:
    attribute_id: str
    name: str
    values: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class IntentTree:
    tree_id: str
    entity: str
    attributes: list[Attribute] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class Join:
    from_tree: str
    from_attribute: str
    to_tree: str
    to_attribute: str
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Atom:
    """One intent atom: a node (entity/attribute/value) or an edge (has_attribute/has_value/join).

    ``text`` is what gets embedded to match lake objects; ``tree`` is the tree it belongs
    to (for a join, the ``from`` tree); ``ends`` holds the indices of a edge's two end atoms.
    """

    index: int
    kind: str  # entity | attribute | value | has_attribute | has_value | join
    text: str
    tree: str
    ref: str  # tree_id, attribute_id, or "attribute_id=value"
    ends: tuple[int, int] | None = None

    @property
    def is_node(self) -> bool:
        return self.ends is None


NODE_KINDS = ("entity", "attribute", "value")
EDGE_KINDS = ("has_attribute", "has_value", "join")


@dataclass
class IntentGraph:
    trees: list[IntentTree] = field(default_factory=list)
    joins: list[Join] = field(default_factory=list)

    # ------------------------------------------------------------------ parse / validate

    @classmethod
    def from_json(cls, obj: str | dict) -> "IntentGraph":
        """Parse and validate an Appendix A object (or its JSON text); raises :class:`IntentError`."""
        if isinstance(obj, (str, bytes)):
            try:
                obj = json.loads(obj)
            except ValueError as exc:
                raise IntentError(f"intent graph is not valid JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise IntentError("intent graph must be a JSON object with 'trees' and 'joins'")
        unknown = set(obj) - {"trees", "joins"}
        if unknown:
            raise IntentError(f"intent graph has unknown keys {sorted(unknown)}; expected 'trees' and 'joins'")
        trees_raw = obj.get("trees")
        if not isinstance(trees_raw, list) or not trees_raw:
            raise IntentError("intent graph needs a non-empty 'trees' list")
        trees = []
        for i, t in enumerate(trees_raw):
            if not isinstance(t, dict):
                raise IntentError(f"trees[{i}] must be an object")
            tid, entity = t.get("tree_id"), t.get("entity")
            if not isinstance(tid, str) or not tid.strip():
                raise IntentError(f"trees[{i}].tree_id must be a non-empty string")
            if not isinstance(entity, str) or not entity.strip():
                raise IntentError(f"trees[{i}].entity must be a non-empty string")
            attrs_raw = t.get("attributes", [])
            if not isinstance(attrs_raw, list):
                raise IntentError(f"trees[{i}].attributes must be a list")
            attrs = []
            for j, a in enumerate(attrs_raw):
                if not isinstance(a, dict):
                    raise IntentError(f"trees[{i}].attributes[{j}] must be an object")
                aid, name = a.get("attribute_id"), a.get("name")
                if not isinstance(aid, str) or not aid.strip():
                    raise IntentError(f"trees[{i}].attributes[{j}].attribute_id must be a non-empty string")
                if not isinstance(name, str) or not name.strip():
                    raise IntentError(f"trees[{i}].attributes[{j}].name must be a non-empty string")
                values = a.get("values", [])
                if values is None:
                    values = []
                if not isinstance(values, list) or not all(isinstance(v, (str, int, float)) for v in values):
                    raise IntentError(f"trees[{i}].attributes[{j}].values must be a list of strings")
                attrs.append(Attribute(aid.strip(), name.strip(), [str(v) for v in values], dict(a.get("evidence", {}) or {})))
            trees.append(IntentTree(tid.strip(), entity.strip(), attrs, dict(t.get("evidence", {}) or {})))
        joins = []
        joins_raw = obj.get("joins", [])
        if joins_raw is None:
            joins_raw = []
        if not isinstance(joins_raw, list):
            raise IntentError("'joins' must be a list")
        for k, j in enumerate(joins_raw):
            if not isinstance(j, dict):
                raise IntentError(f"joins[{k}] must be an object")
            fields = [j.get(n) for n in ("from_tree", "from_attribute", "to_tree", "to_attribute")]
            if not all(isinstance(v, str) and v for v in fields):
                raise IntentError(f"joins[{k}] needs from_tree, from_attribute, to_tree and to_attribute strings")
            joins.append(Join(*fields, evidence=dict(j.get("evidence", {}) or {})))
        graph = cls(trees, joins)
        graph.validate()
        return graph

    def validate(self) -> None:
        ids = [t.tree_id for t in self.trees]
        if len(set(ids)) != len(ids):
            raise IntentError(f"duplicate tree_id in {ids}")
        attr_tree: dict[str, str] = {}
        for t in self.trees:
            for a in t.attributes:
                if a.attribute_id in attr_tree:
                    raise IntentError(f"duplicate attribute_id {a.attribute_id!r}")
                attr_tree[a.attribute_id] = t.tree_id
        for j in self.joins:
            for tree, attr in ((j.from_tree, j.from_attribute), (j.to_tree, j.to_attribute)):
                if tree not in ids:
                    raise IntentError(f"join refers to unknown tree {tree!r}")
                if attr_tree.get(attr) != tree:
                    raise IntentError(f"join refers to attribute {attr!r}, which is not in tree {tree!r}")
            if j.from_tree == j.to_tree:
                raise IntentError(f"join links tree {j.from_tree!r} with itself")

    # ------------------------------------------------------------------ serialise

    def to_json(self, *, evidence: bool = False) -> dict:
        def ev(d: dict, obj) -> dict:
            if evidence and obj.evidence:
                d["evidence"] = obj.evidence
            return d

        return {
            "trees": [
                ev(
                    {
                        "tree_id": t.tree_id,
                        "entity": t.entity,
                        "attributes": [ev({"attribute_id": a.attribute_id, "name": a.name, "values": list(a.values)}, a) for a in t.attributes],
                    },
                    t,
                )
                for t in self.trees
            ],
            "joins": [
                ev({"from_tree": j.from_tree, "from_attribute": j.from_attribute, "to_tree": j.to_tree, "to_attribute": j.to_attribute}, j)
                for j in self.joins
            ],
        }

    def dumps(self, **kw) -> str:
        return json.dumps(self.to_json(**kw), ensure_ascii=False)

    # ------------------------------------------------------------------ atoms

    def tree(self, tree_id: str) -> IntentTree:
        for t in self.trees:
            if t.tree_id == tree_id:
                return t
        raise KeyError(tree_id)

    def atoms(self) -> list[Atom]:
        """A_I in a fixed order: per tree its entity, attributes, values and their edges; then joins."""
        out: list[Atom] = []
        node_of: dict[str, int] = {}

        def add(kind, text, tree, ref, ends=None) -> int:
            out.append(Atom(len(out), kind, text, tree, ref, ends))
            return len(out) - 1

        for t in self.trees:
            e = add("entity", t.entity, t.tree_id, t.tree_id)
            node_of[t.tree_id] = e
            for a in t.attributes:
                x = add("attribute", a.name, t.tree_id, a.attribute_id)
                node_of[a.attribute_id] = x
                add("has_attribute", f"{t.entity} {a.name}", t.tree_id, a.attribute_id, (e, x))
                for v in a.values:
                    y = add("value", v, t.tree_id, f"{a.attribute_id}={v}")
                    add("has_value", f"{a.name} {v}", t.tree_id, f"{a.attribute_id}={v}", (x, y))
        for j in self.joins:
            add(
                "join",
                f"{self.tree(j.from_tree).entity} {self.tree(j.to_tree).entity}",
                j.from_tree,
                f"{j.from_attribute}->{j.to_attribute}",
                (node_of[j.from_attribute], node_of[j.to_attribute]),
            )
        return out
