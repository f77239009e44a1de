"""Schur structure from the Jacobian pattern, and Schur solves against the full
system, on BAL's bundle adjustment (tests/lsq/bal.py)."""

import numpy as np
import pytest
import scipy.optimize as so

from benchmarks.models.bundle import _project_np
from caspar_backend.lsq.jacobian import SparseJacobian
from caspar_backend.lsq.linear_solvers import DenseNormalCholesky
from caspar_backend.lsq.pattern import ReducedPattern
from caspar_backend.lsq.schur import SchurComplementSolver
from caspar_backend.lsq.structure import column_blocks, detect_schur_structure

from .bal import bal_problem


@pytest.fixture(scope="module")
def bal():
    return bal_problem(8, 60, 4)


def test_structure_finds_points_and_cameras(bal):
    P, s = bal
    pat = P.reduced_pattern()
    st = detect_schur_structure(pat)
    nc, npt = 8, 60
    # every point is eliminated (point 0 has one coordinate fixed: a block of 2)
    assert st.n_e_blocks == npt and st.n_e == 3 * npt - 1
    # the reduced system is the 7 free cameras
    assert st.n_f == 9 * (nc - 1)
    # no residual row touches two eliminated blocks
    e_of_col = np.full(pat.n, -1)
    for b, colsb in enumerate(st.e_cols):
        e_of_col[colsb[colsb >= 0]] = b
    touched = e_of_col[pat.cols]
    m = pat.rows[touched >= 0]
    pairs = np.unique(np.c_[m, touched[touched >= 0]], axis=0)
    assert len(np.unique(pairs[:, 0])) == len(pairs)


def test_column_blocks_group_identical_columns():
    rows = np.array([0, 0, 1, 1, 2, 2, 2])
    cols = np.array([0, 1, 0, 1, 2, 3, 0])
    b = column_blocks(rows, cols, 5)         # column 4 empty
    assert b[2] == b[3] and len({b[0], b[1], b[2], b[4]}) == 4


@pytest.mark.parametrize("dense,compiled", [(True, True), (True, False), (False, False)],
                         ids=["dense-compiled", "dense-bsr", "sparse"])
def test_schur_step_equals_full_step(bal, dense, compiled, monkeypatch):
    monkeypatch.setenv("CASPAR_LSQ_COMPILED", "1" if compiled else "0")
    P, _ = bal
    pat = P.reduced_pattern()
    jac = SparseJacobian(pat)
    ev = P.evaluator()
    x = P.x0 + 0.01 * np.random.default_rng(1).standard_normal(P.n)
    vals = np.asarray(ev.jac_values(x))[pat.keep]
    r = np.asarray(ev.cons(x)).copy()
    d = np.random.default_rng(2).uniform(0.01, 1.0, pat.n)
    full = DenseNormalCholesky(jac).solve(vals, r, d)
    sol = SchurComplementSolver(jac, detect_schur_structure(pat), dense=dense)
    assert (sol._work is not None) == compiled
    schur = sol.solve(vals, r, d)
    np.testing.assert_allclose(schur, full, rtol=1e-7, atol=1e-9 * np.abs(full).max())


