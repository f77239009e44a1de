"""A COLMAP reconstruction (pycolmap ``Reconstruction``) as a bundle adjustment problem.

    min  1/2 sum_{(i, j) observed} rho( |pi_c(R_i X_j + t_i) - u_ij|^2 )

over the image poses ``(R_i, t_i)`` (COLMAP's ``cam_from_world``), the 3D points ``X_j``
and optionally the camera intrinsics, with the camera models of :data:`CAMERA_MODELS`
(COLMAP's ``ImgFromCam`` for each: ``(u, v) = (x/z, y/z)``, distortion, focal and
principal point).  Residuals are COLMAP's: projection minus observation, in pixels.

**Rotations.**  The variables of image i are ``(w_i, t_i)`` with
``R_i = Exp(w_i) R0_i``: angle-axis increments on the initial rotations R0_i (the
parameters ``p``, 9 per image, row-major), as Ceres' quaternion manifold updates
``q <- Exp(delta) q``.  ``Exp`` is Rodrigues' formula with ``theta^2 = w.w + EPS``
(:data:`EPS` = 1e-12 keeps every derivative finite at w = 0 and moves R by ~1e-13), the
half-angle form of ``(1 - cos theta) / theta^2`` free of cancellation.

**Layout of x.**  Camera parameters (COLMAP's order, camera by camera), then
``(w_i, t_i)`` per image (6 each, in the order of :attr:`ReconstructionData.image_ids`),
then the points (3 each, in the order of :attr:`ReconstructionData.point_ids`).
Constant intrinsics and constant poses are variables with ``lbx = ubx`` (the minimizer
leaves them out of its linear systems), so one compiled problem serves any choice.

**Reading** (:mod:`.colmap_read`): the reconstruction as arrays,
:class:`ReconstructionData`.
"""

from __future__ import annotations

import numpy as np

from ..errors import IndexOutOfRangeError, ModelError
from .colmap_read import CAMERA_MODELS, ReconstructionData, read_reconstruction

__all__ = ["BundleAdjustmentProblem", "CAMERA_MODELS", "ReconstructionData",
           "read_reconstruction", "rotate"]

EPS = 1e-12

# ------------------------------------------------------------------- templates
def rotate(g, w, X):
    """``Exp(w) X`` (Rodrigues, theta^2 = w.w + EPS) on node lists."""
    theta = g.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2] + EPS)
    half = theta / 2
    s1 = g.sin(theta) / theta
    s2 = 0.5 * (g.sin(half) / half) ** 2
    wx = w[0] * X[0] + w[1] * X[1] + w[2] * X[2]
    cross = [w[1] * X[2] - w[2] * X[1], w[2] * X[0] - w[0] * X[2], w[0] * X[1] - w[1] * X[0]]
    c = g.cos(theta)
    return [c * X[i] + s1 * cross[i] + s2 * wx * w[i] for i in range(3)]


def _img_from_cam(model, c, u, v):
    """COLMAP's ImgFromCam of ``model`` for normalized coordinates (u, v)."""
    if model == "SIMPLE_PINHOLE":
        f, cx, cy = c
        return f * u + cx, f * v + cy
    if model == "PINHOLE":
        fx, fy, cx, cy = c
        return fx * u + cx, fy * v + cy
    r2 = u * u + v * v
    if model == "SIMPLE_RADIAL":
        f, cx, cy, k = c
        radial = k * r2
    else:
        f, cx, cy, k1, k2 = c
        radial = k1 * r2 + k2 * r2 * r2
    return f * (u + u * radial) + cx, f * (v + v * radial) + cy


def reprojection_template(model: str, constant_intrinsics: bool = False):
    """``(graph, [e_x, e_y])`` for one camera model.  Slots: var 0..k-1 the camera
    parameters, k..k+2 the rotation increment w, k+3..k+5 t, k+6..k+8 the point X;
    param 0..8 R0 (row-major); data 0, 1 the observed pixel.  ``constant_intrinsics``:
    the camera parameters are param 9..9+k-1 instead and var slots start at w (no
    Jacobian entries are computed for constants)."""
    from ..expr import Graph

    g = Graph()
    k = len(CAMERA_MODELS[model])
    if constant_intrinsics:
        c = [g.param(9 + i) for i in range(k)]
        k = 0
    else:
        c = [g.var(i) for i in range(k)]
    w = [g.var(k + i) for i in range(3)]
    t = [g.var(k + 3 + i) for i in range(3)]
    X = [g.var(k + 6 + i) for i in range(3)]
    R0 = [g.param(i) for i in range(9)]
    Y = [R0[3 * i] * X[0] + R0[3 * i + 1] * X[1] + R0[3 * i + 2] * X[2] for i in range(3)]
    P = [a + b for a, b in zip(rotate(g, w, Y), t)]
    x, y = _img_from_cam(model, c, P[0] / P[2], P[1] / P[2])
    return g, [x - g.data(0), y - g.data(1)]


