"""Synthetic bundle adjustment: a large, sparse nonlinear least-squares problem.

Cameras ``j = 0..nc-1`` carry BAL's 9 parameters (Snavely's model, the layout of
the Bundle Adjustment in the Large data sets)

    c_j = (r_j, t_j, f_j, k1_j, k2_j),   r_j in R^3 angle-axis rotation,
                                         t_j in R^3 translation, f_j focal length,
                                         k1_j, k2_j radial distortion,

points ``i = 0..np-1`` are ``X_i in R^3``, and an observation ``(i, j, u_ij)`` is
the pixel ``u_ij in R^2`` at which camera ``j`` sees point ``i``.  With

    P     = R(r_j) X_i + t_j                      (the point in camera coordinates)
    q     = -P_xy / P_z                           (BAL's camera looks along -z)
    rho   = |q|^2
    pi(P) = f_j (1 + k1_j rho + k2_j rho^2) q

the residual of an observation is ``e_ij = pi(P) - u_ij in R^2`` and the problem is

    min_{c, X}  1/2 sum_{(i,j,u) in obs} |e_ij|^2,      subject only to the gauge
                                                        bounds below (lbx = ubx).

Rotation (Rodrigues), with ``theta^2 = r.r + EPS`` so ``theta >= sqrt(EPS) > 0``
and every derivative is finite (``EPS = 1e-12`` moves R by ~1e-13):

    R(r) X = cos(theta) X + s1 (r x X) + s2 (r.X) r,
    s1 = sin(theta)/theta,   s2 = (1 - cos theta)/theta^2 = 1/2 (sin(theta/2)/(theta/2))^2,

the half-angle form of ``s2`` has no cancellation at small ``theta``.

**CasADi structure.** One SX Function ``ba_cost(c, X, u) = 1/2 |e|^2`` (9 + 3 + 2
inputs, one output) is applied to all observations with ``Function.map``; its
arguments are the camera and point columns gathered per observation
(``C[:, cam]``, ``X[:, pt]``) and the observations themselves, which are the NLP's
parameters ``p`` (so new data needs no recompilation).  The objective is the sum of
the map's outputs, i.e. linear in them: caspar's CasADi adapter compiles the whole
objective into one template (one :class:`~caspar_backend.blocks.TemplateBlock`).

Decision vector ``x = (vec C, vec X)``, column-major: camera ``j``'s parameters at
``9j .. 9j+8``, point ``i``'s coordinates at ``9 nc + 3i .. 9 nc + 3i + 2``;
``p = vec U`` with ``U`` (2, n_obs), observation ``k``'s pixel at ``2k, 2k+1``.

**Synthetic data** (deterministic in ``seed``).  Points uniform in a ball of radius
1.5 about the origin; cameras on a circle of radius 4 (heights in [-0.5, 0.5])
looking at the origin, focal 500 (+-5 %), k1 in [-0.1, 0], k2 in [0, 0.02].  Each
point gets a home angle and is seen by ``obs_per_point`` distinct cameras drawn from
the ``window`` cameras nearest that angle on the circle (so the camera co-visibility
graph stays banded as ``nc`` grows).  Observations are the exact projections plus
Gaussian noise of ``noise`` pixels.  Initial guess: the truth plus Gaussian
perturbations (standard deviations: rotation 0.01 rad and translation 0.05 per
component, focal 2 %, points 0.05 per coordinate), k1 = k2 = 0.

**IPOPT's Hessian.** :func:`bundle_adjustment_hessian` gives ``casadi.nlpsol`` the
exact Hessian of the Lagrangian (its ``hess_lag`` option), assembled from one mapped
12 x 12 block per observation.  CasADi's own Hessian of this objective (sparse AD
with graph colouring of the SX expression; the camera rows are dense: 9 x co-visible
cameras + 3 x points seen) took 40 s and 1 GB to build at 4000 observations; the
assembled one 0.2 s there and ~50 s at 4e5 observations (mostly handing CasADi the
index lists).

**Gauge.** The projections are invariant under a similarity transform of the scene
(7 degrees of freedom).  Camera 0's nine parameters are fixed at the truth (rotation,
translation: 6 degrees) and one coordinate of point 0 -- the one along which it lies
farthest from camera 0's centre -- fixes the scale.  The remaining problem has an
isolated minimiser, so IPOPT and caspar converge to the same objective.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-12          # theta^2 = r.r + EPS
N_CAM_PARAMS = 9
CAMERA_RADIUS = 4.0
CLOUD_RADIUS = 1.5


# --------------------------------------------------------------------- the model
def rotate(r, X):
    """Rodrigues' formula ``R(r) X`` for 3-vectors of CasADi symbols or NumPy arrays."""
    import casadi as ca

    theta = ca.sqrt(ca.dot(r, r) + EPS)
    half = theta / 2
    s1 = ca.sin(theta) / theta
    s2 = 0.5 * (ca.sin(half) / half) ** 2
    return ca.cos(theta) * X + s1 * ca.cross(r, X) + s2 * ca.dot(r, X) * r


