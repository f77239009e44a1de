"""The CasADi adapter: values and derivatives against CasADi, op coverage,
pattern groups from ``Function.map``, and clear errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402  (the public lazy path)
from caspar_backend.adapters.casadi import casadi_to_model  # noqa: E402
from caspar_backend.adapters.casadi import optable as T  # noqa: E402
from caspar_backend.adapters.casadi.compiler import Compiler  # noqa: E402
from caspar_backend.adapters.casadi.program import SXProgram  # noqa: E402
from caspar_backend.errors import ModelError, NonFiniteError, UnsupportedOpError  # noqa: E402
from caspar_backend.expr import Graph  # noqa: E402

from tests.support.assertions import close  # noqa: E402
from tests.support.casadi_corpus import CASES, build  # noqa: E402

VAL_TOL = 1e-10
DER_TOL = 1e-8


# ---------------------------------------------------------------- references
class Reference:
    """CasADi's own f, g, grad f, jac g and Lagrangian Hessian of a case."""

    def __init__(self, nlp):
        x = nlp["x"]
        sym = type(x)
        p = nlp.get("p", sym(0, 1))
        f = nlp.get("f", sym(1, 1))
        f = f if isinstance(f, sym) else sym(f)
        g = nlp.get("g", sym(0, 1))
        g = g if isinstance(g, sym) else sym(g)
        gz = g.nz[:] if g.nnz() else sym(0, 1)     # constraints = nonzeros of g
        lam = sym.sym("lam", gz.nnz())
        sigma = sym.sym("sigma")
        lag = sigma * f + (ca.dot(lam, gz) if gz.nnz() else 0)
        self.shape = (x.size1(), x.size2())
        # derivatives w.r.t. the symbol x itself; their columns follow x's
        # column-major nonzero order, which is caspar's variable order
        self.fun = ca.Function("ref", [x, p, lam, sigma],
                               [f, gz, ca.gradient(f, x), ca.jacobian(gz, x),
                                ca.hessian(lag, x)[0]])

    def __call__(self, x, p, lam, sigma):
        X = ca.reshape(ca.DM(x), *self.shape)
        f, g, gr, J, H = self.fun(X, p, lam, sigma)
        dense = lambda v: np.array(ca.densify(v).full())  # noqa: E731
        return (float(f), dense(g).ravel(), dense(gr).ravel(order="F"), dense(J),
                dense(H))


# ---------------------------------------------------------- differential test
def _host(a):
    return a.get() if hasattr(a, "get") else a


@pytest.mark.filterwarnings("error:caspar:UserWarning")  # a lost map split fails
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_agrees_with_casadi(name, device):
    case = build(name)
    prob = from_casadi(case.nlp, **case.kw)
    ref = Reference(case.nlp)
    ev = prob.evaluator(device)
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    for _ in range(3):
        x, p = case.sample(rng)
        lam = rng.uniform(-2.0, 2.0, prob.m)
        sigma = rng.uniform(0.5, 2.0)
        f, g, gr, J, H = ref(x, p, lam, sigma)
        close(float(ev.obj(x, p=p)), f, VAL_TOL)
        close(_host(ev.cons(x, p=p)), g, VAL_TOL)
        close(_host(ev.grad(x, p=p)), gr, DER_TOL)
        close(ev.jac(x, p=p).toarray(), J, DER_TOL)
        close(ev.hess(x, lam, sigma, p=p).toarray(), H, DER_TOL)
    if case.name.startswith("mx_map") or "maps" in case.name:
        assert casadi_to_model(case.nlp, **case.kw).meta["maps"], "map structure lost"
    if case.groups is not None:
        assert len([gr for gr in prob.groups if gr.kind == "constraints"]) == case.groups


def test_defaults_follow_nlpsol():
    x = ca.SX.sym("x", 2)
    m = casadi_to_model({"x": x, "f": ca.sumsqr(x), "g": x[0] + x[1]})
    assert list(m.lbx) == [-np.inf] * 2 and list(m.ubx) == [np.inf] * 2
    assert list(m.lbg) == [-np.inf] and list(m.ubg) == [np.inf]
    assert list(m.x0) == [0.0, 0.0] and m.n_params == 0
    assert ca.nlpsol_default_in(ca.nlpsol_in().index("lbg")) == -np.inf
    assert m.var_names == ["x_0", "x_1"] and m.con_names == ["g[0]"]
    m = casadi_to_model({"x": x, "f": x[0]}, lbx=ca.DM([1, 2]), ubx=3.0, x0=np.array([1.5, 2.5]))
    assert list(m.lbx) == [1, 2] and list(m.ubx) == [3, 3] and list(m.x0) == [1.5, 2.5]


