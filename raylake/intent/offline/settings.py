"""The offline extractor's tuned weights: one :class:`Settings` every part of it reads.

``OfflineExtractor(index, **settings)`` takes any of these by keyword; the parts
(:mod:`.spans`, :mod:`.matching`, :mod:`.ranking`, :mod:`.joint`, :mod:`.assemble`) each get
the one object, so a weight has one name and one default. The defaults are the best of the
values tried on the Spider tuning questions (``python -m bench.intent_bench``); the figures
are in the package docstring (:mod:`raylake.intent.offline`) and docs/intent_history.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from raylake.config import RaylakeContext

# a mention this specific or less is a word every schema has ('name', 'id'): see Matcher.specificity
GENERIC_SPEC = 0.3
# weight of a header's cosine, against its lexical match, in the order of an attribute's columns
SEMANTIC_ORDER = 0.9
# weight of a header of a table the tree might be instead of its chosen one (a shard it unions
# with; for a word every schema has, its next candidates too), against the chosen table's own
ALTERNATIVE_ORDER = 0.75


@dataclass
class Settings:
    """The offline extractor's weights and limits (see the module docstring)."""

    top_k: int = 8  # candidate columns kept per mention (× 4)
    min_attr_score: float = 0.55  # an attribute mention needs a header at least this similar
    max_bridge_hops: int = 1  # unnamed tables allowed between two named entities
    min_join: float | None = None  # weakest lake join link a join may use (None: the context's search.min_join)
    coherence: float = 0.5  # λ: weight of the chosen tables' join-path cost (their MST) in the joint choice
    joint_context: float = 0.1  # μ: credit per attribute/value mention the chosen tables explain
    joint_width: int = 6  # candidate tables per entity in the joint choice
    max_joint: int = 3000  # most table sets tried (the width shrinks with many entities)
    max_cost: float = 1.5  # path cost of two tables the lake does not connect within 2 links
    near_context: float = 0.15  # μ of the neighbourhood context in an entity's table ranking
    max_context: float = 0.45  # cap of that context bonus (a table's own name counts most)
    near_scale: float = 0.15  # τ: closeness = exp(−cost/τ); gold table pairs cost ~0.15, random ones ~0.5
    near_cols: float = 0.4  # weight of closeness to the chosen tables when ranking an attribute's columns
    near_cache: int = 4096  # closeness rows kept (LRU): one float32 per lake table each
    held_floor: float = 0.7  # own score of a table that holds a precise attribute/value but is not named
    distinct: float = 0.2  # cost of resolving two entity mentions to one table (a question names two things)
    question_prior: float = 0.4  # ρ: weight of the whole question's cosine with a table's text
    min_bridge: float = 0.84  # weakest link into or out of a bridge table (see joins.bridge_ok)
    joint_near: int = 3  # candidates per entity beyond joint_width: ranked lower, but close to another entity's top 2 tables
    joint_near_min: float = 0.15  # closeness such a table needs (exp(−cost/τ): one link of score ≈ 0.75)
    neighbour_col: float = 0.8  # header match an attribute word needs to bring in the table holding it ...
    neighbour_near: float = 0.1  # ... with match × closeness to a chosen table at least this
    header_of_other: float = 0.9  # an entity word this close to a header of another chosen table is its attribute
    stray_match: float = 0.9  # an attribute outside every tree's tables needs a header this close (see forest.drop_strays)
    sole_match: float = 0.99  # a header this close, in one table only, brings that table in (see Assembler._sole_holder)
    runners_up: int = 2  # a tree's tables after the chosen one taken from the joint choice's max-marginals
    neighbour_prior: float = 0.8  # ν: weight of the question's cosine with a table's join neighbours' texts (closeness-weighted mean)
    neighbour_top: int = 32  # candidates per entity that get that term (best on the others; bounds Dijkstras)
    generic_holds: float = 0.1  # κ: of the tables an entity word names, the one holding its generic words ('name') (see Ranker.holds)
    holds_top: int = 30  # an entity's (or a grounded tree's) best-ranked tables read for that

    def __post_init__(self):
        if self.min_join is None:
            self.min_join = RaylakeContext.get_current().search.min_join
