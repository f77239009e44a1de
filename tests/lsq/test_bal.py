"""BAL files (caspar_backend.lsq.bal): exact round trips (plain and .bz2), the residuals
against a NumPy projection of the same camera model (benchmarks/models/bundle.py), the
Jacobian against finite differences, a solve against scipy.optimize.least_squares, and
bad files named."""

import numpy as np
import pytest

from benchmarks.models.bundle import _project_np, synthetic_scene
from caspar_backend.errors import IndexOutOfRangeError, ModelError
from caspar_backend.lsq.bal import BALData, BALProblem, read_bal, write_bal


def scene_data(nc=6, npt=40, k=3, seed=1) -> BALData:
    s = synthetic_scene(nc, npt, k, window=nc, seed=seed)
    return BALData(s["cam_idx"].astype(np.int64), s["pt_idx"].astype(np.int64),
                   np.ascontiguousarray(s["obs"].T), np.ascontiguousarray(s["cams0"].T),
                   np.ascontiguousarray(s["points0"].T))


@pytest.mark.parametrize("name", ["scene.txt", "scene.txt.bz2"])
def test_round_trip_is_exact(tmp_path, name):
    d = scene_data()
    write_bal(tmp_path / name, d)
    r = read_bal(tmp_path / name)
    for f in ("cam_idx", "pt_idx", "obs", "cameras", "points"):
        assert np.array_equal(getattr(r, f), getattr(d, f)), f


def test_residuals_and_jacobian():
    d = scene_data()
    bal = BALProblem(d)
    want = _project_np(d.cameras[d.cam_idx].T, d.points[d.pt_idx].T).T - d.obs
    np.testing.assert_allclose(bal.problem.residuals(bal.x0).reshape(-1, 2), want,
                               rtol=1e-12, atol=1e-9)
    ev = bal.problem.compiled.evaluator()
    J = ev.jac(bal.x0).toarray()
    h = 1e-6
    for col in (0, 4, 6, 8, 9 * 6, 9 * 6 + 5):
        e = np.zeros(bal.x0.size)
        e[col] = h * max(1.0, abs(bal.x0[col]))
        fd = (bal.problem.residuals(bal.x0 + e) - bal.problem.residuals(bal.x0 - e)) / (2 * e[col])
        np.testing.assert_allclose(J[:, col], fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())


def test_solve_matches_scipy_and_writes_back(tmp_path):
    so = pytest.importorskip("scipy.optimize")
    d = scene_data(nc=4, npt=25, k=3, seed=2)
    bal = BALProblem(d, constant_cameras=[0])
    s = bal.solve(function_tolerance=1e-14, parameter_tolerance=1e-14,
                  gradient_tolerance=1e-14, max_num_iterations=200)
    assert s.termination_type == "CONVERGENCE"

    def res(z):
        cams = np.vstack([d.cameras[:1], z[:27].reshape(3, 9)])
        pts = z[27:].reshape(-1, 3)
        return (_project_np(cams[d.cam_idx].T, pts[d.pt_idx].T).T - d.obs).ravel()

    ref = so.least_squares(res, bal.x0[9:], xtol=1e-15, ftol=1e-15, gtol=1e-15)
    assert s.final_cost == pytest.approx(ref.cost, rel=1e-6)
    np.testing.assert_array_equal(s.x[:9], d.cameras[0])
    write_bal(tmp_path / "out.bal", bal.data_at(s.x))
    back = read_bal(tmp_path / "out.bal")
    assert np.array_equal(back.cameras.ravel(), s.x[:36])
    assert np.array_equal(back.points.ravel(), s.x[36:])


def test_bad_files_are_named(tmp_path):
    p = tmp_path / "bad.bal"
    p.write_text("not a header\n")
    with pytest.raises(ModelError, match="not a BAL file"):
        read_bal(p)
    p.write_text("1 1 1\n0 0 1.0 2.0\n" + "0\n" * 9 + "1 2\n")
    with pytest.raises(ModelError, match="15 numbers after the header, expected 16"):
        read_bal(p)
    p.write_text("1 1 1\n0 3 1.0 2.0\n" + "0\n" * 9 + "1\n2\n3\n")
    with pytest.raises(IndexOutOfRangeError, match="observation 0 refers to point 3"):
        read_bal(p)
    with pytest.raises(IndexOutOfRangeError, match="constant_cameras"):
        BALProblem(scene_data(), constant_cameras=[99])
