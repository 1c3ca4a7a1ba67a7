"""Numba kernels of raylake, installed as ``raylake.kernels``.

- :mod:`.minhash` — MinHash signatures of many value sets in one pass (datasketch-compatible).
- :mod:`.cholesky` — rank-one Cholesky and log-determinant updates for the IGMS reward.
"""
