"""``nlpsol(..., 'caspar', ...)`` Functions serialize and load as IPOPT's do
(:mod:`caspar_backend.adapters.casadi.casadi_loader`, ``.nlpsol_serial``).

Rule: ``S.save(path)`` / ``S.serialize()`` -- and the same for any Function calling S,
for ``S.map(B)`` and for a graph holding S's derivatives -- then ``casadi.Function.load``
/ ``deserialize`` (in a fresh process, after importing caspar's CasADi front-end) gives
a Function whose calls return what the original's return, bit for bit.  In process the
compiled problem is found again by its uid; the tests that clear that table
(``forget``) make the load compile it again, as a fresh process does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

import caspar_backend.casadi as cc  # noqa: E402
from caspar_backend.adapters.casadi import casadi_loader, nlpsol_load, nlpsol_serial  # noqa: E402
from caspar_backend.casadi import NlpsolFunction, nlpsol  # noqa: E402
from caspar_backend.errors import ModelError  # noqa: E402

QUIET = {"print_time": False, "caspar": {"print_level": 0, "tol": 1e-10}}

try:                                    # the reader is built with the system C++ compiler
    casadi_loader._compiler()
except casadi_loader.LoaderError as _e:
    pytest.skip(f"no C++ compiler: {_e}", allow_module_level=True)


@pytest.fixture
def forget(monkeypatch):
    """``forget()``: loads after it compile the problem again, as a fresh process does
    (the uid table is emptied until the test ends)."""
    def empty():
        monkeypatch.setattr(nlpsol_serial, "_CORES",
                            nlpsol_serial.weakref.WeakValueDictionary())
    return empty


def _rosen(sym=ca.SX):
    x, p = sym.sym("x", 2), sym.sym("p")
    return {"x": x, "p": p, "f": (x[0] - p) ** 2 + 3 * (x[1] - x[0] ** 2) ** 2,
            "g": x[0] + x[1]}


CALL = dict(x0=[0.1, 0.2], p=1.5, lbg=-10, ubg=2.5)


def _same(a, b):
    for k in ("x", "f", "g", "lam_x", "lam_g", "lam_p"):
        assert np.array_equal(np.array(a[k]), np.array(b[k])), k


def test_round_trip_rebuilds_the_solver(forget):
    S = nlpsol("S", "caspar", _rosen(), QUIET)
    data = S.serialize()
    forget()
    F = ca.Function.deserialize(data)
    assert F.name_in() == S.name_in() and F.name_out() == S.name_out()
    _same(S(**CALL), F(**CALL))
    # casadi's nlpsol defaults survive (an unset ubx is +inf, not 0)
    assert float(F(x0=[0, 0], p=1.5)["x"][0]) == pytest.approx(1.5, abs=1e-6)


def test_caspar_load_gives_the_nlpsol_function(tmp_path, forget):
    S = nlpsol("S", "caspar", _rosen(), QUIET)
    S.save(str(tmp_path / "S.casadi"))
    forget()
    L = cc.load(tmp_path / "S.casadi")
    assert L.problem is not S.problem
    assert isinstance(L, NlpsolFunction) and L.problem.n == 2
    with pytest.raises(RuntimeError, match="No stats available"):
        L.stats()
    _same(S(**CALL), L(**CALL))
    assert L.stats()["return_status"] == "Solve_Succeeded"
    assert isinstance(cc.deserialize(S.serialize()), NlpsolFunction)


def test_mx_problem_with_map_and_function_options(forget):
    """An MX problem keeps its calls (the inner Function mapped) and options holding
    casadi Functions (grad_f) are stored as Functions."""
    x, p = ca.MX.sym("x", 3), ca.MX.sym("p")
    h = ca.Function("h", [x], [ca.sin(x) + x ** 2])
    f = ca.sumsqr(h.map(1)(x) - p)
    xs = ca.MX.sym("x", 3)
    fs = ca.sumsqr(h(xs) - p)
    grad_f = ca.Function("grad_f", [xs, p], [fs, ca.gradient(fs, xs)], ["x", "p"],
                         ["f", "grad_f_x"])
    S = nlpsol("S", "caspar", {"x": x, "p": p, "f": f, "g": x[0] - x[1]},
               dict(QUIET, grad_f=grad_f, detect_simple_bounds=True))
    data = S.serialize()
    forget()
    F = ca.Function.deserialize(data)
    call = dict(x0=[0.1, 0.2, 0.3], p=0.7, lbg=0, ubg=0)
    _same(S(**call), F(**call))


def test_embedding_graph_map_and_derivatives(forget):
    S = nlpsol("S", "caspar", _rosen(), QUIET)
    P = ca.MX.sym("P")
    sol = S(x0=ca.vertcat(0.1, 0.2), p=P, lbg=-10, ubg=2.5)
    G = ca.Function("G", [P], [sol["x"], ca.jacobian(sol["x"], P), ca.gradient(sol["f"], P)])
    M = S.map(3)
    data = [fn.serialize() for fn in (G, M)]
    forget()
    Gl, Ml = (ca.Function.deserialize(d) for d in data)
    for a, b in zip(G(1.5), Gl(1.5)):
        assert np.array_equal(np.array(a), np.array(b))
    P3 = ca.DM([[1.0, 1.5, 2.0]])
    assert np.array_equal(np.array(M(x0=ca.repmat(ca.DM([0.1, 0.2]), 1, 3), p=P3)["x"]),
                          np.array(Ml(x0=ca.repmat(ca.DM([0.1, 0.2]), 1, 3), p=P3)["x"]))


def test_opti_to_function_round_trip(forget):
    opti = cc.Opti()
    x, p = opti.variable(2), opti.parameter()
    opti.minimize((x[0] - p) ** 2 + 3 * (x[1] - x[0] ** 2) ** 2)
    opti.subject_to(x[0] + x[1] <= 2.5)
    opti.solver("caspar", {"print_time": False}, {"print_level": 0})
    F = opti.to_function("F", [p], [x])
    data = F.serialize()
    forget()
    assert np.array_equal(np.array(F(1.5)), np.array(ca.Function.deserialize(data)(1.5)))


def test_graph_nodes_share_one_compiled_problem(forget, monkeypatch):
    """The solver node and its derivative nodes of one graph are compiled once."""
    from caspar_backend.adapters.casadi import frontend

    S = nlpsol("S", "caspar", _rosen(), QUIET)
    P = ca.MX.sym("P")
    sol = S(x0=ca.vertcat(0.1, 0.2), p=P, lbg=-10, ubg=2.5)
    data = ca.Function("G", [P], [sol["x"], ca.jacobian(sol["x"], P)]).serialize()
    built = []
    orig = frontend.NlpsolCore.__init__

    def counting(self, *a, **k):
        built.append(a[0])
        orig(self, *a, **k)

    monkeypatch.setattr(frontend.NlpsolCore, "__init__", counting)
    forget()
    ca.Function.deserialize(data)
    assert built == ["S"]


def test_a_users_callback_is_refused_by_name():
    class Mine(ca.Callback):
        def __init__(self):
            ca.Callback.__init__(self)
            self.construct("mine", {})

        def eval(self, arg):
            return [arg[0]]

    cb = Mine()
    with pytest.raises(RuntimeError, match="not found 'CallbackInternal'.*'mine' is a "
                                           "casadi.Callback defined in Python"):
        ca.Function.deserialize(cb.serialize())


def test_options_that_cannot_be_stored(forget):
    """A Python object in the options: loading raises naming it; a Dask client is
    dropped with a warning (it changes where a batch runs, not its results)."""
    S = nlpsol("S", "caspar", _rosen(),
               {"print_time": False, "caspar": {"print_level": 0,
                                                "iteration_callback": lambda ipm: None}})
    data = S.serialize()
    forget()
    with pytest.raises(RuntimeError, match="caspar.iteration_callback"):
        ca.Function.deserialize(data)
    rec = nlpsol_serial.record("S", _rosen(), dict(QUIET, client=object()))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        opts = nlpsol_serial.options_of(rec, "S")
    assert "client" not in opts and "'client' was not saved" in str(w[0].message)
    with pytest.raises(ModelError, match="format 99"):
        s = ca.StringSerializer()
        s.pack(dict(rec, format=99))
        nlpsol_load.restore(s.encode(), "S_caspar")


_CHILD = textwrap.dedent("""
    import json, sys
    import casadi as ca
    if sys.argv[2] == "caspar":
        import caspar_backend.casadi as cc
        cc.nlpsol                          # imports the front-end: installs the loader
    out = {}
    try:
        S = ca.Function.load(sys.argv[1] + "/S.casadi")
        G = ca.Function.load(sys.argv[1] + "/G.casadi")
    except RuntimeError as e:
        print(json.dumps({"error": str(e)}))
        raise SystemExit(0)
    r = S(x0=[0.1, 0.2], p=1.5, lbg=-10, ubg=2.5)
    out["S"] = [float(v) for v in ca.vertcat(r["x"], r["f"], r["lam_g"]).nonzeros()]
    out["G"] = [float(v) for v in ca.vertcat(*[ca.vec(a) for a in G(1.5)]).nonzeros()]
    out["again"] = [float(v) for v in S(x0=[0.1, 0.2], p=1.5, lbg=-10, ubg=2.5)["x"].nonzeros()]
    print(json.dumps(out))
