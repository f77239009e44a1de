"""A wrong inertia from the non-pivoting LDL^T, detected by the size of delta_w.

CasADi's race-car OCP (minimum time along a track with a position-dependent speed limit,
RK4 multiple shooting, written with Opti): qdldl's factorization without pivoting,
after element growth, reported a wrong inertia until delta_w reached 1e12; the iterates
then crept for 150 iterations (197 against IPOPT's 35; IPOPT's delta_w stays below 1e4).
Above PIVOTING_SWITCH_DELTA_W the factorization now switches to its pivoting mode (a
small system: LAPACK's dense Bunch-Kaufman, exact inertia) and Algorithm IC starts over."""

from __future__ import annotations

import pytest

ca = pytest.importorskip("casadi")
pytest.importorskip("qdldl")


def _race(opti_cls, N=100):
    opti = opti_cls()
    X = opti.variable(2, N + 1)
    pos, speed = X[0, :], X[1, :]
    U = opti.variable(1, N)
    T = opti.variable()
    opti.minimize(T)

    def f(x, u):
        return ca.vertcat(x[1], u - x[1])

    h = T / N
    for k in range(N):
        k1 = f(X[:, k], U[:, k])
        k2 = f(X[:, k] + h / 2 * k1, U[:, k])
        k3 = f(X[:, k] + h / 2 * k2, U[:, k])
        k4 = f(X[:, k] + h * k3, U[:, k])
        opti.subject_to(X[:, k + 1] == X[:, k] + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    opti.subject_to(speed <= 1 - ca.sin(2 * ca.pi * pos) / 2)
    opti.subject_to(opti.bounded(0, U, 1))
    opti.subject_to(pos[0] == 0)
    opti.subject_to(speed[0] == 0)
    opti.subject_to(pos[-1] == 1)
    opti.subject_to(T >= 0)
    opti.set_initial(speed, 1)
    opti.set_initial(T, 1)
    return opti, T


def test_race_car_as_ipopt():
    from caspar_backend.casadi import Opti

    opti, T = _race(ca.Opti)
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    ref = opti.solve()
    opti, T2 = _race(Opti)
    opti.solver("caspar", {"print_time": False}, {"print_level": 0})
    sol = opti.solve()
    it, it_ref = sol.stats()["iter_count"], ref.stats()["iter_count"]
    assert sol.stats()["return_status"] == "Solve_Succeeded"
    assert abs(sol.value(T2) - ref.value(T)) <= 1e-8 * abs(ref.value(T))
    # 197 iterations before the switch, 62 with it (IPOPT: 35)
    assert it <= 2 * it_ref + 10, (it, it_ref)


@pytest.mark.parametrize("name", ["hs009", "needs_restoration_circle"])
def test_failed_refinement_switches_to_the_pivoting_mode(name, monkeypatch):
    """Refinement against K failing with every static term: qdldl's factors are the
    trouble, so may be their inertia.  The solve switches to the pivoting mode (dense
    Bunch-Kaufman at this size) and redoes the inertia correction, and follows IPOPT's
    path: its iteration count (5 and 26 iterations with SuperLU's LU for that one
    iteration's solves and qdldl's inertia kept; IPOPT 3 and 18).  The switch is for a K
    above the size factorized with pivoting from the start: these two with that mode off."""
    from caspar_backend.linsolve.qdldl import QDLDLSolver
    from tests.support.problem_bank import bank
    from tests.support.recording import record_returns
    from tests.support.solver_harness import run_caspar, run_ipopt

    monkeypatch.setattr("caspar_backend.linsolve.dense_kkt.SMALL_PIVOTING_MAX_N", 0)
    switched = record_returns(monkeypatch, QDLDLSolver, "enable_pivoting")
    p = {b.name: b for b in bank()}[name]
    d = dict(p.build(), options=p.options)
    ri = run_ipopt(d)
    rc = run_caspar(d)
    assert any(switched)
    assert rc.status == "Solve_Succeeded" == ri["status"]
    assert rc.iterations == ri["iter"]
    assert abs(rc.f - ri["f"]) <= 1e-8 * max(1.0, abs(ri["f"]))


def test_kernels_hand_over_where_the_general_path_may_switch(monkeypatch):
    """The race car on 150 intervals (N = 1,360 > the dense pivoting size): the general
    path switches to PARDISO where MKL is installed and otherwise goes on raising
    delta_w, which a cached kernel cannot tell apart, so the compiled path hands over at
    the switch's condition whatever N (it used to go on to the restoration phase and
    hand over there, 37 iterations later).  The answer is the general path's."""
    import caspar_backend.compiled.kernels.ipm as kipm
    from caspar_backend.batch.state import EJECT_REASONS
    from caspar_backend.casadi import Opti
    from caspar_backend.compiled.dispatch import kernels_ready

    from tests.support.recording import record_returns

    kernels_ready(wait=True)
    returned = record_returns(monkeypatch, kipm, "solve_instance")
    answers = []
    for path in ("no", "auto"):
        opti, T = _race(Opti, N=150)
        opti.solver("caspar", {"print_time": False},
                    {"print_level": 0, "compiled_path": path})
        sol = opti.solve()
        answers.append((sol.stats()["return_status"], sol.stats()["iter_count"],
                        sol.value(T)))
    assert len(returned) == 1
    code, iterations = int(returned[0][0]), int(returned[0][1])
    assert EJECT_REASONS[-code] == "pivoting switch of the inertia correction"
    assert iterations < answers[0][1]
    assert answers[0] == answers[1]


def test_impossible_inertia_switches_to_the_pivoting_mode(monkeypatch):
    """An unpivoted factorization that reports fewer negative eigenvalues than the
    constraint block forces (every constraint row's diagonal negative: at least m by
    Haynsworth) has failed -- element growth, as qdldl's (892, 884) for K's (890, 886) on
    Pyomo's parmest semibatch -- so the inertia correction switches to the pivoting mode
    instead of raising delta_w.  Here one such report is made up (the iteration-1 matrix
    of hs071 with the small-K mode off, qdldl's inertia moved by one eigenvalue): the
    solve switches, takes no delta_w for it, and ends as without the made-up report."""
    from caspar_backend.linsolve.base import Factorization
    from caspar_backend.linsolve.qdldl import QDLDLSolver
    from tests.support.problem_bank import bank
    from tests.support.recording import record_returns
    from tests.support.solver_harness import run_caspar

    monkeypatch.setattr("caspar_backend.linsolve.dense_kkt.SMALL_PIVOTING_MAX_N", 0)
    p = {b.name: b for b in bank()}["hs071"]
    d = dict(p.build(), options=p.options)
    plain = run_caspar(d, {"compiled_path": "no"})
    calls = {"n": 0}
    factorize = QDLDLSolver.factorize

    def one_wrong(self, values):
        f = factorize(self, values)
        calls["n"] += 1
        if calls["n"] == 3 and f.ok and not self.pivoting and f.n_neg > 0:
            return Factorization(True, f.n_pos + 1, f.n_neg - 1, 0)
        return f

    monkeypatch.setattr(QDLDLSolver, "factorize", one_wrong)
    switched = record_returns(monkeypatch, QDLDLSolver, "enable_pivoting")
    r = run_caspar(d, {"compiled_path": "no"})
    assert switched == [True]
    assert r.status == plain.status == "Solve_Succeeded"
    assert r.f == pytest.approx(plain.f, rel=1e-9)
