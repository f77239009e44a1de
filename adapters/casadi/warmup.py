"""``caspar warmup``'s part for CasADi: the bulk SX reader's compiled loops
(:mod:`.sxscan`, :mod:`.sxwalks`; Numba, about 5 s once per machine, then loaded from
its cache), compiled by reading a small program in bulk."""
from __future__ import annotations

import time


def bulk_reader() -> float:
    """Read a small SX program in bulk (every loop compiled for the types a read passes);
    the seconds it took."""
    import casadi as ca

    from . import bulk
    from .nlp import casadi_to_model

    t0 = time.perf_counter()
    x = ca.SX.sym("x", 40)
    keep, bulk.COMPILED_MIN_INSTRUCTIONS = bulk.COMPILED_MIN_INSTRUCTIONS, 0
    try:
        casadi_to_model({"x": x, "f": ca.sumsqr(1 - x[:-1])
                         + 100 * ca.sumsqr(x[1:] - x[:-1] ** 2),
                         "g": x[1:] * x[:-1] + ca.sin(x[1:])}, bulk=True)
    finally:
        bulk.COMPILED_MIN_INSTRUCTIONS = keep
    return time.perf_counter() - t0
