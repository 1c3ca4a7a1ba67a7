"""The tool table: one :class:`ToolSpec` per tool, read by ``Toolbox.call``, the CLI and MCP.

A tool is a plain function ``fn(tb, ...)`` with annotated keyword arguments and a docstring;
its name, description and parameter types come from the function itself, so the three front
ends cannot disagree about a tool.
"""
from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass

from raylake.tools.ask import ask
from raylake.tools.base import Toolbox, ToolError
from raylake.tools.joins import joinable_columns, schema_correspondence, value_overlap
from raylake.tools.schema import column_search, find_column, inspect_table
from raylake.tools.sql import sql
from raylake.tools.values import value_search


@dataclass
class Param:
    name: str
    kind: type  # int, float, str or bool
    required: bool
    default: object
    optional: bool  # None is accepted (the configured default)


def _base_type(annotation) -> tuple[type, bool]:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if args:  # ``int | None``
        return args[0], True
    return annotation, False


@dataclass
class ToolSpec:
    name: str
    fn: typing.Callable
    description: str
    params: list[Param]

    @classmethod
    def of(cls, fn) -> "ToolSpec":
        hints = typing.get_type_hints(fn)
        params = []
        for p in list(inspect.signature(fn).parameters.values())[1:]:
            kind, optional = _base_type(hints[p.name])
            required = p.default is inspect.Parameter.empty
            params.append(Param(p.name, kind, required, None if required else p.default, optional))
        doc = " ".join(inspect.getdoc(fn).split())
        return cls(fn.__name__, fn, doc, params)

    def run(self, tb: Toolbox, args: dict) -> dict:
        """Call the tool with ``args``, checked against its parameters (one-line errors)."""
        known = {p.name: p for p in self.params}
        unknown = sorted(set(args) - set(known))
        if unknown:
            raise ToolError(f"tool {self.name} has no argument {unknown[0]!r}; it takes {', '.join(known) or 'none'}")
        for p in self.params:
            if p.name not in args:
                if p.required:
                    raise ToolError(f"tool {self.name} needs argument {p.name!r}")
                continue
            v = args[p.name]
            if v is None and p.optional:
                continue
            ok = isinstance(v, p.kind) and not (p.kind is not bool and isinstance(v, bool))
            if p.kind is float and isinstance(v, int) and not isinstance(v, bool):
                ok = True
            if not ok:
                raise ToolError(f"tool {self.name}: argument {p.name!r} must be {p.kind.__name__}, not {type(v).__name__}")
        return self.fn(tb, **args)


TOOLS: dict[str, ToolSpec] = {
    s.name: s
    for s in map(
        ToolSpec.of,
        (column_search, find_column, value_search, inspect_table, sql, schema_correspondence, joinable_columns, value_overlap, ask),
    )
}
