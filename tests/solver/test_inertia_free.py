"""``inertia_correction_method = 'inertia-free'`` (caspar/solver/ipm.py
``_curvature_corrected``; Chiang & Zavala 2016, MadNLP's InertiaFree): a factorization is
accepted by the curvature test of its direction, never by the inertia the linear solver
reports -- for solvers whose inertia is not exact (cuDSS 0.8's static pivoting)."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("casadi")
pytest.importorskip("qdldl")

from caspar_backend.errors import OptionError  # noqa: E402
from caspar_backend.linsolve.qdldl import QDLDLSolver  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import run_caspar, run_ipopt  # noqa: E402

FREE = {"inertia_correction_method": "inertia-free"}


def _problem(name):
    p = next(b for b in bank() if b.name == name)
    return dict(p.build(), options=p.options)


@pytest.mark.parametrize("name", ["hs007", "hs036", "bound_only_nonconvex"])
def test_curvature_test_perturbs_and_reaches_ipopt(name):
    """Nonconvex problems where the curvature test raises delta_w on several iterations:
    IPOPT's status, objective (1e-8) and iteration count."""
    d = _problem(name)
    ri = run_ipopt(d)
    r = run_caspar(d, FREE)
    assert r.status == ri["status"] == "Solve_Succeeded"
    assert r.f == pytest.approx(ri["f"], rel=1e-8)
    assert r.iterations == ri["iter"]
    assert any(h.regularization > 0 for h in r.history)


def test_reported_inertia_is_not_read(monkeypatch):
    """A linear solver that misreports every inertia (one eigenvalue's sign flipped):
    the inertia-based correction never accepts a factorization and fails, the
    inertia-free one solves exactly as with the true inertia."""
    d = _problem("hs007")
    ref = run_caspar(d, FREE)
    true_factorize = QDLDLSolver.factorize

    def misreporting(self, values):
        f = true_factorize(self, values)
        return dataclasses.replace(f, n_pos=f.n_pos + 1, n_neg=max(f.n_neg - 1, 0))

    monkeypatch.setattr(QDLDLSolver, "factorize", misreporting)
    r = run_caspar(d, FREE)
    assert (r.status, r.iterations, r.f) == (ref.status, ref.iterations, ref.f)
    based = run_caspar(d)
    assert based.status != "Solve_Succeeded" or based.iterations != ref.iterations


@pytest.mark.parametrize("extra", [{"kkt_system": "condensed"},
                                   {"hessian_approximation": "limited-memory"}])
def test_inertia_free_needs_augmented_exact_hessian(extra):
    with pytest.raises(OptionError, match="inertia-free"):
        run_caspar(_problem("hs007"), {**FREE, **extra})


def test_primal_matvec_is_the_first_block_without_the_static_term():
    """AugmentedKKT.primal_matvec: (W + Sigma + delta_w I) v against a dense product, with
    an off-diagonal Hessian entry, a Jacobian and the static term on."""
    import numpy as np

    from caspar_backend.kkt.augmented import AugmentedKKT

    k = AugmentedKKT(nw=3, m=1, hess_rows=[0, 1, 2, 2], hess_cols=[0, 1, 0, 2],
                     jac_rows=[0, 0], jac_cols=[0, 2], linear_solver=QDLDLSolver(),
                     static_regularization=1e-9)
    k.hess_values[:] = [2.0, 1e-3, -0.5, 4.0]
    k.jac_values[:] = [1.0, 3.0]
    k.sigma[:] = [0.1, 0.0, 7.0]
    k.delta_w = 1e-4
    k.build()
    k.factorize()                     # the product is the last factorized matrix's
    W = np.array([[2.0, 0.0, -0.5], [0.0, 1e-3, 0.0], [-0.5, 0.0, 4.0]])
    H = W + np.diag([0.1, 0.0, 7.0]) + 1e-4 * np.eye(3)
    v = np.array([0.3, -1.2, 2.5])
    np.testing.assert_allclose(k.primal_matvec(v), H @ v, rtol=1e-15, atol=1e-15)
    k.delta_w = 0.0                   # the static term is in the factorized matrix only
    k.build()
    k.factorize()
    assert np.any(k._dstat[:3] != 0.0)
    np.testing.assert_allclose(k.primal_matvec(v), (H - 1e-4 * np.eye(3)) @ v, rtol=1e-14,
                               atol=1e-15)
