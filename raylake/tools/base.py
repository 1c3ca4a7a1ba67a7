"""The state every tool shares: one loaded index, its lake, and argument checks.

Tools name tables by their path relative to the lake root (as the index does) and columns by
their header. A path the index does not hold is refused before anything is read, so a tool
never opens ``../x``, an absolute path or a file the indexer refused (a link out of the lake).
"""
from __future__ import annotations

import functools
import os

from raylake.config import RaylakeContext
from raylake.errors import RaylakeError


class ToolError(RaylakeError):
    """A tool call with bad arguments, or one the harness refuses (unsafe SQL, paths outside the lake)."""


class Toolbox:
    """One index opened for tool calls; ``call(name, **args)`` runs a tool by name."""

    def __init__(self, index_dir, ctx: RaylakeContext | None = None):
        """``index_dir``: an index folder, or a loaded :class:`~raylake.index.reader.LakeIndex`
        (the engine's own, so ``raylake ask``'s NL2SQL agent loads nothing twice)."""
        from raylake.index.reader import LakeIndex  # numpy and Parquet: not on every CLI start

        self.ctx = ctx or RaylakeContext.get_current()
        self.index = index_dir if isinstance(index_dir, LakeIndex) else LakeIndex.load(index_dir)
        self.cfg = self.ctx.tools

    @property
    def lake_root(self) -> str:
        return self.index.lake_root

    @property
    def is_local(self) -> bool:
        return "://" not in self.lake_root

    def table(self, path: str) -> int:
        """The index's id of table ``path``, or a one-line refusal naming an example path."""
        if not isinstance(path, str) or not path:
            raise ToolError("a table is named by its path relative to the lake root, e.g. " + repr(self.index.paths[0]))
        t = self.index.path_id.get(path)
        if t is None:
            raise ToolError(f"no table {path!r} in the index (paths are relative to the lake root, e.g. {self.index.paths[0]!r})")
        return t

    def column(self, path: str, name: str) -> int:
        """The index's id of column ``name`` of table ``path``."""
        self.table(path)
        c = self.index.col_index.get((path, name))
        if c is None:
            names = [self.index.columns["name"][i] for i in self.index.table_columns[self.index.path_id[path]]]
            raise ToolError(f"table {path!r} has no column {name!r} (it has {', '.join(map(repr, names[:12]))})")
        return c

    def location(self, path: str) -> str:
        """Where table ``path`` lies on disk, checked again to stay inside the lake: the file may
        have become a link out of it since the index was built."""
        from raylake.lake.files import lake_location

        self.table(path)
        loc = lake_location(self.lake_root, path)
        if self.is_local:
            root = os.path.realpath(self.lake_root)
            real = os.path.realpath(loc)
            if os.path.commonpath([root, real]) != root:
                raise ToolError(f"table {path!r} now leads outside the lake: refused (re-run raylake index)")
        return loc

    def limit(self, n, name: str, ceiling: int) -> int:
        """A count argument, checked: a positive int, cut to ``ceiling``."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ToolError(f"{name} must be a positive integer, not {n!r}")
        return min(n, ceiling)

    @functools.cached_property
    def engine(self):
        """raylake's own search (``ask``), loaded on first use: it loads the relevance model."""
        from raylake.search.engine import Engine

        return Engine(self.index.index_dir, self.ctx)

    @functools.cached_property
    def db(self):
        """The one locked-down DuckDB connection of the SQL tools (:class:`raylake.tools.sql.LakeSQL`)."""
        from raylake.tools.sql import LakeSQL

        return LakeSQL(self)

    def call(self, name: str, **args) -> dict:
        """Run tool ``name`` with keyword ``args``; unknown tools and arguments are one-line errors."""
        from raylake.tools.registry import TOOLS

        spec = TOOLS.get(name)
        if spec is None:
            raise ToolError(f"no tool {name!r}; tools: {', '.join(TOOLS)}")
        return spec.run(self, args)