def project(c, X):
    """BAL's projection ``pi(R(r) X + t)`` of point ``X`` by camera ``c`` (9-vector)."""
    P = rotate(c[0:3], X) + c[3:6]
    q = -P[0:2] / P[2]
    rho = q[0] ** 2 + q[1] ** 2
    return c[6] * (1 + c[7] * rho + c[8] * rho ** 2) * q


def observation_functions():
    """``(residual, cost)``: CasADi SX Functions of ``(c[9], X[3], u[2])``, the residual
    ``e = pi(R X + t) - u`` (2) and ``1/2 |e|^2`` (1)."""
    import casadi as ca

    c = ca.SX.sym("c", N_CAM_PARAMS)
    X = ca.SX.sym("X", 3)
    u = ca.SX.sym("u", 2)
    e = project(c, X) - u
    residual = ca.Function("ba_residual", [c, X, u], [e], ["c", "X", "u"], ["e"])
    cost = ca.Function("ba_cost", [c, X, u], [0.5 * ca.dot(e, e)], ["c", "X", "u"], ["cost"])
    return residual, cost


# --------------------------------------------------------------------- the data
def _look_at(centre):
    """BAL rotation (world -> camera, rows x, y, z) of a camera at ``centre`` whose
    -z axis points at the origin; returns its angle-axis vector and translation."""
    from scipy.spatial.transform import Rotation

    z = centre / np.linalg.norm(centre)             # -z looks at the origin
    x = np.cross([0.0, 0.0, 1.0], z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    R = np.vstack([x, y, z])
    return Rotation.from_matrix(R).as_rotvec(), -R @ centre


def _project_np(cams, pts):
    """NumPy version of :func:`project`, columnwise: cams (9, K), pts (3, K) -> (2, K)."""
    r, t = cams[0:3], cams[3:6]
    theta = np.sqrt(np.sum(r * r, axis=0) + EPS)
    s1 = np.sin(theta) / theta
    s2 = 0.5 * (np.sin(theta / 2) / (theta / 2)) ** 2
    P = (np.cos(theta) * pts + s1 * np.cross(r, pts, axis=0)
         + s2 * np.sum(r * pts, axis=0) * r + t)
    q = -P[0:2] / P[2]
    rho = np.sum(q * q, axis=0)
    return cams[6] * (1 + cams[7] * rho + cams[8] * rho ** 2) * q


def synthetic_scene(n_cameras: int, n_points: int, obs_per_point: int = 4, window: int = 24,
                    noise: float = 0.5, seed: int = 0) -> dict:
    """Ground truth, observations and initial guess (see the module docstring).

    Returns a dict: ``cams`` (9, nc) and ``points`` (3, np) the truth, ``cam_idx``,
    ``pt_idx`` (n_obs,) int64 observation -> camera / point, ``obs`` (2, n_obs) the
    noisy pixels, ``cams0``, ``points0`` the initial guess, ``fixed_point_coord``
    (0, 1 or 2) the coordinate of point 0 that fixes the scale.
    """
    k = int(obs_per_point)
    if n_cameras < 3 or n_points < 1 or k < 2 or k > min(window, n_cameras):
        raise ValueError("need n_cameras >= 3, n_points >= 1 and "
                         "2 <= obs_per_point <= min(window, n_cameras)")
    rng = np.random.default_rng(seed)
    nc, npt = int(n_cameras), int(n_points)

    ang = 2 * np.pi * np.arange(nc) / nc
    centres = np.column_stack([CAMERA_RADIUS * np.cos(ang), CAMERA_RADIUS * np.sin(ang),
                               rng.uniform(-0.5, 0.5, nc)])
    cams = np.empty((N_CAM_PARAMS, nc))
    for j in range(nc):
        cams[0:3, j], cams[3:6, j] = _look_at(centres[j])
    cams[6] = 500.0 * rng.uniform(0.95, 1.05, nc)
    cams[7] = rng.uniform(-0.1, 0.0, nc)
    cams[8] = rng.uniform(0.0, 0.02, nc)

    d = rng.standard_normal((3, npt))
    d /= np.linalg.norm(d, axis=0)
    points = d * CLOUD_RADIUS * rng.uniform(0, 1, npt) ** (1 / 3)

    # observations: each point seen by k distinct cameras of the `window` nearest
    w = min(window, nc)
    home = rng.integers(0, nc, npt)
    pick = np.argsort(rng.random((npt, w)), axis=1)[:, :k]       # k distinct of w
    cam_idx = ((home[:, None] - w // 2 + pick) % nc).ravel()
    pt_idx = np.repeat(np.arange(npt), k)
    seen = np.bincount(cam_idx, minlength=nc)
    if seen.min() < 6:
        raise ValueError(f"camera {int(seen.argmin())} sees {int(seen.min())} points; "
                         "raise n_points * obs_per_point / n_cameras")
    obs = _project_np(cams[:, cam_idx], points[:, pt_idx])
    obs += noise * rng.standard_normal(obs.shape)

    cams0 = cams.copy()
    cams0[0:3] += 0.01 * rng.standard_normal((3, nc))
    cams0[3:6] += 0.05 * rng.standard_normal((3, nc))
    cams0[6] *= 1 + 0.02 * rng.standard_normal(nc)
    cams0[7:9] = 0.0
    points0 = points + 0.05 * rng.standard_normal((3, npt))
    cams0[:, 0] = cams[:, 0]
    fixed = int(np.argmax(np.abs(points[:, 0] - centres[0])))
    points0[fixed, 0] = points[fixed, 0]
    return dict(cams=cams, points=points, cam_idx=cam_idx, pt_idx=pt_idx, obs=obs,
                cams0=cams0, points0=points0, fixed_point_coord=fixed)


# --------------------------------------------------------------------- the NLP
def bundle_adjustment(n_cameras: int, n_points: int, obs_per_point: int = 4, window: int = 24,
                      noise: float = 0.5, seed: int = 0):
    """The synthetic bundle-adjustment NLP as ``(nlp, args)``.

    ``nlp``: the ``casadi.nlpsol`` problem dict (``x``, ``p``, ``f``, ``g`` empty);
    ``args``: ``x0, lbx, ubx, lbg, ubg, p`` (float64 arrays; ``lbx = ubx`` on the gauge
    variables, infinite elsewhere).  The same arguments to :func:`synthetic_scene` give
    the scene behind it.
    n = 9 nc + 3 np (10 fixed), m = 0, n_p = 2 n_obs with n_obs = np * obs_per_point.
    """
    import casadi as ca

    s = synthetic_scene(n_cameras, n_points, obs_per_point, window, noise, seed)
    nc, npt, n_obs = s["cams"].shape[1], s["points"].shape[1], s["cam_idx"].size
    C = ca.MX.sym("C", N_CAM_PARAMS, nc)
    X = ca.MX.sym("X", 3, npt)
    U = ca.MX.sym("U", 2, n_obs)
    _, cost = observation_functions()
    costs = cost.map(n_obs)(C[:, s["cam_idx"].tolist()], X[:, s["pt_idx"].tolist()], U)
    nlp = {"x": ca.veccat(C, X), "p": ca.vec(U), "f": ca.sum2(costs), "g": ca.MX(0, 1)}

    n = N_CAM_PARAMS * nc + 3 * npt
    x0 = np.concatenate([s["cams0"].ravel(order="F"), s["points0"].ravel(order="F")])
    lbx, ubx = np.full(n, -np.inf), np.full(n, np.inf)
    fixed = list(range(N_CAM_PARAMS)) + [N_CAM_PARAMS * nc + s["fixed_point_coord"]]
    lbx[fixed] = ubx[fixed] = x0[fixed]
    return nlp, dict(x0=x0, lbx=lbx, ubx=ubx, lbg=np.zeros(0), ubg=np.zeros(0),
                     p=s["obs"].ravel(order="F"))


def bundle_adjustment_hessian(n_cameras: int, n_points: int, obs_per_point: int = 4,
                              window: int = 24, noise: float = 0.5, seed: int = 0):
    """The exact Hessian of the Lagrangian of :func:`bundle_adjustment` (same arguments)
    as the ``hess_lag`` Function ``casadi.nlpsol`` accepts:

        (x, p, lam_f, lam_g) -> lam_f * triu(grad^2 f(x; p)),   n x n, upper triangle.

    Observation ``k`` touches ``z_k = (c_j, X_i)`` (12 entries); its block
    ``lam_f * grad^2_z 1/2 |e|^2`` (the 78 entries with row <= col) comes from one
    mapped SX Function, and the blocks are summed into the global pattern by a
    constant 0/1 matrix ``A`` (nnz(H) x 78 n_obs): ``nz(H) = A vec(blocks)``.
    """
    import casadi as ca
    import scipy.sparse as sp

    s = synthetic_scene(n_cameras, n_points, obs_per_point, window, noise, seed)
    nc, npt, n_obs = s["cams"].shape[1], s["points"].shape[1], s["cam_idx"].size
    n = N_CAM_PARAMS * nc + 3 * npt
    _, cost = observation_functions()
    z = ca.SX.sym("z", N_CAM_PARAMS + 3)
    u = ca.SX.sym("u", 2)
    lam_f = ca.SX.sym("lam_f")
    H_loc = ca.hessian(cost(z[:N_CAM_PARAMS], z[N_CAM_PARAMS:], u), z)[0]
    iu, ju = np.triu_indices(N_CAM_PARAMS + 3)
    block = ca.Function("ba_hess_block", [z, u, lam_f],
                        [lam_f * ca.vertcat(*[H_loc[int(a), int(b)] for a, b in zip(iu, ju)])])

    glob = np.vstack([N_CAM_PARAMS * s["cam_idx"] + np.arange(N_CAM_PARAMS)[:, None],
                      N_CAM_PARAMS * nc + 3 * s["pt_idx"] + np.arange(3)[:, None]])
    a, b = glob[iu], glob[ju]                                      # (78, n_obs)
    key = (np.maximum(a, b) * n + np.minimum(a, b)).ravel(order="F")   # col * n + row
    uk, slot = np.unique(key, return_inverse=True)                 # column-major order
    A = sp.csc_matrix((np.ones(key.size), (slot.ravel(), np.arange(key.size))),
                      shape=(uk.size, key.size))
    pattern = ca.Sparsity.triplet(n, n, (uk % n).tolist(), (uk // n).tolist())
    A_dm = ca.DM(ca.Sparsity(A.shape[0], A.shape[1], A.indptr.tolist(), A.indices.tolist()),
                 A.data)

    x = ca.MX.sym("x", n)
    p = ca.MX.sym("p", 2 * n_obs)
    lf = ca.MX.sym("lam_f")
    lg = ca.MX.sym("lam_g", 0)
    Z = ca.vertcat(ca.reshape(x[:N_CAM_PARAMS * nc], N_CAM_PARAMS, nc)[:, s["cam_idx"].tolist()],
                   ca.reshape(x[N_CAM_PARAMS * nc:], 3, npt)[:, s["pt_idx"].tolist()])
    blocks = block.map(n_obs)(Z, ca.reshape(p, 2, n_obs), lf)
    H = ca.MX(pattern, ca.mtimes(A_dm, ca.vec(blocks)))
    return ca.Function("nlp_hess_l", [x, p, lf, lg], [H],
                       ["x", "p", "lam_f", "lam_g"], ["hess_gamma_x_x"])