""")


def _child(folder, mode):
    run = subprocess.run([sys.executable, "-c", _CHILD, str(folder), mode],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_fresh_process_loads_and_solves(tmp_path):
    casadi_loader.build()
    S = nlpsol("S", "caspar", _rosen(), QUIET)
    P = ca.MX.sym("P")
    sol = S(x0=ca.vertcat(0.1, 0.2), p=P, lbg=-10, ubg=2.5)
    G = ca.Function("G", [P], [sol["x"], ca.jacobian(sol["x"], P)])
    S.save(str(tmp_path / "S.casadi"))
    G.save(str(tmp_path / "G.casadi"))
    r = S(x0=[0.1, 0.2], p=1.5, lbg=-10, ubg=2.5)
    want_S = [float(v) for v in ca.vertcat(r["x"], r["f"], r["lam_g"]).nonzeros()]
    want_G = [float(v) for v in ca.vertcat(*[ca.vec(a) for a in G(1.5)]).nonzeros()]
    got = _child(tmp_path, "caspar")
    assert got["S"] == want_S and got["G"] == want_G and got["again"] == want_S[:2]


def test_without_caspar_casadi_cannot_read_the_callback(tmp_path):
    """casadi alone has no reader for a Python Callback (the documented limit): a process
    that never imports caspar's front-end gets casadi's own error."""
    S = nlpsol("S", "caspar", _rosen(), QUIET)
    S.save(str(tmp_path / "S.casadi"))
    ca.Function("G", [ca.MX.sym("P")], [1]).save(str(tmp_path / "G.casadi"))
    got = _child(tmp_path, "bare")
    assert "not found 'CallbackInternal'" in got["error"]