def _camera_point_pattern(seed):
    """A random bundle-adjustment-like pattern: 40 points (2 columns) seen by 1-5 of 7
    cameras (3 columns each; camera 6 has 2 columns), one row per observation, and 5
    rows touching two cameras and no point (a relative-pose prior)."""
    rng = np.random.default_rng(seed)
    npt, ncam = 40, 7
    cam_cols = [np.arange(3) + 2 * npt + 3 * c for c in range(ncam - 1)]
    cam_cols.append(np.arange(2) + 2 * npt + 3 * (ncam - 1))
    rows, cols, m = [], [], 0
    for p in range(npt):
        for c in rng.choice(ncam, rng.integers(1, 6), replace=False):
            for j in np.r_[2 * p, 2 * p + 1, cam_cols[c]]:
                rows.append(m)
                cols.append(j)
            m += 1
    for _ in range(5):
        for c in rng.choice(ncam, 2, replace=False):
            rows += [m] * len(cam_cols[c])
            cols += list(cam_cols[c])
        m += 1
    order = rng.permutation(len(rows))           # entries in no particular order
    rows, cols = np.array(rows)[order], np.array(cols)[order]
    n = 2 * npt + 3 * (ncam - 1) + 2
    return ReducedPattern(rows, cols, np.arange(len(rows)), np.arange(n), m)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_elimination_on_rows_without_points(seed, monkeypatch):
    """The compiled DENSE_SCHUR against the full system and the BSR path, with rows that
    touch no eliminated block and f-blocks of two sizes (padded)."""
    pat = _camera_point_pattern(seed)
    jac = SparseJacobian(pat)
    st = detect_schur_structure(pat)
    assert st is not None and st.n_e_blocks == 40
    rng = np.random.default_rng(seed + 10)
    vals, r = rng.standard_normal(pat.nnz), rng.standard_normal(pat.m)
    d = rng.uniform(0.1, 1.0, pat.n)
    full = DenseNormalCholesky(jac).solve(vals, r, d)
    monkeypatch.setenv("CASPAR_LSQ_COMPILED", "1")
    compiled = SchurComplementSolver(jac, st, dense=True)
    threaded = SchurComplementSolver(jac, st, dense=True, num_threads=3)
    monkeypatch.setenv("CASPAR_LSQ_COMPILED", "0")
    bsr = SchurComplementSolver(jac, st, dense=True)
    assert compiled._work is not None and bsr._work is None
    assert len(threaded._work.shares) == 3
    for sol in (compiled, threaded, bsr):
        np.testing.assert_allclose(sol.solve(vals, r, d), full, rtol=1e-8,
                                   atol=1e-10 * np.abs(full).max())
    # a point whose columns are all zero, undamped: V_b singular, both paths refuse
    point0 = np.isin(pat.cols, [0, 1])
    vals[point0] = 0.0
    d[:2] = 0.0
    assert all(s.solve(vals, r, d) is None for s in (compiled, threaded, bsr))
    # and a later solve is not disturbed by the refused one
    d[:2] = 0.5
    np.testing.assert_allclose(compiled.solve(vals, r, d), bsr.solve(vals, r, d), rtol=1e-9,
                               atol=1e-12)
    # the threaded step is the same bits every time (shares added in a fixed order)
    steps = [threaded.solve(vals, r, d) for _ in range(5)]
    assert all(np.array_equal(steps[0], s) for s in steps)


def test_schur_and_full_solves_agree(bal):
    P, _ = bal
    runs = {ls: P.solve(linear_solver_type=ls) for ls in
            ("SPARSE_NORMAL_CHOLESKY", "DENSE_SCHUR", "SPARSE_SCHUR")}
    ref = runs["SPARSE_NORMAL_CHOLESKY"]
    for ls, s in runs.items():
        assert s.termination_type == "CONVERGENCE"
        assert s.num_iterations == ref.num_iterations
        assert s.final_cost == pytest.approx(ref.final_cost, rel=1e-9)
    assert runs["DENSE_SCHUR"].num_eliminated_blocks == 60


def test_bundle_optimum_matches_scipy(bal):
    """The converged cost against scipy's trust-region reflective solver on the same
    residuals written in NumPy (benchmarks/models/bundle.py's projection)."""
    P, s = bal
    free = np.flatnonzero(P.lbx != P.ubx)
    nc = s["cams"].shape[1]

    def resid(z):
        x = P.x0.copy()
        x[free] = z
        cams = x[:9 * nc].reshape(nc, 9).T
        pts = x[9 * nc:].reshape(-1, 3).T
        return (_project_np(cams[:, s["cam_idx"]], pts[:, s["pt_idx"]]) - s["obs"]).ravel(order="F")

    tight = dict(function_tolerance=1e-12, gradient_tolerance=1e-12, parameter_tolerance=1e-14)
    ours = P.solve(**tight)
    # MINPACK's Levenberg-Marquardt with its own finite differences (scipy 'lm')
    ref = so.least_squares(resid, P.x0[free], method="lm", xtol=1e-15, ftol=1e-15,
                           gtol=1e-15)
    assert ours.final_cost <= ref.cost * (1 + 1e-8)
    assert ours.final_cost == pytest.approx(ref.cost, rel=1e-6)
    np.testing.assert_allclose(P.residuals(ours.x), resid(ours.x[free]), rtol=1e-9, atol=1e-9)


