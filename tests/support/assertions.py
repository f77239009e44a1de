"""The suite's shared assertions.

:func:`close` is the one elementwise comparison of computed values with a reference;
:func:`assert_matches_ipopt` is the one check of a caspar solve of a bank problem
against IPOPT's solve of it (status class, objective, iterations)."""

from __future__ import annotations

import numpy as np


def close(a, b, rtol, atol=None, msg=""):
    """Assert ``|a - b| <= max(atol, rtol |b|)`` elementwise (``atol`` defaults to ``rtol``:
    a relative error with a unit floor).  ``b`` is the reference.  Shapes must agree (up
    to singleton axes); non-finite entries must be equal (NaN matches NaN, an infinity the
    same infinity).  SciPy sparse matrices are compared where they differ, without
    densifying.

    (The form with ``max`` is the strictest of the helpers this one replaced:
    ``atol + rtol |b|`` allows up to twice as much.)"""
    atol = rtol if atol is None else atol
    if hasattr(a, "tocsr") or hasattr(b, "tocsr"):
        import scipy.sparse as sp

        a, b = sp.csr_matrix(a), sp.csr_matrix(b)
        assert a.shape == b.shape, (a.shape, b.shape, msg)
        d = (a - b).tocoo()            # the entries that differ at all
        a, b = (np.asarray(m[d.row, d.col], dtype=float).ravel() if d.nnz else np.zeros(0)
                for m in (a, b))
    else:
        # singleton axes aside: a CasADi column (n, 1) against a vector (n,)
        a, b = np.squeeze(np.asarray(a, dtype=float)), np.squeeze(np.asarray(b, dtype=float))
        assert a.shape == b.shape or a.size == b.size == 0, (a.shape, b.shape, msg)
        a, b = a.ravel(), b.ravel()
    fin = np.isfinite(b)
    assert np.array_equal(np.isfinite(a), fin), f"non-finite entries differ {msg}"
    assert np.array_equal(a[~fin], b[~fin], equal_nan=True), f"non-finite values {msg}"
    a, b = a[fin], b[fin]
    err = np.abs(a - b)
    bound = np.maximum(atol, rtol * np.abs(b))
    bad = np.flatnonzero(err > bound)
    assert bad.size == 0, (f"{bad.size} of {err.size} entries off, first at {bad[0]}: "
                           f"{a[bad[0]]!r} vs {b[bad[0]]!r} (rtol {rtol}, atol {atol}) {msg}")


def assert_matches_ipopt(problem, ri, rc, bank_kind=True, ipopt_at_f_opt=False):
    """caspar's result ``rc`` against IPOPT's ``ri`` (a :func:`~tests.support.
    solver_harness.run_ipopt` dict) on a bank problem: the same status class, the same
    objective (1e-6 relative) where optimal, at most ``2 n_IPOPT + 3`` iterations, and
    a restoration phase on the problems built to need one.

    With ``bank_kind`` IPOPT's status class must be the bank's and caspar's objective
    the published optimum ``f_opt`` where the bank has one (``ipopt_at_f_opt``: IPOPT's
    too)."""
    from caspar_backend.solver.status import STATUSES

    ki = STATUSES[ri["status"]].kind
    if bank_kind:
        assert ki == problem.kind, f"IPOPT itself: {ri['status']} (bank expects {problem.kind})"
    assert rc.kind == ki, f"caspar {rc.status} ({rc.message}) vs IPOPT {ri['status']}"
    if ki == "optimal":
        assert abs(rc.f - ri["f"]) <= 1e-6 * max(1.0, abs(ri["f"])) + 1e-8, (rc.f, ri["f"])
        if bank_kind and problem.f_opt is not None:
            f_opt = problem.f_opt
            assert abs(rc.f - f_opt) <= 1e-6 * max(1.0, abs(f_opt)), (rc.f, f_opt)
            if ipopt_at_f_opt:
                assert abs(ri["f"] - f_opt) <= 1e-6 * max(1.0, abs(f_opt)), (ri["f"], f_opt)
    assert rc.iterations <= 2 * ri["iter"] + 3, (rc.iterations, ri["iter"])
    if problem.name.startswith(("needs_restoration", "restoration")):
        assert any(r.restoration for r in rc.history), "restoration phase never ran"
