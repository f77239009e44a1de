"""B instances one after the other in one kernel call: the CPU batch without Python per
instance (a GPU runs the same loop as its grid)."""
from ._jit import _f, _i, kernel
from .ipm import solve_instance
from .slots import F_P, F_X, I_SIZES, SZ_N


@kernel
def solve_many(Fb, FO, Ib, IO, O, X0, P, lbx, ubx, lbg, ubg, status, iters, Xout, fout,
               Hist, Out):
    """B instances one after the other in one call (the CPU batch: no Python per
    instance): row b of ``X0`` (B, n) and ``P`` (B, n_params) -> ``status[b]``,
    ``iters[b]``, ``Xout[b]`` (B, n), ``fout[b]``, as :func:`solve_instance`.  On a GPU
    this loop is the grid: one thread per instance, each with its own float workspace."""
    n = _i(Ib, IO, I_SIZES)[SZ_N]
    p = _f(Fb, FO, F_P)
    x = _f(Fb, FO, F_X)
    for b in range(X0.shape[0]):
        for j in range(p.shape[0]):
            p[j] = P[b, j]
        st, it, f = solve_instance(Fb, FO, Ib, IO, O, X0[b], lbx, ubx, lbg, ubg, Hist, Out)
        status[b] = st
        iters[b] = it
        fout[b] = f
        for j in range(n):
            Xout[b, j] = x[j]
