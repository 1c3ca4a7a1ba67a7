"""Indexing a lake on Ray: profiles, MinHash, embeddings, join/union edges, METIS parts, atomic store."""
