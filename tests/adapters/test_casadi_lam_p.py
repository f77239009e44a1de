"""``lam_p`` through the gradient Function's buffer (adapters/casadi/parametric.py): the
same values as the Function called with DM arguments, with matrix-shaped x and p, without
constraints, from many threads at once; and IPOPT's ``lam_p`` through ``nlpsol``."""

from __future__ import annotations

import threading

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.adapters.casadi.parametric import Parametric  # noqa: E402


def _matrix_nlp(x_matrix=True):
    """x (2 x 2, or a 4-vector: casadi's nlpsol takes vectors only) and p (2 x 3) as
    matrices, two constraints: every argument of the gradient Function column-major."""
    x = ca.SX.sym("x", 2, 2) if x_matrix else ca.reshape(ca.SX.sym("x", 4), 2, 2)
    p = ca.SX.sym("p", 2, 3)
    f = ca.sumsqr(x - p[:, :2]) + p[0, 2] * x[0, 1] ** 2 * ca.exp(p[1, 2] * x[1, 0])
    g = ca.vertcat(x[0, 0] + 2 * x[1, 1] * p[1, 0], ca.sin(x[0, 1]) * p[0, 1] - x[1, 0])
    return {"x": x, "p": p, "f": f, "g": g}


def _by_dm(par, x, p, lam_g):
    """The Function called with DM arguments (what the buffer stands in for)."""
    nlp = par.nlp
    fn = par._gradient_p()
    X = ca.reshape(ca.DM(np.asarray(x, float)), *nlp["x"].shape)
    P = ca.reshape(ca.DM(np.asarray(p, float)), *nlp["p"].shape)
    G = ca.DM(np.asarray(lam_g, float).reshape(-1, 1)) if par.m else ca.DM(0, 1)
    return -np.asarray(fn(X, P, G), float).reshape(-1)


def test_buffered_equals_the_dm_call_with_matrix_arguments():
    par = Parametric(_matrix_nlp(), 4, 2, 0.0)
    rng = np.random.default_rng(0)
    assert par._bound()                              # every argument dense: buffered
    for _ in range(5):
        x, p, lam = rng.normal(size=4), rng.normal(size=6), rng.normal(size=2)
        got = par.lam_p(x, p, lam)
        np.testing.assert_array_equal(got, _by_dm(par, x, p, lam))
        got[:] = 7.0                                 # the caller's array, not the buffer's
        np.testing.assert_array_equal(par.lam_p(x, p, lam), _by_dm(par, x, p, lam))


def test_without_constraints():
    x, p = ca.SX.sym("x", 3), ca.SX.sym("p", 2)
    par = Parametric({"x": x, "p": p, "f": ca.sumsqr(x * p[0]) + p[1] * x[2]}, 3, 0, 0.0)
    got = par.lam_p(np.array([1.0, 2.0, 3.0]), np.array([0.5, -2.0]), np.zeros(0))
    np.testing.assert_allclose(got, -np.array([2 * 0.5 * 14.0, 3.0]), rtol=1e-15)


def test_p_absent_from_the_objective_and_constraints_gives_zeros():
    """A structurally zero gradient entry (densified: the buffer's result is dense)."""
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p", 2)
    par = Parametric({"x": x, "p": p, "f": ca.sumsqr(x) + p[0] * x[0], "g": x[1]}, 2, 1, 0.0)
    np.testing.assert_array_equal(par.lam_p(np.array([1.0, 2.0]), np.array([3.0, 4.0]),
                                            np.array([5.0])), [-1.0, -0.0])


def test_threads_each_get_their_own_buffer():
    par = Parametric(_matrix_nlp(), 4, 2, 0.0)
    rng = np.random.default_rng(1)
    cases = [(rng.normal(size=4), rng.normal(size=6), rng.normal(size=2)) for _ in range(8)]
    want = [_by_dm(par, *c) for c in cases]
    errors, start = [], threading.Barrier(len(cases))

    def run(k):
        try:
            start.wait()
            for _ in range(300):
                if not np.array_equal(par.lam_p(*cases[k]), want[k]):
                    errors.append(k)
                    return
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_sparse_argument_takes_the_dm_call():
    x = ca.SX.sym("x", ca.Sparsity.diag(2))          # a symbolic matrix with 2 nonzeros
    p = ca.SX.sym("p", 2)
    nlp = {"x": x, "p": p, "f": ca.sumsqr(x) * p[0] + p[1]}
    par = Parametric(nlp, 2, 0, 0.0)
    assert par._bound() is False


def test_nlpsol_lam_p_is_ipopts_with_matrix_shapes():
    from caspar_backend.casadi import nlpsol

    nlp = _matrix_nlp(x_matrix=False)
    nlp["x"] = ca.vec(nlp["x"])
    args = dict(x0=ca.DM.ones(4, 1), p=ca.DM([[0.3, 0.2, 0.5], [0.1, -0.4, 0.2]]),
                lbg=[-1.0, 0.0], ubg=[1.0, 0.0])
    r = nlpsol("S", "caspar", nlp, {"caspar": {"print_level": 0}, "print_time": False})(**args)
    ri = ca.nlpsol("S", "ipopt", nlp, {"ipopt": {"print_level": 0, "sb": "yes"},
                                       "print_time": False})(**args)
    np.testing.assert_allclose(np.asarray(r["lam_p"]), np.asarray(ri["lam_p"]),
                               rtol=1e-6, atol=1e-8)
