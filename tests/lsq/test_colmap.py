"""A pycolmap reconstruction as a caspar bundle adjustment: residuals against pycolmap's
own projection, the Jacobian against finite differences, the refined cost against
COLMAP's bundle adjuster (Ceres) on the same data and start, and the write-back."""

import numpy as np
import pytest

pycolmap = pytest.importorskip("pycolmap")

from benchmarks.models.colmap_scene import (ceres_bundle_adjustment, gauge_images,  # noqa: E402
                                            reconstruction_state, synthetic_reconstruction)
from caspar_backend.errors import ModelError  # noqa: E402
from caspar_backend.lsq.colmap import BundleAdjustmentProblem, read_reconstruction  # noqa: E402
from caspar_backend.lsq.rotations import (matrix_to_quat, matrix_to_rotvec,  # noqa: E402
                                          quat_to_matrix, rotvec_to_matrix)

SMALL = dict(n_images=8, n_points=150, track_length=4, seed=3)


@pytest.fixture
def rec():
    return synthetic_reconstruction(**SMALL)


def test_read_matches_pycolmap(rec):
    data = read_reconstruction(rec)
    assert len(data.obs_image) == rec.compute_num_observations()
    i = 5
    img = rec.images[int(data.image_ids[data.obs_image[i]])]
    pid = int(data.point_ids[data.obs_point[i]])
    xy = [p.xy for p in img.points2D if p.has_point3D() and p.point3D_id == pid][0]
    np.testing.assert_array_equal(data.obs_xy[i], xy)
    np.testing.assert_allclose(data.xyz[data.obs_point[i]], rec.points3D[pid].xyz)


def test_read_routes_agree(rec, monkeypatch):
    """The binary-writer and the object-by-object routes give the same arrays (ascending
    ids, observations in 2D-point order: the synthetic images also hold 2D points
    without a 3D point); the automatic choice follows 2D points per observation."""
    from caspar_backend.lsq import colmap_read

    a = read_reconstruction(rec, "binary")
    b = read_reconstruction(rec, "objects")
    assert a.camera_models == b.camera_models
    for f in a.__dataclass_fields__:
        if f not in ("camera_models", "camera_params"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
    assert np.all(np.diff(a.image_ids) > 0) and np.all(np.diff(a.point_ids) > 0)
    calls = []
    for name in ("_by_binary", "_by_objects"):
        route = getattr(colmap_read, name)
        monkeypatch.setattr(colmap_read, name,
                            lambda r, route=route, name=name: calls.append(name) or route(r))
    monkeypatch.setattr(colmap_read, "OBJECT_ROUTE_RATIO", 0)
    read_reconstruction(rec)
    monkeypatch.setattr(colmap_read, "OBJECT_ROUTE_RATIO", 10 ** 9)
    read_reconstruction(rec)
    assert calls == ["_by_objects", "_by_binary"]
    with pytest.raises(ValueError, match="route"):
        read_reconstruction(rec, "text")


def test_residuals_match_pycolmap_projection(rec):
    ba = BundleAdjustmentProblem.from_reconstruction(rec)
    d = ba.data
    r = ba.problem.residuals(ba.x0).reshape(-1, 2)[np.argsort(ba.obs_order)]
    for i in range(0, len(d.obs_image), 37):                 # a sample of observations
        img = rec.images[int(d.image_ids[d.obs_image[i]])]
        cam = rec.cameras[img.camera_id]
        pc = img.cam_from_world() * d.xyz[d.obs_point[i]]
        proj = cam.img_from_cam(pc)
        np.testing.assert_allclose(r[i], proj - d.obs_xy[i], rtol=1e-9, atol=1e-8)


def test_jacobian_matches_finite_differences(rec):
    ba = BundleAdjustmentProblem.from_reconstruction(rec, constant_intrinsics=())
    P = ba.problem
    rng = np.random.default_rng(0)
    x = ba.x0 + 1e-3 * rng.standard_normal(P.n) * (P.lbx != P.ubx)
    J = P.jacobian(x).toarray()
    cols = rng.choice(P.n, 25, replace=False)
    for c in cols:
        h = 1e-6 * max(1.0, abs(x[c]))
        e = np.zeros(P.n)
        e[c] = h
        fd = (P.residuals(x + e) - P.residuals(x - e)) / (2 * h)
        np.testing.assert_allclose(J[:, c], fd, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(fd).max()))


