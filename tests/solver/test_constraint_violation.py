"""The user's constraint violation as IPOPT measures it (issue 23).

IPOPT's ``unscaled_curr_nlp_constraint_violation`` (IpIpoptCalculatedQuantities.cpp) is

    max( |c(x)| / dc_c,  max(d_L - d(x), 0) / dc_d,  max(d(x) - d_U, 0) / dc_d )

(max-norm, ``d`` scaled) with ``d_L``, ``d_U`` the inequality sides *relaxed* by
OrigIpoptNLP::relax_bounds, ``b -+ min(constr_viol_tol, bound_relax_factor max(1, |b|))``;
the equalities ``c = g - g_L`` are not relaxed, and bound_relax_factor = 0 relaxes
nothing.  It is the constr_viol of the termination tests, of the log's inf_pr column
(inf_pr_output = original) and of the summary's "Constraint violation" (unscaled).

The reference problem: min (x - 170)^2 + (y - 85)^2 s.t. x^2 + y^2 <= 8000 from
(386, 94), with loose tolerances (tol 1, constr_viol_tol 1.5, compl_inf_tol 10) and
bound_relax_factor 3e-3, so the side 8000 is relaxed by min(1.5, 24) = 1.5.  The
iterates approach the disc from outside; at iteration 7 the violation of the relaxed
side is 0.875 <= 1.5 (IPOPT stops: 7 iterations) while that of the user's side is
2.375 > 1.5 (measured so, caspar ran an eighth iteration).
"""

from __future__ import annotations

import re

import casadi as cs
import numpy as np
import pytest

from caspar_backend import from_casadi

B_UP = 8000.0
X0 = [386.0, 94.0]
OPTS = {"tol": 1.0, "constr_viol_tol": 1.5, "bound_relax_factor": 3e-3,
        "compl_inf_tol": 10.0}
RELAX = min(OPTS["constr_viol_tol"], OPTS["bound_relax_factor"] * B_UP)   # 1.5


def _nlp():
    x = cs.SX.sym("x", 2)
    return {"x": x, "f": (x[0] - 170.0) ** 2 + (x[1] - 85.0) ** 2,
            "g": x[0] ** 2 + x[1] ** 2}


def _args():
    return dict(x0=X0, lbg=-np.inf, ubg=B_UP)


@pytest.fixture(scope="module")
def problem():
    return from_casadi(_nlp())


def _ipopt_output(ipopt, tmp_path, options):
    """IPOPT's run and its output file: (run, (scaled, unscaled) "Constraint violation",
    the inf_pr column of the iteration table)."""
    out = tmp_path / "ipopt.out"
    run = ipopt(_nlp(), _args(), dict(options, output_file=str(out), file_print_level=5))
    text = out.read_text()
    m = re.search(r"^Constraint violation\.+:\s+(\S+)\s+(\S+)", text, re.M)
    inf_pr = [float(r.group(1)) for r in
              re.finditer(r"^ *\d+r? +\S+ +(\S+) +\S+ +\S+ ", text, re.M)]
    return run, (float(m.group(1)), float(m.group(2))), inf_pr


def _solve(problem, **options):
    return problem.solve(**_args(), print_level=0, compiled_path="no",
                         **dict(OPTS, **options))


def test_summary_violation_is_ipopts_relaxed_one(problem, ipopt, tmp_path):
    run, (scaled, unscaled), inf_pr = _ipopt_output(ipopt, tmp_path, OPTS)
    r = _solve(problem)
    assert r.status == run.status == "Solve_Succeeded"
    assert r.iterations == run.iterations == 7
    fe = r.final_errors
    assert abs(fe["unscaled"]["constr"] - unscaled) <= 1e-9 * unscaled
    assert abs(fe["scaled"]["constr"] - scaled) <= 1e-9 * scaled
    # the user's side is violated by the relaxation more (0.875 + 1.5 = 2.375): the
    # measure IPOPT does not use, above constr_viol_tol
    unrelaxed = r.g[0] - B_UP
    assert unrelaxed > OPTS["constr_viol_tol"] >= fe["unscaled"]["constr"]
    assert abs(unrelaxed - RELAX - fe["unscaled"]["constr"]) <= 1e-9 * unrelaxed
    # the log's inf_pr column (IPOPT prints it with 3 digits)
    assert len(inf_pr) == len(r.history) == 8
    for k, rec in enumerate(r.history):
        assert f"{rec.inf_pr:.2e}" == f"{inf_pr[k]:.2e}", k


