"""CasADi Functions that cannot be written as SX, solved as opaque calls.

NLPs with a linear and a bspline interpolant, a cvodes integrator (multiple shooting as
a loop and as ``map``, single shooting: nested calls), an idas integrator of a DAE
(multiple shooting), and a ``casadi.Callback`` with a
Jacobian, each against IPOPT (``casadi.nlpsol('ipopt')`` in the same test: objective to
1e-6 relative, status, solution); the composed derivatives against CasADi's own exact
derivatives of the same NLP and against finite differences; the solver log's line per
opaque Function; the errors (no derivatives, GPU, batch-only features) naming the
Function.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from caspar_backend.adapters.casadi import from_casadi
from caspar_backend.casadi import nlpsol
from caspar_backend.derivative_check import check_derivatives
from caspar_backend.errors import DeviceError, EvaluationError, ModelError

QC = {"caspar": {"print_level": 0, "tol": 1e-10}, "print_time": False}
QI = {"ipopt": {"print_level": 0, "sb": "yes", "tol": 1e-10}, "print_time": False}
GRID = np.linspace(0.0, 3.0, 12)


# ------------------------------------------------------------------ problems
def interpolant_nlp(kind):
    """Two calls of one 1-D interpolant (objective and constraint) plus a 2-D one,
    and a parameter in an argument."""
    lut = ca.interpolant("lut", kind, [GRID], np.sin(GRID) + 0.1 * GRID ** 2)
    g2 = np.linspace(-1.0, 2.0, 7)
    xx, yy = np.meshgrid(g2, g2, indexing="ij")
    lut2 = ca.interpolant("lut2", "bspline", [g2, g2], (xx ** 2 + xx * yy).ravel(order="F"))
    x, p = ca.MX.sym("x", 3), ca.MX.sym("p")
    f = (lut(x[0] + 0.5 * p) - 0.5) ** 2 + (x[1] - 1) ** 2 + 0.1 * x[0] * x[1] + lut2(ca.vertcat(x[2], x[1]))
    g = ca.vertcat(x[0] + lut(x[1] + p), x[2] - 0.5 * x[0])
    return ({"x": x, "p": p, "f": f, "g": g},
            dict(x0=[1.0, 1.0, 0.2], p=0.1, lbx=[0.0, 0.0, -1.0], ubx=[2.9, 2.0, 2.0],
                 lbg=[0.5, -1.0], ubg=[2.0, 1.0]))


N_MS, T_MS = 10, 2.0


def _integrator():
    s, u = ca.SX.sym("s", 2), ca.SX.sym("u")
    ode = {"x": s, "u": u, "ode": ca.vertcat(s[1], -s[0] + u), "quad": s[0] ** 2 + u ** 2}
    return ca.integrator("I", "cvodes", ode, 0.0, T_MS / N_MS,
                         {"abstol": 1e-10, "reltol": 1e-10})


def shooting_nlp(mode):
    """A 2-state oscillator steered over N_MS intervals by one cvodes integrator:
    multiple shooting as a loop of calls or one ``map``, or single shooting (each call
    reads the previous one's result)."""
    I = _integrator()
    U = ca.MX.sym("U", N_MS)
    if mode == "single":
        xk, J = ca.DM([1.0, 0.0]), 0
        for k in range(N_MS):
            r = I(x0=xk, u=U[k])
            xk, J = r["xf"], J + r["qf"]
        return ({"x": U, "f": J, "g": xk},
                dict(x0=0.1, lbx=-1.0, ubx=1.0, lbg=-0.2, ubg=0.2))
    X = ca.MX.sym("X", 2, N_MS + 1)
    g = [X[:, 0] - ca.DM([1.0, 0.0])]
    if mode == "loop":
        J = 0
        for k in range(N_MS):
            r = I(x0=X[:, k], u=U[k])
            g.append(r["xf"] - X[:, k + 1])
            J += r["qf"]
    else:
        r = I.map(N_MS)(x0=X[:, :N_MS], u=U.T)
        g.append(ca.vec(r["xf"] - X[:, 1:]))
        J = ca.sum2(r["qf"])
    J += 10 * ca.sumsqr(X[:, N_MS])
    nx = 2 * (N_MS + 1)
    return ({"x": ca.vertcat(ca.vec(X), U), "f": J, "g": ca.vertcat(*g)},
            dict(x0=0.1, lbx=np.r_[np.full(nx, -np.inf), np.full(N_MS, -1.0)],
                 ubx=np.r_[np.full(nx, np.inf), np.full(N_MS, 1.0)], lbg=0.0, ubg=0.0))


def dae_shooting_nlp():
    """Multiple shooting with an idas integrator of a semi-explicit index-1 DAE: the
    oscillator driven through an algebraic variable z (z + z^3 / 10 = u - s0 / 2)."""
    s, z, u = ca.SX.sym("s", 2), ca.SX.sym("z"), ca.SX.sym("u")
    dae = {"x": s, "z": z, "p": u, "ode": ca.vertcat(s[1], -s[0] + z),
           "alg": z + z ** 3 / 10 - u + s[0] / 2, "quad": s[0] ** 2 + z ** 2}
    I = ca.integrator("D", "idas", dae, 0.0, T_MS / N_MS,
                      {"abstol": 1e-10, "reltol": 1e-10})
    U, X = ca.MX.sym("U", N_MS), ca.MX.sym("X", 2, N_MS + 1)
    g, J = [X[:, 0] - ca.DM([1.0, 0.0])], 0
    for k in range(N_MS):
        r = I(x0=X[:, k], p=U[k])
        g.append(r["xf"] - X[:, k + 1])
        J += r["qf"]
    J += 10 * ca.sumsqr(X[:, N_MS])
    nx = 2 * (N_MS + 1)
    return ({"x": ca.vertcat(ca.vec(X), U), "f": J, "g": ca.vertcat(*g)},
            dict(x0=0.1, lbx=np.r_[np.full(nx, -np.inf), np.full(N_MS, -1.0)],
                 ubx=np.r_[np.full(nx, np.inf), np.full(N_MS, 1.0)], lbg=0.0, ubg=0.0))


class JacCallback(ca.Callback):
    """``(x0 - 1)^2 + 3 sin(x1) x0`` in Python, with its Jacobian as an MX Function."""

    def __init__(self, name, opts=None):
        ca.Callback.__init__(self)
        self.construct(name, opts or {})

    def get_n_in(self):
        return 1

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(2, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(1, 1)

    def eval(self, arg):
        x = np.asarray(arg[0], dtype=float).ravel()
        return [(x[0] - 1.0) ** 2 + 3.0 * np.sin(x[1]) * x[0]]

    def has_jacobian(self):
        return True

    def get_jacobian(self, name, inames, onames, opts):
        x, out = ca.MX.sym("x", 2), ca.MX.sym("out", 1)
        J = ca.horzcat(2 * (x[0] - 1) + 3 * ca.sin(x[1]), 3 * ca.cos(x[1]) * x[0])
        return ca.Function(name, [x, out], [J], inames, onames, opts)


_KEEP = []  # casadi holds Callbacks by raw pointer: keep them alive


def callback_nlp():
    cb = JacCallback("cb")
    _KEEP.append(cb)
    x = ca.MX.sym("x", 3)
    f = cb(x[:2]) + x[2] ** 2 + cb(ca.vertcat(x[2], x[0]))
    return ({"x": x, "f": f, "g": x[0] ** 2 + x[1] ** 2 + x[2]},
            dict(x0=[0.5, 0.5, 0.1], lbx=-2.0, ubx=2.0, lbg=0.5, ubg=3.0))


CASES = {
    "linear_interpolant": lambda: interpolant_nlp("linear"),
    "bspline_interpolant": lambda: interpolant_nlp("bspline"),
    "cvodes_multiple_shooting": lambda: shooting_nlp("loop"),
    "cvodes_multiple_shooting_map": lambda: shooting_nlp("map"),
    "cvodes_single_shooting": lambda: shooting_nlp("single"),
    "idas_dae_multiple_shooting": dae_shooting_nlp,
    "callback_with_jacobian": callback_nlp,
}
#: the opaque Functions each case's log names: (name, calls)
LOGGED = {"linear_interpolant": [("lut", 2), ("lut2", 1)],
          "bspline_interpolant": [("lut", 2), ("lut2", 1)],
          "cvodes_multiple_shooting": [("I", N_MS)],
          "cvodes_multiple_shooting_map": [("I", N_MS)],
          "cvodes_single_shooting": [("I", N_MS)],
          "idas_dae_multiple_shooting": [("D", N_MS)],
          "callback_with_jacobian": [("cb", 2)]}


# ------------------------------------------------------------------ solves
@pytest.mark.parametrize("case", sorted(CASES))
def test_solves_to_ipopt(case, capsys):
    nlp, args = CASES[case]()
    ref = ca.nlpsol("ref", "ipopt", nlp, QI)
    r0 = ref(**args)
    S = nlpsol("S", "caspar", nlp, {**QC, "caspar": {"tol": 1e-10, "print_level": 5}})
    capsys.readouterr()
    r1 = S(**args)
    log = capsys.readouterr().out
    assert S.stats()["return_status"] == ref.stats()["return_status"] == "Solve_Succeeded"
    f0, f1 = float(r0["f"]), float(r1["f"])
    assert abs(f1 - f0) <= 1e-6 * max(1.0, abs(f0)), (f0, f1)
    # the exact composition takes IPOPT's iterates (not those of a lifted problem) --
    # except through idas, whose sensitivities are accurate to ~1e-5 only: IPOPT's own
    # iteration count moves from 21 to 12 when the integrator's tolerances go from 1e-10
    # to 1e-12 (caspar: 12 and 13), the solution stays
    if not case.startswith("idas"):
        assert S.stats()["iter_count"] == ref.stats()["iter_count"]
    np.testing.assert_allclose(np.ravel(r1["x"]), np.ravel(r0["x"]), atol=1e-5)
    np.testing.assert_allclose(np.ravel(r1["lam_g"]), np.ravel(r0["lam_g"]), atol=1e-5)
    if "p" in nlp:  # d f*/d p through the opaque calls' arguments
        np.testing.assert_allclose(np.ravel(r1["lam_p"]), np.ravel(r0["lam_p"]), atol=1e-5)
        assert np.abs(np.ravel(r0["lam_p"])).max() > 1e-3
    for name, calls in LOGGED[case]:
        line = next((ln for ln in log.splitlines() if ln.startswith(f"Opaque function '{name}'")),
                    None)
        assert line is not None, log[:2000]
        assert f" {calls} call" in line and "evaluated on the host" in line


def test_parameter_changes_without_recompiling():
    nlp, args = interpolant_nlp("bspline")
    ref = ca.nlpsol("ref", "ipopt", nlp, QI)
    S = nlpsol("S", "caspar", nlp, QC)
    problem = S.problem
    for p in (0.1, 0.4):
        a = dict(args, p=p)
        f0, f1 = float(ref(**a)["f"]), float(S(**a)["f"])
        assert abs(f1 - f0) <= 1e-6 * max(1.0, abs(f0))
        assert S.problem is problem


def test_solution_sensitivity_against_ipopt_differences():
    # dx*/dp through nlpsol's forward derivative (the KKT system at the solution, with
    # the opaque calls composed) against central differences of IPOPT's solutions
    nlp, args = interpolant_nlp("bspline")
    ref = ca.nlpsol("ref", "ipopt", nlp, QI)
    S = nlpsol("S", "caspar", nlp, QC)
    P = ca.MX.sym("P")
    dx = ca.Function("dx", [P], [ca.jacobian(S(**dict(args, p=P))["x"], P)])
    h = 1e-4
    fd = (np.ravel(ref(**dict(args, p=0.1 + h))["x"])
          - np.ravel(ref(**dict(args, p=0.1 - h))["x"])) / (2 * h)
    np.testing.assert_allclose(np.ravel(dx(0.1)), fd, atol=1e-5)
    assert np.abs(fd).max() > 1e-2


# ------------------------------------------------------------------ derivatives
def _casadi_derivatives(nlp, x, p, lam, sigma):
    """f, g, grad f, J and the Lagrangian Hessian from CasADi itself (exact AD)."""
    X, P = nlp["x"], nlp.get("p", ca.MX(0, 1))
    f, g = nlp["f"], nlp["g"]
    L = sigma * f + ca.dot(ca.MX(lam), g)
    F = ca.Function("F", [X, P], [f, g, ca.gradient(f, X), ca.jacobian(g, X),
                                  ca.hessian(L, X)[0]])
    return [np.asarray(ca.DM(v).full()) for v in F(x, p)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_derivatives_against_casadi_and_finite_differences(case):
    nlp, args = CASES[case]()
    problem = from_casadi(nlp)
    rng = np.random.default_rng(3)
    lo, hi = np.broadcast_to(args["lbx"], (problem.n,)), np.broadcast_to(args["ubx"], (problem.n,))
    x0 = np.broadcast_to(np.asarray(args["x0"], float), (problem.n,))
    x = np.clip(x0 + 0.2 * rng.standard_normal(problem.n), np.maximum(lo, -5), np.minimum(hi, 5))
    p = np.atleast_1d(args.get("p", np.zeros(0))).astype(float)
    lam = rng.standard_normal(problem.m)
    ev = problem.evaluator("cpu", p=p)
    f, g, gf, J, H = _casadi_derivatives(nlp, x, p, lam, 0.7)
    assert abs(ev.obj(x) - f.item()) <= 1e-10 * max(1, abs(f.item()))
    np.testing.assert_allclose(ev.cons(x), g.ravel(), rtol=1e-10, atol=1e-12)
    # an integrator's sensitivities are as accurate as its tolerances (1e-10): casadi's
    # own reverse mode and the composition's forward Jacobians differ at ~1e-8
    tol = 1e-6 if case.startswith(("cvodes", "idas")) else 1e-9
    np.testing.assert_allclose(ev.grad(x), gf.ravel(), rtol=1e-7, atol=tol)
    np.testing.assert_allclose(ev.jac(x).toarray(), J, rtol=1e-7, atol=tol)
    np.testing.assert_allclose(ev.hess(x, lam, 0.7).toarray(), H, rtol=1e-6, atol=10 * tol)
    # finite differences of the composed values and gradients (idas: its forward
    # sensitivities and its values differ by ~1e-5 relative; casadi's AD above agrees)
    rep = check_derivatives(ev, x, lam, 0.7, tol=1e-4 if case.startswith("idas") else 1e-5)
    assert rep.ok, str(rep)


def test_levels_of_nested_calls():
    # single shooting: each call reads the previous result, one level per interval
    nlp, _ = shooting_nlp("single")
    ev = from_casadi(nlp).evaluator("cpu")
    assert ev.n_levels == N_MS
    assert any("levels" in ln for ln in ev.log_lines())
    # multiple shooting: every call reads only x, one level
    nlp, _ = shooting_nlp("map")
    ev = from_casadi(nlp).evaluator("cpu")
    assert ev.n_levels == 1 and [len(i) for _, _, i in ev.schedule] == [N_MS]


def test_mapped_calls_are_one_host_call(monkeypatch):
    from caspar_backend.adapters.casadi.opaque import CasadiHostFunction

    sizes = []
    orig = CasadiHostFunction.values

    def values(self, A):
        sizes.append(A.shape[1])
        return orig(self, A)

    monkeypatch.setattr(CasadiHostFunction, "values", values)
    nlp, args = shooting_nlp("loop")
    ev = from_casadi(nlp).evaluator("cpu")
    ev.obj(np.full(ev.n, 0.1))
    assert sizes == [N_MS]  # ten call sites, one mapped evaluation


class Guarded(ca.Callback):
    """``x^4/4 - x`` that raises beyond x = 3 (a table's end); with its Jacobian."""

    def __init__(self, name):
        ca.Callback.__init__(self)
        self.construct(name, {})

    def get_n_in(self):
        return 1

    def get_n_out(self):
        return 1

    def eval(self, arg):
        v = float(arg[0])
        if v > 3.0:
            raise ValueError("outside the table")
        return [v ** 4 / 4 - v]

    def has_jacobian(self):
        return True

    def get_jacobian(self, name, inames, onames, opts):
        x, o = ca.MX.sym("x"), ca.MX.sym("o")
        return ca.Function(name, [x, o], [x ** 3 - 1], inames, onames, opts)


def test_evaluation_error_cuts_the_step_back_as_ipopt(capfd):
    # the first Newton step from 0.1 lands at 4.4, where the Callback raises: NaN
    # values, the step is cut back (IPOPT: "Cutting back alpha due to evaluation error")
    cb = Guarded("guarded")
    _KEEP.append(cb)
    x = ca.MX.sym("x")
    nlp = {"x": x, "f": cb(x)}
    ref = ca.nlpsol("ref", "ipopt", nlp, QI)
    r0 = ref(x0=0.1, lbx=-10, ubx=10)
    assert "outside the table" in capfd.readouterr().err
    S = nlpsol("S", "caspar", nlp, QC)
    r1 = S(x0=0.1, lbx=-10, ubx=10)
    assert "outside the table" in capfd.readouterr().err  # caspar met it too
    assert S.stats()["return_status"] == ref.stats()["return_status"] == "Solve_Succeeded"
    assert S.stats()["iter_count"] == ref.stats()["iter_count"]
    assert abs(float(r1["x"]) - 1.0) < 1e-6 and abs(float(r1["f"]) - float(r0["f"])) < 1e-10


# ------------------------------------------------------------------ errors
class NoDerivatives(ca.Callback):
    def __init__(self, name):
        ca.Callback.__init__(self)
        self.construct(name, {})

    def get_n_in(self):
        return 1

    def get_n_out(self):
        return 1

    def eval(self, arg):
        return [(float(arg[0]) - 1.0) ** 2]


def test_function_without_derivatives_is_named():
    cb = NoDerivatives("black_box")
    _KEEP.append(cb)
    x = ca.MX.sym("x")
    with pytest.raises(ModelError, match="'black_box'.*no first derivatives"):
        nlpsol("S", "caspar", {"x": x, "f": cb(x)}, QC)


class FirstOrderOnly(JacCallback):
    """A Jacobian that is itself a Callback without derivatives: no Hessian."""

    def get_jacobian(self, name, inames, onames, opts):
        inner = JacOnly(name, opts)
        _KEEP.append(inner)
        return inner


class JacOnly(ca.Callback):
    def __init__(self, name, opts):
        ca.Callback.__init__(self)
        self.construct(name, {})

    def get_n_in(self):
        return 2

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(2, 1) if i == 0 else ca.Sparsity.dense(1, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(1, 2)

    def eval(self, arg):
        x = np.asarray(arg[0], dtype=float).ravel()
        return [np.array([[2 * (x[0] - 1) + 3 * np.sin(x[1]), 3 * np.cos(x[1]) * x[0]]])]


def test_no_second_derivatives_limited_memory():
    cb = FirstOrderOnly("first_order")
    _KEEP.append(cb)
    x = ca.MX.sym("x", 2)
    nlp = {"x": x, "f": cb(x) + x[1] ** 2}
    ev = from_casadi(nlp).evaluator("cpu")
    with pytest.raises(EvaluationError, match="'first_order'.*limited-memory"):
        ev.hess_values(np.array([0.5, 0.5]), np.zeros(0), 1.0)
    opts = {"print_time": False, "ipopt": {"print_level": 0, "sb": "yes",
                                           "hessian_approximation": "limited-memory"}}
    r0 = ca.nlpsol("ref", "ipopt", nlp, opts)(x0=[0.5, 0.5], lbx=-2, ubx=2)
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {
        "print_level": 0, "hessian_approximation": "limited-memory"}})
    r1 = S(x0=[0.5, 0.5], lbx=-2, ubx=2)
    assert S.stats()["return_status"] == "Solve_Succeeded"
    assert abs(float(r1["f"]) - float(r0["f"])) <= 1e-6 * max(1.0, abs(float(r0["f"])))


def test_gpu_is_refused_naming_the_function():
    nlp, _ = interpolant_nlp("linear")
    problem = from_casadi(nlp)
    with pytest.raises(DeviceError, match="'lut' \\(LinearInterpolant\\).*device='cpu'"):
        problem.evaluator("cuda")
    assert problem.resolve_device("auto") == "cpu"
    with pytest.raises(DeviceError, match="'lut' \\(LinearInterpolant\\)"):
        problem.solve_batch(p=np.zeros((2, 1)), device="cuda")


def test_batch_solves_each_instance_by_its_own_solve():
    """No batched evaluator for host functions: every instance of solve_batch is its own
    Problem.solve (path 'single', the reason naming the functions); not on a cluster."""
    nlp, args = interpolant_nlp("linear")
    problem = from_casadi(nlp)
    bounds = {k: args[k] for k in ("lbx", "ubx", "lbg", "ubg")}
    P = np.array([[0.1], [0.3]])
    res = problem.solve_batch(x0=args["x0"], p=P, print_level=0, **bounds)
    assert list(res.path) == ["single", "single"] and "'lut'" in res.reason[0]
    for b in range(2):
        s = problem.solve(x0=args["x0"], p=P[b], print_level=0, **bounds)
        assert (res.status[b], res.iterations[b], res.f[b]) == (s.status, s.iterations, s.f)
        np.testing.assert_array_equal(res.x[b], s.x)
    with pytest.raises(ModelError, match="Dask cluster.*'lut'"):
        problem.solve_batch(p=P, client=object())


def test_several_columns_solve_one_by_one():
    nlp, args = interpolant_nlp("bspline")
    S = nlpsol("S", "caspar", nlp, QC)
    ref = ca.nlpsol("ref", "ipopt", nlp, QI)
    a = dict(args, p=ca.DM([[0.1, 0.3]]))
    r1 = S(**a)
    for b, p in enumerate((0.1, 0.3)):
        f0 = float(ref(**dict(args, p=p))["f"])
        assert abs(float(r1["f"][b]) - f0) <= 1e-6 * max(1.0, abs(f0))


def test_log_goes_to_output_file(tmp_path):
    nlp, args = interpolant_nlp("linear")
    path = tmp_path / "out.txt"
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {
        "print_level": 0, "output_file": str(path)}})
    S(**args)
    text = path.read_text()
    assert "Opaque function 'lut' (LinearInterpolant): 2 calls" in text


