"""Function.map call sites as TemplateBlocks: the blocked model evaluates and
solves exactly like the replay path (``blocks=False``), and the patterns that
cannot be blocked fall back to replay."""

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from tests.support.assertions import close  # noqa: E402
from tests.support.casadi_corpus import CASES  # noqa: E402

from caspar_backend.adapters.casadi import casadi_to_model  # noqa: E402
from caspar_backend.adapters.casadi.models import vanderpol_ocp  # noqa: E402
from caspar_backend.problem import Problem  # noqa: E402


def _same_evaluation(pb, pr, xs, ps=(None,), tol=1e-12):
    eb, er = pb.evaluator(), pr.evaluator()
    rng = np.random.default_rng(7)
    for x in xs:
        for p in ps:
            lam = rng.standard_normal(pb.m)
            kw = {} if p is None else {"p": p}
            for fb, fr in ((eb.obj(x, **kw), er.obj(x, **kw)),
                           (eb.grad(x, **kw), er.grad(x, **kw)),
                           (eb.cons(x, **kw), er.cons(x, **kw)),
                           (eb.jac(x, **kw), er.jac(x, **kw)),
                           (eb.hess(x, lam, 0.7, **kw), er.hess(x, lam, 0.7, **kw))):
                close(fb, fr, tol)


def test_demo_model_yields_blocks_and_matches_replay():
    N = 10**4
    nlp, args = vanderpol_ocp(N)
    mb = casadi_to_model(nlp, **args)
    mr = casadi_to_model(nlp, blocks=False, **args)
    assert mb.constraint_blocks and mb.objective_blocks
    assert not mr.constraint_blocks
    assert mb.meta["map_blocks"] == [(f"map{N}_step", N, 0)]
    assert mb.constraints == []          # the defect rows' -x_{k+1} went into the template
    pb, pr = Problem(mb), Problem(mr)
    assert len(pb.constraint_groups) == 2   # one per state component
    rng = np.random.default_rng(0)
    _same_evaluation(pb, pr, [rng.uniform(-1, 1, pb.n) for _ in range(2)] + [mb.x0])


def test_demo_model_solves_like_replay():
    nlp, args = vanderpol_ocp(200)
    pb = Problem(casadi_to_model(nlp, **args))
    pr = Problem(casadi_to_model(nlp, blocks=False, **args))
    rb, rr = pb.solve(print_level=0), pr.solve(print_level=0)
    assert rb.status == rr.status and rb.iterations == rr.iterations
    assert rb.f == pytest.approx(rr.f, rel=1e-10)


BLOCKED = {"mx_map": 2, "mx_map_mx_inner": 2, "mx_map_reduce": 2, "mx_thread_map": 2,
           "mx_nested_map": 1, "mx_map_unused_output": 1}
REPLAYED = ["mx_chained_maps", "mx_unrolled_calls"]


@pytest.mark.parametrize("name", sorted(BLOCKED) + REPLAYED)
def test_corpus_maps_match_replay(name):
    case = CASES[name]()
    mb = casadi_to_model(case.nlp, **case.kw)
    mr = casadi_to_model(case.nlp, blocks=False, **case.kw)
    n_blocks = len(mb.constraint_blocks) + len(mb.objective_blocks)
    assert n_blocks == BLOCKED.get(name, 0)
    pb, pr = Problem(mb), Problem(mr)
    rng = np.random.default_rng(1)
    xs, ps = zip(*[case.sample(rng) for _ in range(3)])
    _same_evaluation(pb, pr, xs, ps if mb.n_params else (None,))


def test_partly_blockable_map_replays_only_the_other_instances():
    """Instance 0's argument is computed (sin(x)), the last instance's result is used
    nonlinearly (a power), a constant argument varies per instance (a data slot), and
    the results enter g with per-instance factors."""
    N = 6
    a = ca.SX.sym("a")
    b = ca.SX.sym("b")
    F = ca.Function("F", [a, b], [ca.sin(a) * b + a ** 2])
    X = ca.MX.sym("X", 1, N + 1)
    P = ca.MX.sym("P")
    args = ca.horzcat(ca.sin(X[0]), X[1:N])
    c = ca.DM(np.linspace(0.5, 1.0, N)).T
    y = F.map(N)(args, c)
    w = ca.DM(np.arange(1.0, N + 1)).T
    g = ca.vertcat((w[:, :-1] * y[:, :-1] - P * X[:, 1:N]).T, y[:, -1] ** 3)
    nlp = {"x": X, "p": P, "f": ca.sumsqr(X), "g": g}
    mb = casadi_to_model(nlp, p=0.3)
    mr = casadi_to_model(nlp, p=0.3, blocks=False)
    assert mb.meta["map_blocks"] == [(f"map{N}_F", N - 2, 2)]
    blk = mb.constraint_blocks[0]
    assert blk.data_table.shape[0] == 2   # the varying constant and the factor
    pb, pr = Problem(mb), Problem(mr)
    rng = np.random.default_rng(3)
    _same_evaluation(pb, pr, [rng.uniform(-1, 1, N + 1) for _ in range(3)],
                     [np.array([0.3]), np.array([-1.1])])


