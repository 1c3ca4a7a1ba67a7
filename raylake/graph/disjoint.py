"""Disjoint sets (union-find): shard clusters, union-aligned columns, question groups.

Path halving keeps ``find`` near-constant; ``union(a, b)`` keeps ``a``'s root, so the caller
decides which item names a merged set (a shard cluster after its first table, a column
class after the column of the earliest table). Only merged items are stored, so
:attr:`parent` lists exactly the items that are not their set's root.
"""
from __future__ import annotations

from collections.abc import Hashable


class DisjointSets:
    """Union-find over hashable items; an item never passed to :meth:`union` is its own set."""

    def __init__(self):
        self.parent: dict[Hashable, Hashable] = {}

    def find(self, x):
        """The root of ``x``'s set."""
        parent = self.parent
        while (p := parent.get(x, x)) != x:
            g = parent.get(p, p)
            parent[x] = g  # halving: point x at its grandparent
            x = g
        return x

    def union(self, a, b):
        """Merge the sets of ``a`` and ``b`` under ``a``'s root; returns that root."""
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra
        return ra
