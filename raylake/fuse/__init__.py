"""Fusion: execute a plan (unions through column mappings, joins on edge keys) in DuckDB."""
