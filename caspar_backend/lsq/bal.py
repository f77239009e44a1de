"""BAL files (Bundle Adjustment in the Large, Agarwal et al. 2010): read into a
least-squares problem, written back.

The text format (whitespace-separated; Ceres' ``BALProblem`` reads the same)::

    <num_cameras> <num_points> <num_observations>
    <camera_index> <point_index> <x> <y>            one line per observation
    <camera parameters>                             9 per camera: r (3, angle-axis), t (3),
                                                    f, k1, k2
    <point coordinates>                             3 per point

and its camera model (Snavely's, as Ceres' ``SnavelyReprojectionError``)::

    P = R(r) X + t,   p = -P_xy / P_z,   pixel = f (1 + k1 |p|^2 + k2 |p|^4) p

with pixels measured from the image centre.  Arrays (:class:`BALData`): ``cam_idx``,
``pt_idx`` int64 (K,), ``obs`` float64 (K, 2), ``cameras`` float64 (C, 9), ``points``
float64 (P, 3).  ``.bz2`` files (the form the data sets are published in) are read and
written compressed.

:class:`BALProblem` compiles one residual template (the model above: 9 camera and 3
point variable slots, the observed pixel as data) over the observations and passes
Ceres' ordering for bundle adjustment (points eliminated, cameras in the reduced
system).  Its ``x`` is BAL's parameter block order: camera ``j`` at ``9j .. 9j+8``,
point ``i`` at ``9C + 3i .. 9C + 3i+2``.  No gauge is fixed unless asked
(``constant_cameras``): as Ceres' BAL example, the Levenberg-Marquardt damping carries
the free similarity transform.
"""

from __future__ import annotations

import bz2
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import IndexOutOfRangeError, ModelError


@dataclass
class BALData:
    """Final.  See the module docstring for the arrays."""

    cam_idx: np.ndarray
    pt_idx: np.ndarray
    obs: np.ndarray
    cameras: np.ndarray
    points: np.ndarray


def _open(path, mode: str):
    path = Path(path)
    return bz2.open(path, mode + "t") if path.suffix == ".bz2" else open(path, mode)


def read_bal(path) -> BALData:
    """The :class:`BALData` of a BAL file (``.bz2`` read compressed)."""
    with _open(path, "r") as f:
        text = f.read()
    head = text.split(maxsplit=3)
    try:
        C, P, K = (int(v) for v in head[:3])
    except ValueError:
        raise ModelError(f"{path}: not a BAL file (the first line must hold the numbers of "
                         "cameras, points and observations)") from None
    values = np.array(head[3].split() if len(head) > 3 else [], dtype=float)
    need = 4 * K + 9 * C + 3 * P
    if values.size != need:
        raise ModelError(f"{path}: {values.size} numbers after the header, expected {need} "
                         f"({K} observations x 4, {C} cameras x 9, {P} points x 3)")
    o = values[:4 * K].reshape(K, 4)
    cam_idx, pt_idx = o[:, 0].astype(np.int64), o[:, 1].astype(np.int64)
    if np.any(o[:, :2] != np.stack([cam_idx, pt_idx], axis=1)):
        raise ModelError(f"{path}: an observation's camera or point index is not an integer")
    data = BALData(cam_idx, pt_idx, np.ascontiguousarray(o[:, 2:]),
                   values[4 * K:4 * K + 9 * C].reshape(C, 9).copy(),
                   values[4 * K + 9 * C:].reshape(P, 3).copy())
    _check(data, str(path))
    return data


def write_bal(path, data: BALData) -> None:
    """Write ``data`` as a BAL file (``.bz2`` compressed); values with 17 significant
    digits, so a read gives back the same doubles."""
    _check(data, str(path))
    K = len(data.cam_idx)
    lines = [f"{len(data.cameras)} {len(data.points)} {K}"]
    lines += [f"{c} {p} {x!r} {y!r}" for c, p, x, y in
              zip(data.cam_idx.tolist(), data.pt_idx.tolist(), *data.obs.T.tolist())]
    lines += [repr(v) for v in np.asarray(data.cameras, float).ravel().tolist()]
    lines += [repr(v) for v in np.asarray(data.points, float).ravel().tolist()]
    with _open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def _check(data: BALData, where: str) -> None:
    C, P = len(data.cameras), len(data.points)
    for name, idx, hi in (("camera", data.cam_idx, C), ("point", data.pt_idx, P)):
        if idx.size and (idx.min() < 0 or idx.max() >= hi):
            k = int(np.flatnonzero((idx < 0) | (idx >= hi))[0])
            raise IndexOutOfRangeError(f"{where}: observation {k} refers to {name} "
                                       f"{int(idx[k])}, outside 0..{hi - 1}")
    if data.obs.shape != (len(data.cam_idx), 2) or np.shape(data.cameras)[1:] != (9,) \
            or np.shape(data.points)[1:] != (3,):
        raise ModelError(f"{where}: arrays of the wrong shape (obs (K, 2), cameras (C, 9), "
                         "points (P, 3))")


