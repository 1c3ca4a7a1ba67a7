"""The lake graph G_D at table level: join and union adjacency, closures, paths, parts."""
from raylake.graph.disjoint import DisjointSets
from raylake.graph.lake_graph import JoinLink, LakeGraph, UnionLink
from raylake.graph.parts import PartitionedGraph, PartServer

__all__ = ["DisjointSets", "JoinLink", "LakeGraph", "PartServer", "PartitionedGraph", "UnionLink"]
