"""BAL's bundle adjustment (benchmarks/models/bundle.py's camera model) as caspar
residual blocks built with caspar's own Graph: the test problems of tests/lsq."""

from __future__ import annotations

import numpy as np

from benchmarks.models.bundle import EPS, synthetic_scene
from caspar_backend import Graph
from caspar_backend.lsq import LeastSquaresProblem, ResidualBlock


def bal_template():
    """``(graph, [e_x, e_y])``: slots var 0..8 camera (r, t, f, k1, k2), var 9..11 point,
    data 0..1 the observed pixel."""
    g = Graph()
    c = [g.var(i) for i in range(9)]
    X = [g.var(9 + i) for i in range(3)]
    u = [g.data(0), g.data(1)]
    r = c[0:3]
    theta = g.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + EPS)
    half = theta / 2
    s1 = g.sin(theta) / theta
    s2 = 0.5 * (g.sin(half) / half) ** 2
    rdotX = r[0] * X[0] + r[1] * X[1] + r[2] * X[2]
    cross = [r[1] * X[2] - r[2] * X[1], r[2] * X[0] - r[0] * X[2], r[0] * X[1] - r[1] * X[0]]
    P = [g.cos(theta) * X[i] + s1 * cross[i] + s2 * rdotX * r[i] + c[3 + i] for i in range(3)]
    q = [-P[0] / P[2], -P[1] / P[2]]
    rho = q[0] * q[0] + q[1] * q[1]
    scale = c[6] * (1 + c[7] * rho + c[8] * rho * rho)
    return g, [scale * q[0] - u[0], scale * q[1] - u[1]]


def bal_problem(n_cameras=8, n_points=60, obs_per_point=4, seed=0, loss=None):
    """``(problem, scene)``: the synthetic scene of benchmarks/models/bundle.py, camera 0
    and one coordinate of point 0 held constant (lbx = ubx), as in that model."""
    s = synthetic_scene(n_cameras, n_points, obs_per_point, window=min(24, n_cameras),
                        seed=seed)
    nc, npt = s["cams"].shape[1], s["points"].shape[1]
    g, res = bal_template()
    vt = np.vstack([9 * s["cam_idx"] + np.arange(9)[:, None],
                    9 * nc + 3 * s["pt_idx"] + np.arange(3)[:, None]])
    block = ResidualBlock(g, res, vt, data_table=s["obs"], name="reprojection")
    n = 9 * nc + 3 * npt
    x0 = np.concatenate([s["cams0"].ravel(order="F"), s["points0"].ravel(order="F")])
    lbx, ubx = np.full(n, -np.inf), np.full(n, np.inf)
    fixed = list(range(9)) + [9 * nc + s["fixed_point_coord"]]
    lbx[fixed] = ubx[fixed] = x0[fixed]
    return LeastSquaresProblem.from_blocks(n, [block], x0=x0, lbx=lbx, ubx=ubx, loss=loss), s