def test_external_codegen_function(tmp_path):
    # a code-generated, compiled and loaded casadi.external with its derivatives
    import shutil
    import subprocess

    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to build the external function")
    a = ca.SX.sym("a", 2)
    F = ca.Function("extf", [a], [ca.vertcat(ca.sin(a[0]) * a[1] ** 2,
                                             ca.exp(0.3 * a[0]) + a[1])])
    cg = ca.CodeGenerator("extf.c")
    for fn in (F, F.jacobian(), F.reverse(1), F.reverse(1).jacobian()):
        cg.add(fn)
    src = cg.generate(str(tmp_path) + "/")
    lib = str(tmp_path / "extf.so")
    subprocess.check_call([cc, "-shared", "-fPIC", "-O1", src, "-o", lib])
    E = ca.external("extf", lib)
    x = ca.MX.sym("x", 2)
    y = E(x)
    nlp = {"x": x, "f": (y[0] - 0.3) ** 2 + (y[1] - 2) ** 2 + 0.1 * ca.sumsqr(x),
           "g": x[0] + x[1]}
    args = dict(x0=[0.5, 0.5], lbg=0.5, ubg=3.0)
    ref = ca.nlpsol("ref", "ipopt", nlp, QI)
    S = nlpsol("S", "caspar", nlp, QC)
    f0, f1 = float(ref(**args)["f"]), float(S(**args)["f"])
    assert S.stats()["return_status"] == ref.stats()["return_status"] == "Solve_Succeeded"
    assert abs(f1 - f0) <= 1e-6 * max(1.0, abs(f0))
    assert [g.fn.kind for g in S.problem.model.opaque.groups] == ["External"]
    rep = check_derivatives(from_casadi(nlp).evaluator("cpu"), np.array([0.4, 1.1]),
                            np.array([0.7]), 1.0, tol=1e-5)
    assert rep.ok, str(rep)


