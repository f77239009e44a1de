"""Rotations as arrays: unit quaternions, matrices and angle-axis vectors.

Batched over a leading axis, NumPy only (scipy.spatial costs ~1 s to import, more than
a bundle adjustment of 10^4 observations).  Quaternions are ``(w, x, y, z)`` (COLMAP's
files; pycolmap's ``Rotation3d`` takes ``(x, y, z, w)``), matrices act on column
vectors, angle-axis ``w`` is ``theta * axis``.
"""

from __future__ import annotations

import numpy as np


def quat_to_matrix(q) -> np.ndarray:
    """(K, 4) wxyz -> (K, 3, 3); q is normalized first."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], axis=1)


def matrix_to_quat(R) -> np.ndarray:
    """(K, 3, 3) -> (K, 4) wxyz with w >= 0 (Shepperd's method: the largest of the four
    squared components decides the formula, so no division by a small number)."""
    R = np.asarray(R, dtype=float)
    tr = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]
    cand = np.stack([tr, R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]], axis=1)
    k = np.argmax(cand, axis=1)
    q = np.empty((len(R), 4))
    # case w largest
    s = np.sqrt(np.maximum(1.0 + tr, 1e-300)) * 2
    qw = np.stack([0.25 * s, (R[:, 2, 1] - R[:, 1, 2]) / s, (R[:, 0, 2] - R[:, 2, 0]) / s,
                   (R[:, 1, 0] - R[:, 0, 1]) / s], 1)
    s = np.sqrt(np.maximum(1.0 + R[:, 0, 0] - R[:, 1, 1] - R[:, 2, 2], 1e-300)) * 2
    qx = np.stack([(R[:, 2, 1] - R[:, 1, 2]) / s, 0.25 * s, (R[:, 0, 1] + R[:, 1, 0]) / s,
                   (R[:, 0, 2] + R[:, 2, 0]) / s], 1)
    s = np.sqrt(np.maximum(1.0 + R[:, 1, 1] - R[:, 0, 0] - R[:, 2, 2], 1e-300)) * 2
    qy = np.stack([(R[:, 0, 2] - R[:, 2, 0]) / s, (R[:, 0, 1] + R[:, 1, 0]) / s, 0.25 * s,
                   (R[:, 1, 2] + R[:, 2, 1]) / s], 1)
    s = np.sqrt(np.maximum(1.0 + R[:, 2, 2] - R[:, 0, 0] - R[:, 1, 1], 1e-300)) * 2
    qz = np.stack([(R[:, 1, 0] - R[:, 0, 1]) / s, (R[:, 0, 2] + R[:, 2, 0]) / s,
                   (R[:, 1, 2] + R[:, 2, 1]) / s, 0.25 * s], 1)
    for j, qj in enumerate((qw, qx, qy, qz)):
        q[k == j] = qj[k == j]
    q *= np.where(q[:, :1] < 0, -1.0, 1.0)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def rotvec_to_matrix(w) -> np.ndarray:
    """(K, 3) angle-axis -> (K, 3, 3), Rodrigues' formula (series below 1e-8 rad)."""
    w = np.asarray(w, dtype=float)
    th2 = np.sum(w * w, axis=1)
    th = np.sqrt(th2)
    small = th < 1e-8
    ths = np.where(small, 1.0, th)
    a = np.where(small, 1.0 - th2 / 6.0, np.sin(ths) / ths)
    b = np.where(small, 0.5 - th2 / 24.0, (1.0 - np.cos(ths)) / (ths * ths))
    K = np.zeros((len(w), 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = w[:, 2], -w[:, 1], w[:, 0]
    return np.eye(3) + a[:, None, None] * K + b[:, None, None] * (K @ K)


def matrix_to_rotvec(R) -> np.ndarray:
    """(K, 3, 3) -> (K, 3) angle-axis with angle in [0, pi], through the quaternion
    (stable at every angle): ``w = 2 atan2(|v|, q_w) v / |v|``."""
    q = matrix_to_quat(R)
    v = q[:, 1:]
    n = np.linalg.norm(v, axis=1)
    ang = 2.0 * np.arctan2(n, q[:, 0])
    f = np.where(n < 1e-12, 2.0 / np.maximum(q[:, 0], 1e-300), ang / np.where(n < 1e-12, 1.0, n))
    return v * f[:, None]