def snavely_template():
    """``(graph, [e_x, e_y])``: var 0..8 the camera (r, t, f, k1, k2), var 9..11 the
    point, data 0, 1 the observed pixel (the module docstring's model)."""
    from ..expr import Graph
    from .colmap import rotate

    g = Graph()
    c = [g.var(i) for i in range(9)]
    X = [g.var(9 + i) for i in range(3)]
    P = [a + b for a, b in zip(rotate(g, c[0:3], X), c[3:6])]
    q = [-P[0] / P[2], -P[1] / P[2]]
    rho = q[0] * q[0] + q[1] * q[1]
    scale = c[6] * (1 + c[7] * rho + c[8] * rho * rho)
    return g, [scale * q[0] - g.data(0), scale * q[1] - g.data(1)]


class BALProblem:
    """A BAL data set as a :class:`~caspar_backend.lsq.problem.LeastSquaresProblem`
    (final); see the module docstring.  ``constant_cameras``: camera indices held
    constant; ``loss``: a robust loss per observation."""

    def __init__(self, data: BALData, constant_cameras=(), loss=None):
        from .problem import LeastSquaresProblem, ResidualBlock

        _check(data, "BAL data")
        self.data = data
        C, P = len(data.cameras), len(data.points)
        self.point_offset = 9 * C
        n = 9 * C + 3 * P
        self.x0 = np.concatenate([np.asarray(data.cameras, float).ravel(),
                                  np.asarray(data.points, float).ravel()])
        vt = np.empty((12, len(data.cam_idx)), dtype=np.int64)
        np.add(9 * data.cam_idx, np.arange(9)[:, None], out=vt[:9])
        np.add(self.point_offset + 3 * data.pt_idx, np.arange(3)[:, None], out=vt[9:])
        lbx, ubx = np.full(n, -np.inf), np.full(n, np.inf)
        const = np.asarray(list(constant_cameras), dtype=np.int64)
        if const.size and (const.min() < 0 or const.max() >= C):
            raise IndexOutOfRangeError(f"constant_cameras: a camera index outside 0..{C - 1}")
        fix = (9 * const[:, None] + np.arange(9)).ravel()
        lbx[fix] = ubx[fix] = self.x0[fix]
        g, res = snavely_template()
        block = ResidualBlock(g, res, vt, data_table=np.ascontiguousarray(data.obs.T),
                              name="reprojection", checked_indices=True)
        self.problem = LeastSquaresProblem.from_blocks(n, [block], x0=self.x0, lbx=lbx,
                                                       ubx=ubx, loss=loss)
        #: Ceres' ordering for bundle adjustment: the points eliminated onto the cameras
        self.linear_solver_ordering = [
            self.point_offset + 3 * np.arange(P)[:, None] + np.arange(3),
            9 * np.arange(C)[:, None] + np.arange(9)]

    @classmethod
    def from_file(cls, path, **kw) -> "BALProblem":
        return cls(read_bal(path), **kw)

    def solve(self, x0=None, **options):
        """Levenberg-Marquardt from ``x0`` (default: the file's values) with
        :attr:`linear_solver_ordering` unless the options give one."""
        options.setdefault("linear_solver_ordering", self.linear_solver_ordering)
        return self.problem.solve(x0=x0, **options)

    def data_at(self, x) -> BALData:
        """The data set with the cameras and points of ``x`` (observations unchanged):
        what :func:`write_bal` writes for a refined solution."""
        x = np.asarray(x, dtype=float)
        d = self.data
        return BALData(d.cam_idx.copy(), d.pt_idx.copy(), d.obs.copy(),
                       x[:self.point_offset].reshape(-1, 9).copy(),
                       x[self.point_offset:].reshape(-1, 3).copy())
