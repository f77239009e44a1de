"""The restoration phase's KKT system with its elastic pair (p, n) eliminated
(kkt/elastic.py), against the full Newton matrix of the problem with the pair: the
solution, the inertia test, the primal product, and the factorized matrix's static term
(the Schur complement of the full system's own)."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.kkt.augmented import AugmentedKKT
from caspar_backend.kkt.elastic import ElasticKKT
from caspar_backend.linsolve.qdldl import QDLDLSolver

pytest.importorskip("qdldl")


def _problem(seed, nw=7, m=3, nx=5, hess_scale=1.0):
    """A random original structure: x (nx) with a dense lower Hessian, slacks for the
    rows after the first (private columns), Jacobian rows over x plus their slack; the
    restoration Hessian pattern adds the diagonal on x (as RestorationNLP's)."""
    rng = np.random.default_rng(seed)
    hr, hc = np.tril_indices(nx)
    hr = np.concatenate([hr, np.arange(nx)])
    hc = np.concatenate([hc, np.arange(nx)])
    jr, jc = [], []
    for i in range(m):
        cols = rng.choice(nx, size=3, replace=False)
        jr += [i] * 3
        jc += list(cols)
        if i > 0 and nx + i - 1 < nw:
            jr.append(i)
            jc.append(nx + i - 1)
    jr, jc = np.array(jr), np.array(jc)
    hv = hess_scale * rng.standard_normal(len(hr))
    jv = rng.standard_normal(len(jr))
    jv[jc >= nx] = -1.0
    sigma = rng.uniform(0.1, 10.0, nw + 2 * m)
    return dict(nw=nw, m=m, hr=hr, hc=hc, jr=jr, jc=jc, hv=hv, jv=jv, sigma=sigma)


def _full_dense(P, delta_w, delta_c):
    """The Newton matrix of the problem with the pair, dense (order nw + 3m)."""
    nw, m = P["nw"], P["m"]
    n = nw + 2 * m
    H = np.zeros((n, n))
    np.add.at(H, (P["hr"], P["hc"]), P["hv"])
    H = H + np.tril(H, -1).T
    H += np.diag(P["sigma"] + delta_w)
    A = np.zeros((m, n))
    A[P["jr"], P["jc"]] = P["jv"]
    A[np.arange(m), nw + np.arange(m)] = -1.0
    A[np.arange(m), nw + m + np.arange(m)] = 1.0
    return np.block([[H, A.T], [A, -delta_c * np.eye(m)]])


def _elastic(P, eps=0.0):
    k = ElasticKKT(P["nw"], P["m"], P["hr"], P["hc"], P["jr"], P["jc"], QDLDLSolver(),
                   static_regularization=eps)
    k.hess_values[:] = P["hv"]
    k.sigma[:] = P["sigma"]
    nj, m = len(P["jr"]), P["m"]
    k.jac_values[:nj] = P["jv"]
    k.jac_values[nj:nj + m], k.jac_values[nj + m:] = -1.0, 1.0
    return k


def _dense(values, structure):
    """The symmetric matrix of an upper-triangle CSC."""
    n = structure.n
    M = np.zeros((n, n))
    for j in range(n):
        for q in range(structure.indptr[j], structure.indptr[j + 1]):
            M[structure.indices[q], j] = values[q]
            M[j, structure.indices[q]] = values[q]
    return M


@pytest.mark.parametrize("eps", [0.0, 1e-8])
@pytest.mark.parametrize("delta_w,delta_c", [(0.0, 0.0), (1e-4, 0.0), (1e-2, 1e-6)])
def test_solution_is_the_full_systems(eps, delta_w, delta_c):
    P = _problem(0, hess_scale=0.1)
    k = _elastic(P, eps)
    k.delta_w, k.delta_c = delta_w, delta_c
    k.build()
    fact, ok = k.factorize()
    K = _full_dense(P, delta_w, delta_c)
    ev = np.linalg.eigvalsh(K)
    n, m = P["nw"] + 2 * P["m"], P["m"]
    assert ok == (int((ev > 0).sum()) == n and int((ev < 0).sum()) == m)
    assert ok
    rng = np.random.default_rng(1)
    rw, rc = rng.standard_normal(n), rng.standard_normal(m)
    dw, dy = k.solve(rw, rc)
    ref = np.linalg.solve(K, np.concatenate([rw, rc]))
    assert dw.shape == (n,) and dy.shape == (m,)
    np.testing.assert_allclose(np.concatenate([dw, dy]), ref, rtol=1e-9, atol=1e-11)
    assert k.last_residual_ratio <= 1e-10
    # (W + Sigma + delta_w I) v over all nw + 2m columns
    v = rng.standard_normal(n)
    np.testing.assert_allclose(k.primal_matvec(v), K[:n, :n] @ v, rtol=1e-12, atol=1e-12)
    assert k.expected_inertia() == (n, m, 0)


def test_inertia_test_is_the_full_systems():
    """A Hessian with negative curvature on x: the reduced system's inertia test fails
    exactly when the full system lacks the inertia (nw + 2m, m, 0)."""
    for seed in range(12):
        P = _problem(seed, hess_scale=3.0)
        k = _elastic(P)
        for delta_w in (0.0, 1e-2, 1.0, 10.0, 100.0):
            k.delta_w, k.delta_c = delta_w, 0.0
            k.build()
            _, ok = k.factorize()
            ev = np.linalg.eigvalsh(_full_dense(P, delta_w, 0.0))
            n, m = P["nw"] + 2 * P["m"], P["m"]
            want = int((ev > 1e-12).sum()) == n and int((ev < -1e-12).sum()) == m
            assert ok == want, (seed, delta_w)


@pytest.mark.parametrize("sigma_pn", [1.0, 1e12])
def test_static_term_is_the_schur_complement_of_the_full_systems(sigma_pn):
    """With delta_w > 0 (no column term) the factorized reduced matrix is the Schur
    complement, on the pair, of the factorized full matrix (AugmentedKKT of the problem
    with the pair): the rows' static term counts the pair as the full system's private
    columns, also where the pair's pivots are tiny (an active p or n, Sigma ~ 1e12)."""
    P = _problem(3)
    nw, m = P["nw"], P["m"]
    P["sigma"][nw:] = sigma_pn
    eps, delta_w = 1e-6, 1e-3
    k = _elastic(P, eps)
    k.delta_w = delta_w
    k.build()
    rows = np.arange(m)
    full = AugmentedKKT(nw + 2 * m, m, P["hr"], P["hc"],
                        np.concatenate([P["jr"], rows, rows]),
                        np.concatenate([P["jc"], nw + rows, nw + m + rows]), QDLDLSolver(),
                        static_regularization=eps)
    full.hess_values[:] = P["hv"]
    full.sigma[:] = P["sigma"]
    full.jac_values[:] = np.concatenate([P["jv"], -np.ones(m), np.ones(m)])
    full.delta_w = delta_w
    full.build()
    F = _dense(full.values, full.structure)
    pair = np.arange(nw, nw + 2 * m)
    keep = np.r_[np.arange(nw), nw + 2 * m + rows]
    schur = (F[np.ix_(keep, keep)] - F[np.ix_(keep, pair)]
             @ np.linalg.solve(F[np.ix_(pair, pair)], F[np.ix_(pair, keep)]))
    R = _dense(k.values, k.reduced.structure)
    np.testing.assert_allclose(R, schur, rtol=1e-12, atol=1e-15 * np.abs(schur).max())
    # the term is not trivially eps: row 0 (no slack) is bounded by its tiny pair's pivot
    assert (k.reduced._ec[0] < eps) == (sigma_pn > 1e6)
