"""``caspar warmup``'s part for least squares: the compiled loops of the Schur structure
(:mod:`.pair_sort`) and of DENSE_SCHUR's elimination (:mod:`.schur_dense`; Numba, a few
seconds once per machine, then loaded from its cache), compiled by one small solve that
passes through all of them: structure found from the pattern, two threads."""
from __future__ import annotations

import time

import numpy as np


def compiled_loops() -> float:
    """Solve a small points-and-cameras problem (2-D points seen from 2-D offsets) with
    the structure detected and DENSE_SCHUR on two threads; the seconds it took."""
    from ..expr import Graph
    from .problem import LeastSquaresProblem, ResidualBlock

    t0 = time.perf_counter()
    g = Graph()
    point, camera = [g.var(0), g.var(1)], [g.var(2), g.var(3)]
    obs = [g.data(0), g.data(1)]
    # r = (point - camera)^2-ish: nonlinear so that LM iterates
    res = [(point[k] - camera[k]) * (1 + 0.1 * point[k] * point[k]) - obs[k] for k in range(2)]
    rng = np.random.default_rng(0)
    n_pts, n_cam, per = 30, 4, 3
    cams = np.array([rng.choice(n_cam, per, replace=False) for _ in range(n_pts)]).ravel()
    pts = np.repeat(np.arange(n_pts), per)
    vt = np.vstack([2 * pts, 2 * pts + 1, 2 * n_pts + 2 * cams, 2 * n_pts + 2 * cams + 1])
    n = 2 * (n_pts + n_cam)
    x0 = rng.standard_normal(n)
    lbx, ubx = np.full(n, -np.inf), np.full(n, np.inf)
    lbx[2 * n_pts:2 * n_pts + 2] = ubx[2 * n_pts:2 * n_pts + 2] = x0[2 * n_pts:2 * n_pts + 2]
    block = ResidualBlock(g, res, vt, data_table=rng.standard_normal((2, vt.shape[1])))
    P = LeastSquaresProblem.from_blocks(n, [block], x0=x0, lbx=lbx, ubx=ubx)
    s = P.solve(linear_solver_type="DENSE_SCHUR", num_threads=2)
    if s.linear_solver_type != "DENSE_SCHUR" or not np.all(np.isfinite(s.x)):
        raise RuntimeError("the least-squares warm-up solve did not run its compiled loops")
    return time.perf_counter() - t0