def test_summary_text_prints_the_relaxed_violation(problem):
    import io

    buf = io.StringIO()
    r = problem.solve(**_args(), print_level=5, stream=buf, compiled_path="no", **OPTS)
    m = re.search(r"^Constraint violation\.+:\s+(\S+)\s+(\S+)", buf.getvalue(), re.M)
    assert float(m.group(2)) == r.final_errors["unscaled"]["constr"]
    assert float(m.group(2)) < r.g[0] - B_UP - 1.0


@pytest.mark.parametrize("max_iter", [0, 3])
def test_early_stop_violation_matches_ipopt(problem, ipopt, tmp_path, max_iter):
    """Stopped on an infeasible iterate: the violation reported is the user's one less
    the relaxation, as IPOPT's (iteration 0: x0 itself, bit for bit up to round-off)."""
    run, (_, unscaled), _ = _ipopt_output(ipopt, tmp_path, dict(OPTS, max_iter=max_iter))
    r = _solve(problem, max_iter=max_iter)
    assert r.status == run.status == "Maximum_Iterations_Exceeded"
    v = r.final_errors["unscaled"]["constr"]
    assert abs(v - unscaled) <= 1e-10 * unscaled
    assert abs(r.g[0] - B_UP - RELAX - v) <= 1e-11 * v


def test_without_relaxation_the_user_bound(problem, ipopt, tmp_path):
    """bound_relax_factor = 0: no relaxation, the violation is the user side's, and
    IPOPT's and caspar's runs take the same (longer) way."""
    opts = dict(OPTS, bound_relax_factor=0.0)
    run, (_, unscaled), _ = _ipopt_output(ipopt, tmp_path, opts)
    r = _solve(problem, bound_relax_factor=0.0)
    assert (r.status, r.iterations) == (run.status, run.iterations)
    v = r.final_errors["unscaled"]["constr"]
    assert abs(v - unscaled) <= 1e-9 * max(unscaled, 1e-12)
    assert abs(v - max(0.0, r.g[0] - B_UP)) <= 1e-9 * max(v, 1e-12)


# ------------------------------------------------------------------ other paths
def test_compiled_path_agrees(problem):
    pytest.importorskip("numba")
    from caspar_backend.compiled import solve_compiled, warmup

    warmup()
    e = _solve(problem)
    for max_iter in (3, 3000):
        r = solve_compiled(problem, np.array(X0), None, lbg=[-np.inf], ubg=[B_UP],
                           print_level=0, max_iter=max_iter, **OPTS)
        e = _solve(problem, max_iter=max_iter)
        assert r is not None and r.extra["path"] == "compiled"
        assert (r.status, r.iterations) == (e.status, e.iterations)
        assert r.final_errors["unscaled"]["constr"] == e.final_errors["unscaled"]["constr"]
        assert [h.inf_pr for h in r.history] == [h.inf_pr for h in e.history]
    assert r.iterations == 7


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "lockstep"])
def test_solve_batch_agrees(problem, monkeypatch, kernel):
    """solve_batch on the CPU (the compiled kernel, or the lockstep interior point):
    the relaxed violation in its termination test too -- 7 iterations, as IPOPT."""
    from caspar_backend.batch import solve as batch_solve

    if kernel:
        pytest.importorskip("numba")
        from caspar_backend.compiled.dispatch import kernels_ready

        kernels_ready(wait=True)
    monkeypatch.setattr(batch_solve, "KERNEL_ON_CPU", kernel)
    X = np.array([X0, [380.0, 100.0]])
    res = problem.solve_batch(x0=X, lbg=-np.inf, ubg=B_UP, print_level=0, **OPTS)
    assert set(res.path) == {"kernel" if kernel else "lockstep"}
    for b in range(2):
        e = problem.solve(x0=X[b], lbg=-np.inf, ubg=B_UP, print_level=0,
                          compiled_path="no", **OPTS)
        assert (res.status[b], res.iterations[b]) == (e.status, e.iterations)
        np.testing.assert_allclose(res.x[b], e.x, rtol=1e-12)
    assert res.iterations[0] == 7


