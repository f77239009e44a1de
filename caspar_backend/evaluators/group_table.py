"""The group table of a generated problem module (``kernels/caspar_groups.cuh``).

One record per pattern group, 64 bytes, in the order the dispatch kernel's ``switch``
names the groups:

====================  =========  ======  ===============================================
field                 type       offset  meaning
====================  =========  ======  ===============================================
``vt``, ``pt``        uint64     0, 8    device pointers: variable / parameter tables
``dt``, ``dst``       uint64     16, 24  device pointers: data table, destinations
``jac_base``          int64      32      first Jacobian / gradient slot of the group
``hess_base``         int64      40      first Hessian slot of the group
``N``                 int32      48      instances
``block0``            int32      52      first block of the group in the launch
``direct``            int32      56      1: values to ``out``; 0: to the term buffer
``pad``               int32      60
====================  =========  ======  ===============================================

Group k runs on blocks ``[block0_k, block0_k + ceil(N_k / threads))``; the launch has
``sum_k max(1, ceil(N_k / threads))`` blocks (a group without instances keeps its entry,
so that entry k is the ``switch``'s case k, and one idle block).
"""

from __future__ import annotations

import numpy as np

GROUP_DTYPE = np.dtype({
    "names": ["vt", "pt", "dt", "dst", "jac_base", "hess_base", "N", "block0", "direct", "pad"],
    "formats": [np.uint64] * 4 + [np.int64] * 2 + [np.int32] * 4,
    "offsets": [0, 8, 16, 24, 32, 40, 48, 52, 56, 60],
    "itemsize": 64,
})


def blocks(n: int, threads: int) -> int:
    """Blocks of ``threads`` threads for ``n`` instances (at least one)."""
    return max(1, (n + threads - 1) // threads)


def group_table(entries, threads: int):
    """(records, total blocks) for ``entries``: dicts with the device arrays ``vt``,
    ``pt``, ``dt``, ``dst`` (CuPy) and the ints ``N``, ``jac_base``, ``hess_base``,
    ``direct``.  The records are a host ``GROUP_DTYPE`` array."""
    rec = np.zeros(len(entries), GROUP_DTYPE)
    block0 = 0
    for r, e in zip(rec, entries):
        for name in ("vt", "pt", "dt", "dst"):
            r[name] = e[name].data.ptr
        r["jac_base"], r["hess_base"] = e["jac_base"], e["hess_base"]
        r["N"], r["block0"], r["direct"] = e["N"], block0, e["direct"]
        block0 += blocks(e["N"], threads)
    return rec, block0
