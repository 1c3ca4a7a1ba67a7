"""raylake: find, join and union the tables of a data lake that answer a question.

The flat public API; see ``raylake/STRUCTURE.md`` for the package layout.
"""
__version__ = "0.1.0"