# ------------------------------------------------------------------ the rule itself
def test_rule_on_mixed_rows():
    """SlackNLP and BatchSlackNLP against the rule written out, at points whose
    violations are of the size of the relaxation: equalities (not relaxed), two-sided,
    one-sided and free rows, scaled rows (gradients above 100), relaxations capped by
    constr_viol_tol and not, bound_relax_factor = 0."""
    from caspar_backend.batch.backends import make_batch_evaluator
    from caspar_backend.batch.nlp import BatchSlackNLP
    from caspar_backend.solver.nlp import EvalCounter, SlackNLP
    from caspar_backend.solver.options import resolve_options

    x = cs.SX.sym("x", 3)
    g = cs.vertcat(x[0] + x[1], 300.0 * x[0] * x[1], x[1] - x[2] ** 2, 1e4 * x[2],
                   x[0] ** 2 + x[2], x[0] - x[1])
    P = from_casadi({"x": x, "f": cs.sumsqr(x), "g": g})
    gfun = cs.Function("g", [x], [g])
    lbx, ubx = np.full(3, -10.0), np.full(3, 10.0)
    rng = np.random.default_rng(3)
    for brf in (1e-8, 1e-5, 0.0):
        opts = resolve_options(dict(bound_relax_factor=brf))
        cvt = opts.constr_viol_tol
        differs = 0                 # trials where the relaxation changes the answer
        for trial in range(10):
            xt = rng.uniform(0.5, 2.0, 3) * rng.choice([-1.0, 1.0], 3)
            gx = np.asarray(gfun(xt)).ravel()
            r = np.minimum(cvt, np.maximum(brf * np.maximum(1.0, np.abs(gx)), 1e-8))
            d = rng.uniform(-3.0, 3.0, 6) * r
            d[[0, 5]] *= 1e-2                      # equalities: below the others
            lbg = np.array([gx[0] + d[0], gx[1] + d[1], -np.inf, gx[3] + d[3], -np.inf,
                            gx[5] + d[5]])
            ubg = np.array([lbg[0], lbg[1] + 1e3, gx[2] + d[2], np.inf, np.inf, lbg[5]])
            nlp1 = SlackNLP(P.evaluator(), lbx, ubx, lbg, ubg, xt, opts, EvalCounter())
            assert np.any(nlp1.dc != 1.0)
            # the rule: inequality sides relaxed by min(cvt, brf max(1, |b|))
            fin_l, fin_u = np.isfinite(lbg), np.isfinite(ubg)
            rl = np.where(fin_l, lbg - np.minimum(cvt, brf * np.maximum(
                1.0, np.abs(np.where(fin_l, lbg, 0.0)))), lbg)
            ru = np.where(fin_u, ubg + np.minimum(cvt, brf * np.maximum(
                1.0, np.abs(np.where(fin_u, ubg, 0.0)))), ubg)
            eq = lbg == ubg
            rows = np.where(eq, np.abs(gx - lbg),
                            np.maximum(0.0, np.maximum(rl - gx, gx - ru)))
            unrelaxed = np.where(eq, np.abs(gx - lbg),
                                 np.maximum(0.0, np.maximum(lbg - gx, gx - ubg)))
            ref = rows.max()
            s = nlp1.dc[nlp1.slack_rows] * gx[nlp1.slack_rows] + rng.normal(size=nlp1.ns)
            w = np.concatenate([xt, s])
            hv = nlp1.h(w, np.zeros(nlp1.m))
            v1 = nlp1.unscaled_constr_viol(w, hv)
            assert abs(v1 - ref) <= 1e-12 * np.abs(gx).max(), (brf, trial)
            if brf == 0:
                assert ref == unrelaxed.max()
            else:
                differs += unrelaxed.max() - ref >= 0.5 * r.min()
            bev = make_batch_evaluator(P, 1, "cpu")
            bev.set_params(np.zeros((1, 0)))
            nlpb = BatchSlackNLP(bev, lbx[None], ubx[None], lbg[None], ubg[None], xt[None],
                                 opts)
            H = np.zeros((1, nlp1.m))
            nlpb.zeroth(w[None], np.zeros(1), H)
            vb = nlpb.unscaled_constr_viol(w[None], H)
            assert vb.shape == (1,) and vb[0] == v1
        assert brf == 0 or differs >= 5, differs
