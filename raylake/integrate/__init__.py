"""Many-question integration (EcoTable): table identification, the join likelihood graph,
Steiner-tree validation with a global cache, and one fused table per question."""
from raylake.integrate.batch import integrate, plan_steps
from raylake.integrate.identify import Identified, TableIdentifier
from raylake.integrate.judge import OfflineJudge, Verdict
from raylake.integrate.likelihood import edge_key, join_p, updated_graph
from raylake.integrate.steiner import SteinerTree, steiner_tree
from raylake.integrate.validate import EdgeCache, Validation, validate, validate_each

__all__ = ["EdgeCache", "Identified", "OfflineJudge", "SteinerTree", "TableIdentifier", "Validation", "Verdict",
           "edge_key", "integrate", "join_p", "plan_steps", "steiner_tree", "updated_graph", "validate", "validate_each"]
