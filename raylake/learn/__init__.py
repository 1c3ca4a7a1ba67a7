"""Learning the search guide: self-generated trajectories (GRAFT Alg. 1-2) and IQL value learning."""
