"""Fusion: execute a plan (unions through column mappings, joins on edge keys) in DuckDB."""
from raylake.fuse.fuse import Fused, fuse, read_lake_table

__all__ = ["Fused", "fuse", "read_lake_table"]
