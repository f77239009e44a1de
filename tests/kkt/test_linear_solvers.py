"""Conformance of the linear solver (inertia, solve) and the augmented KKT system."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.kkt import AugmentedKKT
from caspar_backend.linsolve import make_linear_solver


def _kkt(rng, nw, m, r, dup=True):
    H = rng.standard_normal((nw, nw))
    H = H + H.T
    hr, hc = np.tril_indices(nw)
    A = rng.standard_normal((m, nw)) * (rng.random((m, nw)) < 0.6)
    A[np.arange(m), np.arange(m) % nw] += 1.0
    jr, jc = np.nonzero(A)
    k = AugmentedKKT(nw, m, np.r_[hr, hr] if dup else hr, np.r_[hc, hc] if dup else hc,
                     jr, jc, make_linear_solver("qdldl"), n_lowrank=r)
    vals = H[hr, hc]
    k.hess_values[:] = np.r_[vals / 2, vals / 2] if dup else vals
    k.jac_values[:] = A[jr, jc]
    k.sigma[:] = rng.random(nw)
    Q = rng.standard_normal((nw, r))
    c = rng.choice([-1.0, 1.0], r)
    if r:
        k.lowrank_Q[:] = Q
        k.lowrank_c[:] = c
    return k, H, A, Q, c


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("r", [0, 3])
def test_inertia_and_solve_match_dense(seed, r):
    rng = np.random.default_rng(seed)
    nw, m = 9, 4
    k, H, A, Q, c = _kkt(rng, nw, m, r)
    k.delta_w, k.delta_c = 0.3, 1e-4
    k.build()
    fact, ok = k.factorize()
    top = H + np.diag(k.sigma + 0.3) + (Q * c) @ Q.T
    K = np.block([[top, A.T], [A, -1e-4 * np.eye(m)]])
    ev = np.linalg.eigvalsh(K)
    assert ok == (((ev > 0).sum(), (ev < 0).sum()) == (nw, m))
    if fact.ok:
        # Haynsworth: inertia of the factorized (bordered) matrix = In(K) + In(-C)
        assert fact.n_pos == (ev > 0).sum() + (c < 0).sum()
        assert fact.n_neg == (ev < 0).sum() + (c > 0).sum()
        bw, bc = rng.standard_normal(nw), rng.standard_normal(m)
        dw, dy = k.solve(bw, bc)
        np.testing.assert_allclose(K @ np.r_[dw, dy], np.r_[bw, bc], atol=1e-8)


def test_singular_matrix_reports_zero_pivot():
    solver = make_linear_solver("qdldl")
    from caspar_backend.linsolve import SparseStructure

    # [[1, 1], [1, 1]] upper triangle CSC
    s = SparseStructure(2, np.array([0, 1, 3]), np.array([0, 0, 1]))
    solver.analyse(s)
    f = solver.factorize(np.array([1.0, 1.0, 1.0]))
    assert not f.ok and f.n_zero >= 1
    f = solver.factorize(np.array([1.0, 2.0, 1.0]))
    assert f.ok and f.inertia == (1, 1, 0)