def test_names_from_symbols():
    X = ca.MX.sym("X", 2)
    u = ca.MX.sym("u")
    P = ca.MX.sym("P", 2)
    m = casadi_to_model({"x": ca.veccat(X, u), "f": ca.dot(X, X) * u, "p": P,
                         "g": X * P})
    assert m.var_names == ["X[0]", "X[1]", "u"]
    assert m.param_names == ["P[0]", "P[1]"]
    assert m.con_names == ["g[0]", "g[1]"]


def test_parameters_are_slots_not_constants():
    x = ca.SX.sym("x")
    p = ca.SX.sym("p")
    prob = from_casadi({"x": x, "f": (x - p) ** 2, "g": p * x, "p": p}, p=3.0)
    assert list(prob.p) == [3.0]
    ev = prob.evaluator()
    assert ev.obj(np.array([1.0])) == pytest.approx(4.0)
    assert ev.obj(np.array([1.0]), p=np.array([-1.0])) == pytest.approx(4.0)
    assert ev.cons(np.array([2.0]), p=np.array([5.0]))[0] == pytest.approx(10.0)


# ------------------------------------------------------------- map structure
def test_map_of_10k_is_one_group_and_not_expanded():
    N = 10**4
    a = ca.SX.sym("a")
    b = ca.SX.sym("b")
    F = ca.Function("F", [a, b], [a * ca.exp(b) - ca.sin(a * b)])
    X = ca.MX.sym("X", 1, N + 1)
    g = F.map(N)(X[:, :-1], X[:, 1:]).T
    m = casadi_to_model({"x": X, "f": ca.sumsqr(X), "g": g})
    assert m.meta["maps"] == [("map10000_F", N)]
    from caspar_backend.problem import Problem

    prob = Problem(m)
    cgroups = [gr for gr in prob.groups if gr.kind == "constraints"]
    assert len(cgroups) == 1 and cgroups[0].size == N
    ogroups = [gr for gr in prob.groups if gr.kind == "objective"]
    assert len(ogroups) == 1 and ogroups[0].size == N + 1
    xv = np.random.default_rng(1).uniform(-1, 1, N + 1)
    ref = np.array(ca.Function("r", [X], [g])(xv)).ravel()
    close(prob.evaluator().cons(xv), ref, VAL_TOL)


def test_keep_calls_matches_full_expansion():
    case = build("mx_chained_maps")
    m1 = casadi_to_model(case.nlp, **case.kw)
    m2 = casadi_to_model(case.nlp, keep_calls=False, **case.kw)
    assert m1.meta["maps"] and not m2.meta["maps"]
    from caspar_backend.expr import evaluate

    x = np.linspace(-0.9, 0.9, m1.n)
    v1 = evaluate([m1.objective, *m1.constraints], x, m1.p)
    v2 = evaluate([m2.objective, *m2.constraints], x, m2.p)
    close(v1, v2, VAL_TOL)


# ---------------------------------------------------------------- op table
def _all_tables():
    return [set(T.DIRECT), set(T.COMPOSED), set(T.ALIAS), set(T.STRUCTURAL),
            set(T.REFUSED), set(T.MATRIX)]


def test_op_table_classifies_every_casadi_op_once():
    every = {k for k in dir(ca) if k.startswith("OP_")}
    tables = _all_tables()
    assert set().union(*tables) == every
    assert sum(len(t) for t in tables) == len(every), "an op is in two tables"


#: ALIAS ops the Python API cannot create (no SX/MX constructor exposed)
NOT_CONSTRUCTIBLE = {"OP_ASSIGN", "OP_LIFT"}