# --------------------------------------------------------------------- problem
def _rotation_matrices(quat_wxyz):
    from .rotations import quat_to_matrix

    return quat_to_matrix(quat_wxyz)


class BundleAdjustmentProblem:
    """A reconstruction's bundle adjustment as a
    :class:`~caspar_backend.lsq.problem.LeastSquaresProblem` (final).  See the module
    docstring for the layout of x.

    ``constant_intrinsics``: True (all cameras), or an iterable of camera ids held
    constant (empty: all refined); ``refine_principal_point``: False (COLMAP's default)
    holds cx, cy constant in refined cameras; ``constant_images``: image ids whose pose is held constant (the gauge: the
    caller fixes it, as with COLMAP's BundleAdjustmentConfig); ``loss``: a robust loss
    applied to each observation's 2-vector."""

    def __init__(self, data: ReconstructionData, constant_intrinsics=True,
                 constant_images=(), loss=None, refine_principal_point=False):
        from .problem import LeastSquaresProblem, ResidualBlock

        self.data = data
        C, I, Pn = len(data.camera_ids), len(data.image_ids), len(data.point_ids)
        for name, idx, hi in (("obs_image", data.obs_image, I), ("obs_point", data.obs_point, Pn),
                              ("image_camera", data.image_camera, C)):
            idx = np.asarray(idx)
            if idx.size and (idx.dtype.kind not in "iu" or int(idx.min()) < 0
                             or int(idx.max()) >= hi):
                raise IndexOutOfRangeError(f"reconstruction data: {name} holds indices "
                                           f"outside 0..{hi - 1} (or not integers)")
        sizes = np.array([len(CAMERA_MODELS[mo]) for mo in data.camera_models], dtype=np.int64)
        self.cam_offset = np.r_[0, np.cumsum(sizes)][:-1]
        self.pose_offset = int(sizes.sum())
        self.point_offset = self.pose_offset + 6 * I
        n = self.point_offset + 3 * Pn
        self.R0 = _rotation_matrices(data.quat_wxyz)
        x0 = np.concatenate([np.concatenate(data.camera_params) if C else np.zeros(0),
                             np.c_[np.zeros((I, 3)), data.translation].ravel(),
                             data.xyz.ravel()])
        lbx, ubx = np.full(n, -np.inf), np.full(n, np.inf)
        fixed_cams = (np.ones(C, bool) if constant_intrinsics is True else
                      np.isin(data.camera_ids, np.fromiter(constant_intrinsics or (), np.int64)))
        fix = [self.cam_offset[j] + np.arange(sizes[j]) for j in np.flatnonzero(fixed_cams)]
        if not refine_principal_point:
            for j in np.flatnonzero(~fixed_cams):
                names = CAMERA_MODELS[data.camera_models[j]]
                fix.append(self.cam_offset[j] + np.array([names.index("cx"), names.index("cy")]))
        const_img = np.fromiter(constant_images, dtype=np.int64)
        missing = np.setdiff1d(const_img, data.image_ids)
        if missing.size:
            raise ModelError(f"constant_images: image {int(missing[0])} is not in the "
                             "reconstruction")
        for i in np.flatnonzero(np.isin(data.image_ids, const_img)):
            fix.append(self.pose_offset + 6 * i + np.arange(6))
        if fix:
            f = np.concatenate(fix)
            lbx[f] = ubx[f] = x0[f]
        blocks = []
        # each observation's camera model, as an index into the sorted model names
        names = sorted(set(data.camera_models))
        cam_model = np.array([names.index(mo) for mo in data.camera_models], dtype=np.int64)
        obs_cam = data.image_camera[data.obs_image]
        obs_model = cam_model[obs_cam] if C else np.zeros(0, np.int64)
        self.obs_order = []
        obs_fixed = fixed_cams[obs_cam]
        # camera parameters are also parameters p[9 I + x offset] (used by the
        # templates of constant cameras: no derivatives computed for them)
        cam_param0 = 9 * I
        for code, model in enumerate(names):               # one block per camera model
            for const in (True, False):                    # ... and constant or not
                sel = np.flatnonzero((obs_model == code) & (obs_fixed == const))
                if not sel.size:
                    continue
                k = len(CAMERA_MODELS[model])
                every = sel.size == obs_model.size     # one block: no gathers
                img = data.obs_image if every else data.obs_image[sel]
                cam = data.image_camera[img]
                # the tables filled row block by row block (no stacked temporaries):
                # variables [intrinsics (refined cameras)], pose (6), point (3); parameters
                # R0 (9) [, intrinsics (constant cameras)]
                N, c0 = sel.size, 0 if const else k
                cam_slots = self.cam_offset[cam] + np.arange(k)[:, None]
                vt = np.empty((c0 + 9, N), dtype=np.int64)
                if not const:
                    vt[:k] = cam_slots
                np.add(self.pose_offset + 6 * img, np.arange(6)[:, None], out=vt[c0:c0 + 6])
                np.add(self.point_offset + 3 * (data.obs_point if every else
                                                data.obs_point[sel]),
                       np.arange(3)[:, None], out=vt[c0 + 6:])
                pt = np.empty((9 + (k if const else 0), N), dtype=np.int64)
                np.add(9 * img, np.arange(9)[:, None], out=pt[:9])
                if const:
                    np.add(cam_slots, cam_param0, out=pt[9:])
                g, res = reprojection_template(model, const)
                xy = np.asarray(data.obs_xy, dtype=float)
                dt = np.empty((2, N))
                if every:
                    dt[:] = xy.T
                else:
                    np.take(xy[:, 0], sel, out=dt[0])
                    np.take(xy[:, 1], sel, out=dt[1])
                # checked_indices: the tables are offsets of the (K,) observation indices
                # checked above
                blocks.append(ResidualBlock(g, res, vt, pt, dt,
                                            name=f"reprojection {model}",
                                            checked_indices=True))
                self.obs_order.append(sel)
        self.obs_order = np.concatenate(self.obs_order) if self.obs_order else np.zeros(0, int)
        p = np.r_[self.R0.reshape(-1), x0[:self.pose_offset]]
        self.problem = LeastSquaresProblem.from_blocks(n, blocks, x0=x0, p=p,
                                                       lbx=lbx, ubx=ubx, loss=loss)
        self.x0 = x0
        # Ceres' ordering for bundle adjustment (COLMAP's too): the points eliminated,
        # the poses and the cameras' intrinsics in the reduced system
        width = int(sizes.max()) if C else 1
        intrinsics = np.full((C, width), -1, dtype=np.int64)
        for j in range(C):
            intrinsics[j, :sizes[j]] = self.cam_offset[j] + np.arange(sizes[j])
        self.linear_solver_ordering = [
            self.point_offset + 3 * np.arange(Pn)[:, None] + np.arange(3),
            self.pose_offset + 6 * np.arange(I)[:, None] + np.arange(6),
            intrinsics]

    @classmethod
    def from_reconstruction(cls, rec, **kw) -> "BundleAdjustmentProblem":
        return cls(read_reconstruction(rec), **kw)

    def solve(self, x0=None, **options):
        """Levenberg-Marquardt from ``x0`` (default: the reconstruction's values), with
        :attr:`linear_solver_ordering` (points eliminated onto poses and intrinsics)
        unless the options give one (None: the structure found from the pattern)."""
        options.setdefault("linear_solver_ordering", self.linear_solver_ordering)
        return self.problem.solve(x0=x0, **options)

    # ------------------------------------------------------------- results
    def poses(self, x):
        """``(quat_wxyz (I, 4), translation (I, 3))`` of cam_from_world at x."""
        from .rotations import matrix_to_quat, rotvec_to_matrix

        I = len(self.data.image_ids)
        wt = x[self.pose_offset:self.point_offset].reshape(I, 6)
        return matrix_to_quat(rotvec_to_matrix(wt[:, :3]) @ self.R0), wt[:, 3:].copy()

    def points(self, x):
        return x[self.point_offset:].reshape(-1, 3).copy()

    def camera_params(self, x):
        sizes = [len(CAMERA_MODELS[mo]) for mo in self.data.camera_models]
        return [x[o:o + s].copy() for o, s in zip(self.cam_offset, sizes)]

    def x_of(self, quat_wxyz, translation, xyz, camera_params=None):
        """The x of given poses, points (and intrinsics; default: the data's): what a
        refined reconstruction (e.g. Ceres') is in this problem's variables."""
        from .rotations import matrix_to_rotvec, quat_to_matrix

        w = matrix_to_rotvec(quat_to_matrix(quat_wxyz) @ self.R0.transpose(0, 2, 1))
        cams = self.data.camera_params if camera_params is None else camera_params
        return np.concatenate([np.concatenate(cams), np.c_[w, translation].ravel(),
                               np.asarray(xyz, float).ravel()])

    def mean_reprojection_error(self, x) -> float:
        """Mean pixel distance |pi(X) - u| over the observations (COLMAP's measure)."""
        r = self.problem.residuals(x).reshape(-1, 2)
        return float(np.mean(np.sqrt(np.sum(r * r, axis=1))))

    def write(self, rec, x) -> None:
        """Write poses, points and intrinsics at x into the pycolmap ``rec``."""
        import pycolmap

        q, t = self.poses(x)
        for k, fid in enumerate(self.data.image_frame_ids):      # one per image
            rot = pycolmap.Rotation3d(q[k, [1, 2, 3, 0]])
            rec.frames[int(fid)].rig_from_world = pycolmap.Rigid3d(rot, t[k])
        pts = self.points(x)
        for k, pid in enumerate(self.data.point_ids):            # pycolmap: per object
            rec.points3D[int(pid)].xyz = pts[k]
        for cid, prm in zip(self.data.camera_ids, self.camera_params(x)):
            rec.cameras[int(cid)].params = prm