def test_sx_input_and_opti():
    lut = ca.interpolant("lut", "bspline", [GRID], np.sin(GRID) + 0.1 * GRID ** 2)
    x = ca.SX.sym("x", 2)
    nlp = {"x": x, "f": (lut(x[0]) - 0.5) ** 2 + (x[1] - 1) ** 2, "g": x[0] + lut(x[1])}
    args = dict(x0=[1.0, 1.0], lbx=0.0, ubx=3.0, lbg=0.5, ubg=2.0)
    f0 = float(ca.nlpsol("ref", "ipopt", nlp, QI)(**args)["f"])
    assert abs(float(nlpsol("S", "caspar", nlp, QC)(**args)["f"]) - f0) <= 1e-6
    from caspar_backend.casadi import Opti

    values = []
    for cls, name in ((Opti, "caspar"), (ca.Opti, "ipopt")):
        opti = cls()
        y = opti.variable(2)
        opti.minimize((lut(y[0]) - 0.5) ** 2 + (y[1] - 2.5) ** 2)
        opti.subject_to(opti.bounded(0.5, y[0] + lut(y[1]), 2.0))
        opti.subject_to(opti.bounded(0.0, y, 3.0))
        opti.set_initial(y, [1.0, 1.0])
        opti.solver(name, {"print_time": False}, {"print_level": 0, "tol": 1e-10})
        values.append(opti.solve().value(opti.f))
    assert abs(values[0] - values[1]) <= 1e-6 * max(1.0, abs(values[1]))


class Refuses(ca.Callback):
    """A Callback that raises at every point (casadi's test_iteration_interrupt raises
    KeyboardInterrupt there)."""

    def __init__(self, name, exc):
        ca.Callback.__init__(self)
        self.exc = exc
        self.construct(name, {"enable_fd": True})

    def eval(self, arg):
        raise self.exc


@pytest.mark.parametrize("exc,text", [(ValueError("no table here"), "no table here"),
                                      (KeyboardInterrupt(), "KeyboardInterrupt")])
def test_a_failed_call_is_named_with_casadis_reason(exc, text):
    cb = Refuses("refuses", exc)
    _KEEP.append(cb)
    x = ca.MX.sym("x")
    S = nlpsol("S", "caspar", {"x": x, "f": cb(x), "g": x}, {**QC, "error_on_fail": True})
    with pytest.warns(UserWarning, match=text), pytest.raises(RuntimeError) as err:
        S(lbg=-5, ubg=5)
    assert "Invalid_Number_Detected" in str(err.value) and text in str(err.value)
    assert S.stats()["unified_return_status"] == "SOLVER_RET_NAN"