def test_resolve_reuses_structures_and_repeats_bits(bal):
    P, _ = bal
    cache = P.evaluator().structure_cache
    first = P.solve(linear_solver_type="SPARSE_SCHUR")
    hits = cache.hits
    again = P.solve(linear_solver_type="SPARSE_SCHUR")
    # two hits: the structures' entry and the entry keeping the step solver
    assert cache.hits == hits + 2
    np.testing.assert_array_equal(first.x, again.x)
    # another fixed set is another entry (of each)
    lbx, ubx = P.lbx.copy(), P.ubx.copy()
    lbx[20] = ubx[20] = P.x0[20]
    P.solve(lbx=lbx, ubx=ubx)
    assert cache.hits == hits + 2


def test_vector_template_is_one_fused_function_with_the_same_values(bal):
    """The x and y rows of one ResidualBlock share their template graph and tables: the
    CPU evaluator runs them as one fused function (shared subexpressions once), with the
    values of the separate per-group functions."""
    P, _ = bal
    ev = P.evaluator()
    assert [len(idx) for idx, fused in ev._con_fused if fused is not None] == [2]
    x = P.x0 + 1e-3
    jv = np.asarray(ev.jac_values(x)).copy()
    sep = np.empty_like(jv)
    for b in ev._con:
        b.fn.jac(x[b.group.var_table], b.P, b.group.data_table, sep, b.jac_base, b.N)
    np.testing.assert_array_equal(jv, sep)
    r = np.asarray(ev.cons(x)).copy()
    for b in ev._con:
        np.testing.assert_array_equal(r[b.rows], b.fn.val(x[b.group.var_table], b.P,
                                                           b.group.data_table, b.N))


def test_iterative_schur_step_and_solve(bal):
    """ITERATIVE_SCHUR: with a tight eta the PCG step is the direct Schur step; with
    Ceres' eta = 0.1 the LM run reaches the direct run's optimum."""
    from caspar_backend.lsq.iterative_schur import IterativeSchurSolver

    P, _ = bal
    pat = P.reduced_pattern()
    jac = SparseJacobian(pat)
    ev = P.evaluator()
    x = P.x0 + 0.01 * np.random.default_rng(1).standard_normal(P.n)
    vals = np.asarray(ev.jac_values(x))[pat.keep]
    r = np.asarray(ev.cons(x)).copy()
    d = np.random.default_rng(2).uniform(0.01, 1.0, pat.n)
    st = detect_schur_structure(pat)
    direct = SchurComplementSolver(jac, st, dense=True).solve(vals, r, d)
    it = IterativeSchurSolver(jac, st, eta=1e-14, max_iterations=1000)
    np.testing.assert_allclose(it.solve(vals, r, d), direct, rtol=1e-6,
                               atol=1e-8 * np.abs(direct).max())
    assert 0 < it.last_iterations <= 9 * 7 + 1
    tight = dict(function_tolerance=1e-10, gradient_tolerance=1e-12, parameter_tolerance=1e-12)
    a = P.solve(linear_solver_type="ITERATIVE_SCHUR", max_num_iterations=200, **tight)
    b = P.solve(linear_solver_type="DENSE_SCHUR", **tight)
    assert a.termination_type == "CONVERGENCE"
    assert a.final_cost == pytest.approx(b.final_cost, rel=1e-8)


@pytest.mark.parametrize("seed", [0, 1])
def test_dense_w_schur_algebra_on_numpy(seed):
    """The GPU's DENSE_SCHUR (W dense, lsq/device_schur.py) run on NumPy arrays: the full
    system's step, with rows touching no point and padded f-blocks."""
    from caspar_backend.lsq.device_schur import DeviceDenseSchur

    pat = _camera_point_pattern(seed)
    jac = SparseJacobian(pat)
    st = detect_schur_structure(pat)
    rng = np.random.default_rng(seed + 20)
    vals, r = rng.standard_normal(pat.nnz), rng.standard_normal(pat.m)
    d = rng.uniform(0.1, 1.0, pat.n)
    full = DenseNormalCholesky(jac).solve(vals, r, d)
    dev = DeviceDenseSchur(jac, st, np)
    np.testing.assert_allclose(dev.solve(vals, r, d), full, rtol=1e-8,
                               atol=1e-10 * np.abs(full).max())
    # on BAL's bundle adjustment too (9-parameter cameras, a point with 2 free coordinates)
    P, _ = bal_problem(8, 60, 4)
    pat = P.reduced_pattern()
    jac = SparseJacobian(pat)
    ev = P.evaluator()
    x = P.x0 + 0.01 * rng.standard_normal(P.n)
    vals = np.asarray(ev.jac_values(x))[pat.keep]
    r = np.asarray(ev.cons(x)).copy()
    d = rng.uniform(0.01, 1.0, pat.n)
    full = DenseNormalCholesky(jac).solve(vals, r, d)
    dev = DeviceDenseSchur(jac, detect_schur_structure(pat), np)
    np.testing.assert_allclose(dev.solve(vals, r, d), full, rtol=1e-7,
                               atol=1e-9 * np.abs(full).max())


