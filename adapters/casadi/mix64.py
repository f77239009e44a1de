"""The 64-bit mixing of the bulk SX reader's hashes: splitmix64's finalizer ``fmix``
(uint64, wrapping), written once for NumPy arrays and scalars alike (:mod:`.sxwalks`
compiles the same function with Numba), and the multipliers of a node's hash
(:func:`.sxwalks.hash_trees`)."""
from __future__ import annotations

import numpy as np

M1 = np.uint64(0x9E3779B97F4A7C15)
M2 = np.uint64(0xC2B2AE3D27D4EB4F)
M3 = np.uint64(0x165667B19E3779F9)


def fmix(x):
    """splitmix64's finalizer (uint64 arrays or scalars, wrapping)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))