@pytest.mark.parametrize("refine", [False, True])
def test_final_cost_matches_ceres(refine):
    rec_c = synthetic_reconstruction(**SMALL)
    rec_o = synthetic_reconstruction(**SMALL)
    tight = dict(function_tolerance=1e-10, gradient_tolerance=1e-12, parameter_tolerance=1e-12)
    ceres = ceres_bundle_adjustment(rec_c, refine_intrinsics=refine, **tight)
    ba = BundleAdjustmentProblem.from_reconstruction(
        rec_o, constant_intrinsics=() if refine else True, constant_images=gauge_images(rec_o))
    s = ba.solve(**tight)
    assert s.termination_type == "CONVERGENCE"
    assert s.initial_cost == pytest.approx(ceres["initial_cost"], rel=1e-9)
    assert s.final_cost <= ceres["final_cost"] * (1 + 1e-6)
    assert s.final_cost == pytest.approx(ceres["final_cost"], rel=1e-6)
    # Ceres' refined reconstruction evaluated by caspar has Ceres' reported cost
    q, t, xyz = reconstruction_state(rec_c, ba.data.image_ids, ba.data.point_ids)
    cams = [np.array(rec_c.cameras[int(c)].params) for c in ba.data.camera_ids]
    assert ba.problem.cost(ba.x_of(q, t, xyz, cams)) == pytest.approx(ceres["final_cost"],
                                                                       rel=1e-8)
    # write back: pycolmap's own error measure agrees with caspar's
    ba.write(rec_o, s.x)
    rec_o.update_point_3d_errors()
    assert rec_o.compute_mean_reprojection_error() == pytest.approx(
        ba.mean_reprojection_error(s.x), rel=1e-9)
    assert ba.mean_reprojection_error(s.x) < 0.5 * ba.mean_reprojection_error(ba.x0)


def test_rotations_round_trip():
    rng = np.random.default_rng(1)
    axis = rng.standard_normal((50, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    # angles from 1e-9 to just below pi (matrix_to_rotvec returns angles in [0, pi])
    w = axis * np.r_[1e-9, np.linspace(1e-4, 3.1, 49)][:, None]
    R = rotvec_to_matrix(w)
    np.testing.assert_allclose(R @ R.transpose(0, 2, 1), np.broadcast_to(np.eye(3), R.shape),
                               atol=1e-12)
    np.testing.assert_allclose(matrix_to_rotvec(R), w, atol=1e-9)
    np.testing.assert_allclose(quat_to_matrix(matrix_to_quat(R)), R, atol=1e-12)
    # against pycolmap's own conversion
    q = pycolmap.Rotation3d(w[7]).quat          # xyzw
    np.testing.assert_allclose(matrix_to_quat(R[7:8])[0], np.r_[q[3], q[:3]] * np.sign(q[3]),
                               atol=1e-12)


@pytest.mark.parametrize("unobserved", [0, 7])
def test_read_points_and_observations_whole(unobserved):
    """Every point's id and position, every observation's pixel, as pycolmap holds them
    (the binary files are parsed by offsets; 2-D points without a 3-D point left out)."""
    pycolmap.set_random_seed(1)
    o = pycolmap.SyntheticDatasetOptions()
    o.num_rigs, o.num_cameras_per_rig, o.num_frames_per_rig = 1, 1, 6
    o.num_points3D, o.num_points2D_without_point3D = 80, unobserved
    rec = pycolmap.synthesize_dataset(o)
    data = read_reconstruction(rec)
    assert sorted(data.point_ids.tolist()) == sorted(rec.point3D_ids())
    np.testing.assert_array_equal(data.xyz, [rec.points3D[int(i)].xyz for i in data.point_ids])
    pairs = sorted((int(data.image_ids[i]), int(data.point_ids[p]), *xy)
                   for i, p, xy in zip(data.obs_image, data.obs_point, data.obs_xy.tolist()))
    want = sorted((int(iid), int(p2.point3D_id), *p2.xy.tolist())
                  for iid, im in rec.images.items() for p2 in im.points2D if p2.has_point3D())
    assert pairs == want


def test_reconstruction_data_indices_are_checked(rec):
    from dataclasses import replace

    from caspar_backend.errors import IndexOutOfRangeError

    data = read_reconstruction(rec)
    bad = data.obs_point.copy()
    bad[3] = len(data.point_ids)
    with pytest.raises(IndexOutOfRangeError, match="obs_point"):
        BundleAdjustmentProblem(replace(data, obs_point=bad))
    bad = data.obs_image.copy()
    bad[0] = -1
    with pytest.raises(IndexOutOfRangeError, match="obs_image"):
        BundleAdjustmentProblem(replace(data, obs_image=bad))


def test_bad_gauge_image_is_named(rec):
    with pytest.raises(ModelError, match="image 999"):
        BundleAdjustmentProblem.from_reconstruction(rec, constant_images=[999])