@pytest.mark.parametrize("seed", [0, 1])
def test_device_iterative_schur_algebra_on_numpy(seed):
    """The GPU's ITERATIVE_SCHUR (lsq/device_iterative_schur.py) run on NumPy arrays: with
    a tight eta the full system's step; with Ceres' eta the CPU ITERATIVE_SCHUR's step and
    CG iterations (rows touching no point, padded f-blocks, BAL's 9-parameter cameras)."""
    from caspar_backend.lsq.device_iterative_schur import DeviceIterativeSchur
    from caspar_backend.lsq.iterative_schur import IterativeSchurSolver

    rng = np.random.default_rng(seed + 40)
    P, _ = bal_problem(8, 60, 4)
    bal = P.reduced_pattern()
    ev = P.evaluator()
    x = P.x0 + 0.01 * rng.standard_normal(P.n)
    cases = [(_camera_point_pattern(seed), None, None),
             (bal, np.asarray(ev.jac_values(x))[bal.keep], np.asarray(ev.cons(x)).copy())]
    for pat, vals, r in cases:
        if vals is None:
            vals, r = rng.standard_normal(pat.nnz), rng.standard_normal(pat.m)
        jac = SparseJacobian(pat)
        st = detect_schur_structure(pat)
        d = rng.uniform(0.05, 1.0, pat.n)
        full = DenseNormalCholesky(jac).solve(vals, r, d)
        tight = DeviceIterativeSchur(jac, st, np, eta=1e-14, max_iterations=1000)
        np.testing.assert_allclose(tight.solve(vals, r, d), full, rtol=1e-6,
                                   atol=1e-7 * np.abs(full).max())
        assert tight.last_iterations > 1
        dev = DeviceIterativeSchur(jac, st, np, eta=0.1)
        cpu = IterativeSchurSolver(jac, st, eta=0.1)
        step, ref = dev.solve(vals, r, d), cpu.solve(vals, r, d)
        assert dev.last_iterations == cpu.last_iterations
        np.testing.assert_allclose(step, ref, rtol=1e-9, atol=1e-11 * np.abs(ref).max())


def test_device_step_solver_choice(monkeypatch):
    """On the GPU the automatic choice is DENSE_SCHUR while W's product is cheap and
    ITERATIVE_SCHUR above; the CPU-only solvers are refused by name."""
    from caspar_backend.errors import OptionError
    from caspar_backend.lsq import device_schur
    from caspar_backend.lsq.step_solvers import make_device_step_solver

    pat = _camera_point_pattern(0)
    jac = SparseJacobian(pat)
    st = detect_schur_structure(pat)
    from caspar_backend.lsq.device_iterative_schur import DIRECT_ETA

    assert make_device_step_solver(None, jac, st, np)[0].name == "DENSE_SCHUR"
    named = make_device_step_solver("ITERATIVE_SCHUR", jac, st, np)[0]
    assert named.name == "ITERATIVE_SCHUR" and named.eta == 0.1        # Ceres' eta
    monkeypatch.setattr(device_schur, "DENSE_FLOPS_MAX", 0.0)
    auto = make_device_step_solver(None, jac, st, np)[0]
    assert auto.name == "ITERATIVE_SCHUR" and auto.eta == DIRECT_ETA
    assert make_device_step_solver("DENSE_SCHUR", jac, st, np)[0].name == "DENSE_SCHUR"
    monkeypatch.setattr(device_schur, "MAX_DENSE_BYTES", 0)
    with pytest.raises(OptionError, match="ITERATIVE_SCHUR"):
        make_device_step_solver("DENSE_SCHUR", jac, st, np)
    with pytest.raises(OptionError, match="SPARSE_SCHUR runs on the CPU only"):
        make_device_step_solver("SPARSE_SCHUR", jac, st, np)