def _corpus_op_codes():
    used = set()
    for name in CASES:
        nlp = build(name).nlp
        x = nlp["x"]
        sym = type(x)
        fn = ca.Function("c", [x, nlp.get("p", sym(0, 1))],
                         [nlp.get("f", sym(1, 1)), nlp.get("g", sym(0, 1))])
        fns = [fn.expand() if sym is ca.MX else fn]
        while fns:
            f = fns.pop()
            ids = [f.instruction_id(k) for k in range(f.n_instructions())]
            used.update(ids)
            if T.CODES["OP_CALL"] in ids:
                ins = f.instructions_sx()
                fns += [ins[k].which_function() for k, i in enumerate(ids)
                        if i == T.CODES["OP_CALL"]]
                fns = [g.expand() if g.is_a("MXFunction") else g for g in fns]
    return {T.NAMES[c] for c in used}


def test_every_supported_op_is_exercised_by_the_corpus():
    supported = set(T.DIRECT) | set(T.COMPOSED) | set(T.ALIAS) | set(T.STRUCTURAL)
    missing = supported - _corpus_op_codes() - NOT_CONSTRUCTIBLE
    assert not missing, f"supported but never exercised: {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(T.REFUSED) + list(T.MATRIX))
def test_refused_ops_name_themselves(name):
    err = T.refuse(T.CODES[name], "casadi Function 'f'")
    assert name in str(err)
    assert isinstance(err, ModelError if name == "OP_PARAMETER" else UnsupportedOpError)
    assert T.kind_of(T.CODES[name]) == T.K_REFUSED


def test_unknown_op_code_is_refused():
    assert T.kind_of(10**6) == T.K_REFUSED
    assert "unknown op code" in str(T.refuse(10**6))


@pytest.mark.parametrize("op,build_expr", [
    ("OP_REMAINDER", lambda x: ca.remainder(x[0], x[1])),
    ("OP_ERFINV", lambda x: ca.erfinv(x[0] / 3)),
])
def test_unsupported_op_in_a_model(op, build_expr):
    x = ca.SX.sym("x", 2)
    with pytest.raises(UnsupportedOpError, match=op):
        casadi_to_model({"x": x, "f": ca.sumsqr(x), "g": build_expr(x)})


def test_alias_ops_are_identities():
    for name in T.ALIAS:
        assert T.kind_of(T.CODES[name]) == T.K_ALIAS


def test_free_parameter_instruction_is_a_model_error():
    x = ca.SX.sym("x")
    y = ca.SX.sym("ydangling")
    fn = ca.Function("f", [x], [x * y], {"allow_free": True})
    with pytest.raises(ModelError, match="ydangling"):
        SXProgram(fn, Compiler())


# ----------------------------------------------------------------- bad input
def _small():
    x = ca.SX.sym("x", 3)
    return {"x": x, "f": ca.sumsqr(x), "g": ca.vertcat(x[0] + x[1], x[1] * x[2])}


def test_nan_bound_names_the_variable():
    with pytest.raises(NonFiniteError, match="x_1"):
        casadi_to_model(_small(), lbx=[0, np.nan, 0])


def test_lb_above_ub_names_the_constraint():
    with pytest.raises(ModelError, match=r"g\[1\]"):
        casadi_to_model(_small(), lbg=[0, 2], ubg=[1, 1])


def test_infinite_x0_is_refused():
    with pytest.raises(NonFiniteError, match="x_2"):
        casadi_to_model(_small(), x0=[0, 0, np.inf])


def test_wrong_x0_length():
    with pytest.raises(ModelError, match="x0 has 2 entries, expected 3"):
        casadi_to_model(_small(), x0=[1, 2])
    with pytest.raises(ModelError, match="lbg has 3 entries, expected 2"):
        casadi_to_model(_small(), lbg=[1, 2, 3])


def test_wrong_p_length():
    x = ca.SX.sym("x")
    p = ca.SX.sym("p", 2)
    with pytest.raises(ModelError, match="p has 3 entries, expected 2"):
        casadi_to_model({"x": x, "f": x * p[0], "p": p}, p=[1, 2, 3])


@pytest.mark.parametrize("sym", [ca.SX, ca.MX])
def test_free_symbols_are_named(sym):
    x = sym.sym("x", 2)
    stray = sym.sym("stray")
    with pytest.raises(ModelError, match="stray"):
        casadi_to_model({"x": x, "f": ca.sumsqr(x) * stray})


