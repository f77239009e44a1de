"""The dense Bunch-Kaufman factorization of a small K (compiled/kernels/bunch_kaufman.py
and its NumPy twin linsolve/bunch_kaufman.py): inertia against eigenvalues, solves
against the matrix, a singular K's rounding-residue pivot reported as zero, the two
implementations equal bit for bit -- and what it is for: a small badly scaled model
(Pyomo's parmest reactor_design) solved in IPOPT's iterations, where the static term
of the unpivoted factorization stalled it at max_iter."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from caspar_backend.linsolve.base import SparseStructure
from caspar_backend.linsolve.bunch_kaufman import HostBunchKaufman
from caspar_backend.linsolve.dense_kkt import SMALL_PIVOTING_MAX_N, small_pivoting

numba = pytest.importorskip("numba")


def _kernel(structure):
    from caspar_backend.compiled.ldl import KernelLDL, LDLTables

    tables = LDLTables(structure, dense=True)
    return KernelLDL(tables)


def _upper(K):
    """(structure, values) of K's upper triangle with every diagonal entry stored."""
    n = K.shape[0]
    U = sp.triu(sp.csc_matrix(K) + sp.eye(n, format="csc")).tocsc()
    U.sort_indices()
    U.data = np.triu(K)[U.indices, np.repeat(np.arange(n), np.diff(U.indptr))]
    return SparseStructure(n, U.indptr.astype(np.int64), U.indices.astype(np.int64)), U.data


def _random_kkt(rng, dependent=False):
    nw = int(rng.integers(2, 25))
    m = int(rng.integers(1, nw + 1))
    H = rng.standard_normal((nw, nw)) * (rng.random((nw, nw)) < 0.4)
    H = H + H.T + np.diag(rng.standard_normal(nw))
    J = rng.standard_normal((m, nw)) * (rng.random((m, nw)) < 0.5)
    J[np.arange(m), rng.permutation(nw)[:m]] += 2.0
    if dependent and m > 1:
        J[-1] = 3.0 * J[0]
    return np.block([[H, J.T], [J, np.zeros((m, m))]])


@pytest.mark.parametrize("seed", range(40))
def test_inertia_solve_and_bitwise_twin(seed):
    rng = np.random.default_rng(seed)
    K = _random_kkt(rng)
    structure, values = _upper(K)
    ker, host = _kernel(structure), HostBunchKaufman(structure)
    got = ker.factorize(values)
    assert host.factorize(values) == got
    assert np.array_equal(host.A[np.triu_indices(K.shape[0])],
                          ker.dense_factors()[np.triu_indices(K.shape[0])])
    ev = np.linalg.eigvalsh(K)
    if np.min(np.abs(ev)) < 1e-8 * np.max(np.abs(ev)):
        pytest.skip("nearly singular draw")
    assert got == (int(np.sum(ev > 0)), int(np.sum(ev < 0)), 0)
    b = rng.standard_normal(K.shape[0])
    x = ker.solve(b)
    assert np.array_equal(host.solve(b), x)
    assert np.allclose(K @ x, b, rtol=0, atol=1e-10 * np.abs(K).max() * np.abs(x).max())


@pytest.mark.parametrize("seed", range(20))
def test_twins_agree_on_singular_matrices(seed):
    """A dependent constraint row: both report the same counts (a zero pivot where the
    residue lands on the diagonal -- the rule's reach, kernel module doc)."""
    K = _random_kkt(np.random.default_rng(100 + seed), dependent=True)
    structure, values = _upper(K)
    ker, host = _kernel(structure), HostBunchKaufman(structure)
    assert ker.factorize(values) == host.factorize(values)
    assert np.array_equal(host.A[np.triu_indices(K.shape[0])],
                          ker.dense_factors()[np.triu_indices(K.shape[0])])


def test_rounding_residue_counts_as_zero():
    """hs061 at its start: J = [[3, 0, 0], [4, 0, 0]] leaves the second constraint's
    pivot -2 + 2 = 2.2e-16 after rounding (LAPACK's dsytrf reports it as a pivot)."""
    K = np.zeros((5, 5))
    K[:3, :3] = np.diag([8.0, 4.0, 4.0])
    K[3, 0] = K[0, 3] = 3.0
    K[4, 0] = K[0, 4] = 4.0
    structure, values = _upper(K)
    assert _kernel(structure).factorize(values)[2] > 0
    assert HostBunchKaufman(structure).factorize(values)[2] > 0


def test_a_tiny_genuine_pivot_is_kept():
    """A pivot small because its row is small (not a cancellation) stays a pivot."""
    K = np.diag([1e8, 1e-9, -1.0])
    K[2, 0] = K[0, 2] = 1e3
    structure, values = _upper(K)
    assert _kernel(structure).factorize(values) == (2, 1, 0)


def test_the_rule_is_by_size():
    assert small_pivoting(1) and small_pivoting(SMALL_PIVOTING_MAX_N)
    assert not small_pivoting(0) and not small_pivoting(SMALL_PIVOTING_MAX_N + 1)


def _reactor_design(sv):
    ca = pytest.importorskip("casadi")
    x = ca.SX.sym("x", 7)
    k1, k2, k3, A, B, C, D = (x[i] for i in range(7))
    caf = 10000.0
    g = ca.vertcat(sv * caf - sv * A - k1 * A - 2.0 * k3 * A ** 2,
                   -sv * B + k1 * A - k2 * B, -sv * C + k2 * B, -sv * D + k3 * A ** 2)
    args = dict(x0=[5 / 6, 5 / 3, 1 / 6000, 5000, 2000, 2000, 1000], lbx=0, ubx=ca.inf,
                lbg=0, ubg=0)
    return {"x": x, "f": -B, "g": g}, args


@pytest.mark.parametrize("sv", [1.05, 1.3, 1.9])
@pytest.mark.parametrize("compiled", ["yes", "no"])
def test_parmest_reactor_design_in_ipopts_iterations(ipopt, sv, compiled):
    """Pyomo's parmest reactor_design example (7 variables, k3 ~ 1e-4 against
    concentrations ~5e3): with the unpivoted factorization's static term caspar ended at
    max_iter (3000) for 18 of parmest's 19 space velocities, IPOPT converges in 34-62."""
    from caspar_backend.casadi import nlpsol

    nlp, args = _reactor_design(sv)
    ref = ipopt(nlp, args, {})
    S = nlpsol("S", "caspar", nlp, {"print_time": 0, "caspar": {
        "print_level": 0, "compiled_path": compiled}})
    r = S(**args)
    assert S.stats()["return_status"] == ref.status == "Solve_Succeeded"
    assert S.stats()["iter_count"] == ref.iterations
    assert abs(float(r["f"]) - ref.f) <= 1e-8 * abs(ref.f)