def test_collocation_coefficients_equal_casadis():
    """Our Lagrange-polynomial coefficients against casadi's own ``collocation_coeff``
    (which leaves out tau_0's column of C and its zero quadrature weight)."""
    from caspar_backend.adapters.casadi.models import collocation_coefficients

    for d, scheme in ((3, "legendre"), (4, "radau"), (2, "legendre")):
        tau, C, D, B = collocation_coefficients(d, scheme)
        Cc, Dc, Bc = ca.collocation_coeff(ca.collocation_points(d, scheme))
        np.testing.assert_allclose(C[:, 1:], np.array(Cc), atol=1e-12)
        np.testing.assert_allclose(D, np.array(Dc).ravel(), atol=1e-12)
        np.testing.assert_allclose(B[1:], np.array(Bc).ravel(), atol=1e-12)
        assert abs(B[0]) < 1e-12


def test_collocation_ocp_blocks_and_ipopt(ipopt):
    """The direct-collocation Van der Pol problem: one map block whose evaluation equals the
    replayed graph's; caspar's solve equals IPOPT's (same iterations); and the collocation
    optimum agrees with the multiple-shooting discretization's (an independent one) as both
    converge to the continuous optimum."""
    from caspar_backend.adapters.casadi.models import vanderpol_collocation

    N = 40
    nlp, args = vanderpol_collocation(N)
    mb = casadi_to_model(nlp, **args)
    mr = casadi_to_model(nlp, blocks=False, **args)
    assert mb.meta["map_blocks"] == [(f"map{N}_interval", N, 0)] and not mr.constraint_blocks
    pb, pr = Problem(mb), Problem(mr)
    assert (pb.n, pb.m) == (9 * N + 2, 8 * N)
    rng = np.random.default_rng(1)
    _same_evaluation(pb, pr, [rng.uniform(-1, 1, pb.n) for _ in range(2)] + [mb.x0])

    ref = ipopt(nlp, args, {"tol": 1e-8})
    r = pb.solve(print_level=0, tol=1e-8)
    assert r.status == "Solve_Succeeded" == ref.status
    assert r.iterations == ref.iterations
    assert r.f == pytest.approx(ref.f, rel=1e-9)
    np.testing.assert_allclose(r.x, ref.x, atol=1e-6)

    colloc, shoot = (_solve_casadi(*make(400)) for make in (vanderpol_collocation, vanderpol_ocp))
    assert colloc.status == shoot.status == "Solve_Succeeded"
    assert colloc.f == pytest.approx(shoot.f, rel=1e-4)


def _solve_casadi(nlp, args):
    return Problem(casadi_to_model(nlp, **args)).solve(print_level=0)


def test_estimation_map_blocks_squares_and_scaled_arguments(ipopt):
    """CasADi's system-identification example by multiple shooting
    (benchmarks/models/estimation.py): every instance of its map is a block -- scaled
    parameters as arguments, results in both the continuity rows and the squared
    residuals of f -- with the replayed model's values and derivatives, and IPOPT's
    solve (a zero-residual fit)."""
    from benchmarks.models.estimation import estimation_nlp

    N = 20
    nlp, args = estimation_nlp(N, "multiple")
    x0 = args["x0"]
    mb = casadi_to_model(nlp, **args)
    mr = casadi_to_model(nlp, blocks=False, **args)
    assert mb.meta["map_blocks"] == [(f"map{N}_one_sample", N, 0)]
    names = sorted(b.name for b in mb.constraint_blocks + mb.objective_blocks)
    assert any(n.endswith("^2") for n in names)          # the squared residuals
    pb, pr = Problem(mb), Problem(mr)
    rng = np.random.default_rng(2)
    _same_evaluation(pb, pr, [x0 * (1 + rng.uniform(-0.1, 0.1, pb.n)) for _ in range(3)])
    ref = ipopt(nlp, args, {"tol": 1e-8})
    r = pb.solve(print_level=0, tol=1e-8)
    assert r.status == ref.status == "Solve_Succeeded"
    assert r.iterations == ref.iterations
    assert r.f == pytest.approx(ref.f, abs=1e-18)
    np.testing.assert_allclose(r.x, ref.x, atol=1e-5)
