"""``caspar warmup``'s part for CasADi: the bulk SX reader's compiled loops
(:mod:`.sxscan`, :mod:`.sxwalks`; Numba, about 5 s once per machine, then loaded from
its cache), compiled by reading a small program in bulk, and its C++ libraries (the
instruction reader :mod:`.sxexport`, the loops :mod:`.sxwalks_native` and
:mod:`.sxkernels_native`: a few seconds once per machine)."""
from __future__ import annotations

import time


def bulk_reader() -> float:
    """Read a small SX program in bulk by the compiled loops (each compiled for the
    types a read passes); the seconds it took."""
    import casadi as ca

    from .bulk import read_bulk
    from .nlp import problem_function
    from . import sxexport, sxkernels_native, sxwalks_native

    t0 = time.perf_counter()
    sxexport.library()           # None without a C++ compiler: the text path then
    sxwalks_native.library()     # likewise: the Numba loops or NumPy passes
    sxkernels_native.library()   # likewise: the NumPy passes
    x = ca.SX.sym("x", 40)
    f = ca.sumsqr(1 - x[:-1]) + 100 * ca.sumsqr(x[1:] - x[:-1] ** 2)
    g = x[1:] * x[:-1] + ca.sin(x[1:])
    if read_bulk(problem_function({"x": x, "f": f, "g": g}), f, g, compiled=True) is None:
        raise RuntimeError("the bulk SX reader did not take its warm-up program")
    return time.perf_counter() - t0