def test_direct_eta_pcg_takes_the_direct_solves_iterations(bal):
    """ITERATIVE_SCHUR with the GPU's automatic stop (DIRECT_ETA) follows the direct Schur
    solve: the same LM iterations and optimum (Ceres' eta 0.1 need not: inexact steps)."""
    from caspar_backend.lsq.device_iterative_schur import DIRECT_ETA

    P, _ = bal
    direct = P.solve(linear_solver_type="DENSE_SCHUR")
    pcg = P.solve(linear_solver_type="ITERATIVE_SCHUR", eta=DIRECT_ETA,
                  max_linear_solver_iterations=1000)
    assert pcg.termination_type == direct.termination_type == "CONVERGENCE"
    assert pcg.num_iterations == direct.num_iterations
    assert pcg.final_cost == pytest.approx(direct.final_cost, rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_reduced_block_density_counts_the_coupled_block_pairs(seed):
    """reduced_block_density against the block pattern of the Schur complement computed
    densely (random values: no cancellation), and the automatic CPU choice it drives."""
    import dataclasses

    from caspar_backend.lsq import step_solvers
    from caspar_backend.lsq.structure import reduced_block_density

    pat = _camera_point_pattern(seed)
    st = detect_schur_structure(pat)
    rng = np.random.default_rng(seed)
    J = np.zeros((pat.m, pat.n))
    J[pat.rows, pat.cols] = rng.standard_normal(pat.nnz)
    A = J.T @ J + np.eye(pat.n)
    e, f = st.e_cols[st.e_cols >= 0], st.f_cols[st.f_cols >= 0]
    S = A[np.ix_(f, f)] - A[np.ix_(f, e)] @ np.linalg.solve(A[np.ix_(e, e)], A[np.ix_(e, f)])
    blk = np.repeat(np.arange(st.f_cols.shape[0]), (st.f_cols >= 0).sum(1))
    n_fb = st.f_cols.shape[0]
    coupled = {(min(a, b), max(a, b)) for a, b in zip(*np.nonzero(np.abs(S) > 1e-12))
               for a, b in [(blk[a], blk[b])]}
    assert reduced_block_density(pat, st) == pytest.approx(len(coupled) / (n_fb * (n_fb + 1) / 2))
    jac = SparseJacobian(pat)
    for density, kind in ((0.5, "DENSE_SCHUR"), (0.001, "SPARSE_SCHUR")):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(step_solvers, "DENSE_SCHUR_MAX", 1)
            solver, _ = step_solvers.make_step_solver(
                None, jac, pat, dataclasses.replace(st, density=density))
        assert solver.name == kind


def test_reduced_cholesky_on_num_threads_blas_threads(monkeypatch):
    """A large reduced system is factorized on num_threads BLAS threads, also inside the
    minimizer's one-thread limit, to the one-thread solution's rounding."""
    pytest.importorskip("threadpoolctl")
    from caspar_backend.linsolve.blas_threads import limited_blas, single_threaded_blas
    from caspar_backend.lsq import schur
    from caspar_backend.lsq.linear_solvers import dense_spd_solve

    from caspar_backend.linsolve import blas_threads as limits

    def blas_threads():
        # the libraries the limit governs, those loaded when its controller was made
        # (SciPy's LAPACK, which these factorizations call, first); a BLAS another test
        # loads later (MKL for PARDISO) is not theirs
        return max(i["num_threads"]
                   for i in limits._controller.select(user_api="blas").info())

    with single_threaded_blas():
        assert blas_threads() == 1
        with limited_blas(2):
            assert blas_threads() == 2
        assert blas_threads() == 1
    rng = np.random.default_rng(4)
    A = rng.standard_normal((40, 40))
    A = A @ A.T + 40 * np.eye(40)
    b = rng.standard_normal(40)
    monkeypatch.setattr(schur, "THREADED_CHOLESKY_MIN", 10)
    np.testing.assert_allclose(schur._reduced_cholesky(A, b, 2), dense_spd_solve(A, b),
                               rtol=1e-12)