def test_bad_dicts():
    x = ca.SX.sym("x", 2)
    with pytest.raises(ModelError, match="scalar"):
        casadi_to_model({"x": x, "f": x})
    with pytest.raises(ModelError, match="one symbol type"):
        casadi_to_model({"x": x, "f": ca.MX.sym("y")})
    with pytest.raises(ModelError, match="unknown keys"):
        casadi_to_model({"x": x, "f": x[0], "h": x})
    with pytest.raises(ModelError, match="SX or MX"):
        casadi_to_model({"x": [1, 2], "f": 0})
    with pytest.raises(ModelError, match="vector of symbols"):
        casadi_to_model({"x": 2 * x, "f": x[0]})
    with pytest.raises(ModelError, match="vector of symbols"):
        casadi_to_model({"x": x, "f": x[0], "p": 2 * ca.SX.sym("q")})
    X = ca.MX.sym("X")
    with pytest.raises(ModelError, match="expand"):
        casadi_to_model({"x": X, "f": X ** 2}, expand=False)


def test_non_expandable_function_is_an_opaque_call():
    # a CVODES integrator cannot be lowered to SX: its call is an opaque call evaluated
    # through casadi (tests/adapters/test_casadi_opaque.py solves such models)
    xs = ca.MX.sym("xs")
    I = ca.integrator("I", "cvodes", {"x": xs, "ode": -xs}, 0.0, 1.0)
    X = ca.MX.sym("X")
    m = casadi_to_model({"x": X, "f": I(x0=X)["xf"] ** 2})
    assert [(g.fn.name, g.fn.kind, g.size) for g in m.opaque.groups] == \
        [("I", "CvodesInterface", 1)]
    # without a registry (a compiler of its own) such a Function is refused, named
    from caspar_backend.adapters.casadi.compiler import Compiler

    with pytest.raises(UnsupportedOpError, match="'I'"):
        Compiler().compile(I)


def test_user_model_is_not_modified():
    case = build("mx_map")
    before = {k: str(v) for k, v in case.nlp.items()}
    casadi_to_model(case.nlp, **case.kw)
    assert {k: str(v) for k, v in case.nlp.items()} == before


def test_constant_entries_and_empty_problem():
    x = ca.SX.sym("x", 2)
    m = casadi_to_model({"x": x, "f": 3.0, "g": ca.DM([1.0, 2.0])}, bulk=False)
    assert m.objective.op == "const" and m.objective.attr == 3.0
    assert [c.attr for c in m.constraints] == [1.0, 2.0]
    m = casadi_to_model({"x": ca.SX.sym("z", 0)})
    assert m.n == 0 and m.m == 0


def test_graph_is_fresh_per_call():
    nlp = _small()
    a, b = casadi_to_model(nlp), casadi_to_model(nlp)
    assert isinstance(a.graph, Graph) and a.graph is not b.graph


def test_addition_chains_become_sums():
    x = ca.SX.sym("x", 50)
    m = casadi_to_model({"x": x, "f": ca.sumsqr(x) - ca.sum1(ca.sin(x)),
                         "g": ca.mtimes(ca.DM.ones(1, 50), x) + x[0] - x[1]}, bulk=False)
    assert m.objective.op == "sum" and len(m.objective.args) == 100
    assert m.constraints[0].op == "sum" and len(m.constraints[0].args) == 52
    # no intermediate partial sums were built
    assert sum(1 for nd in m.graph.nodes if nd.op == "add") == 0
    from caspar_backend.problem import Problem

    prob = Problem(m)
    assert sorted(gr.size for gr in prob.groups if gr.kind == "objective") == [50, 50]


def test_schedule_fallback_expands_whole(monkeypatch):
    """If casadi ever orders the outer program so that a call result is read
    before the call can run, the graph is expanded whole (warned, still right)."""
    from caspar_backend.adapters.casadi import compiler

    def refuse_schedule(self, sites, args):
        self.outer = None

    monkeypatch.setattr(compiler.MXCallProgram, "_schedule", refuse_schedule)
    case = build("mx_map")
    with pytest.warns(UserWarning, match="expanding it whole"):
        m = casadi_to_model(case.nlp, **case.kw)
    assert m.meta["maps"] == []
    ref = casadi_to_model(case.nlp, keep_calls=False, **case.kw)
    from caspar_backend.expr import evaluate

    x = np.linspace(-1, 1, m.n)
    close(evaluate(m.constraints, x, m.p), evaluate(ref.constraints, x, ref.p), VAL_TOL)
