"""Child process of the Ctrl-C-during-setup tests
(``python -m tests.support.setup_interrupt_child API POINTS``).

For ``API`` -- ``core`` (``Problem(model)`` then ``solve``), ``casadi`` (``nlpsol(...)``
then a call), ``pyomo`` (``SolverFactory('caspar').solve(model)``) -- on the chained
Rosenbrock problem (N = 20): one clean attempt gives the reference answer and counts
the calls of caspar's own functions made before the solve's SIGINT handler is installed
(the setup: reading the model, compiling, building the evaluator and the solver's
structures).  Then, for call numbers k -- the first entry into each of caspar's files
(each phase of the setup) and ``POINTS`` numbers spread over the setup -- an attempt
during which this process sends itself SIGINT when caspar's k-th function is entered,
and after it a clean attempt.  One JSON line per point: the call number, the function
it entered, how the interrupted attempt ended (``KeyboardInterrupt``, or the solve's
status when the signal arrived after the handler was in place), whether the user's
model was untouched, whether the clean attempt gave the reference answer bit for bit,
and the stray temporary files in ``$CASPAR_CACHE_DIR``.
"""

from __future__ import annotations

import inspect
import json
import os
import signal
import sys
from pathlib import Path

import numpy as np

N = 20
_GENERATOR = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
ROOTS = tuple(str(Path(__file__).resolve().parents[2] / d) + os.sep
              for d in ("caspar_backend", "adapters", "kernels"))


class Trigger:
    """A profile hook counting entries into caspar's functions; sends SIGINT to this
    process on entry number ``at`` (0: count only) and remembers where; counts up to the
    first entry of the solve's SIGINT handling (:mod:`caspar_backend.solver.interrupt`)."""

    def __init__(self, at: int = 0):
        self.at, self.calls, self.where, self.setup_calls = at, 0, None, None
        #: file -> the number of the first entry into it (the setup's phases)
        self.first: dict = {}

    def __call__(self, frame, event, arg):
        if event != "call" or self.setup_calls is not None:
            return
        code = frame.f_code
        if not code.co_filename.startswith(ROOTS):
            return
        if code.co_name == "sigint_as_stop":
            self.setup_calls = self.calls
            return
        if code.co_flags & _GENERATOR:
            # a generator's 'call' event also fires when it is closed at deallocation,
            # where Python ignores any exception ("Exception ignored in ..."): a signal
            # sent there would never reach the caller
            return
        self.calls += 1
        self.first.setdefault(code.co_filename, self.calls)
        if self.calls == self.at:
            self.where = f"{Path(code.co_filename).name}:{code.co_name}"
            os.kill(os.getpid(), signal.SIGINT)

    def run(self, attempt):
        sys.setprofile(self)
        try:
            return attempt()
        finally:
            sys.setprofile(None)


def _core():
    from benchmarks.models.chain import chain_graph
    from caspar_backend import Problem

    model = chain_graph(N)
    made = {}

    def prepare():
        made.clear()

    def attempt():                  # the Problem an interrupted attempt made is reused
        if "pr" not in made:
            made["pr"] = Problem(model)
        r = made["pr"].solve(print_level=0)
        return r.status, np.asarray(r.x, float)

    def state():
        return [np.asarray(a, float).tobytes() for a in (model.x0, model.lbx, model.ubx,
                                                          model.lbg, model.ubg)]
    return prepare, lambda: None, attempt, state


def _casadi():
    from benchmarks.models.chain import chain_casadi
    from caspar_backend.casadi import nlpsol

    nlp, args = chain_casadi(N)
    keys = sorted(nlp)
    made = {}

    def prepare():
        made.clear()

    def attempt():                  # the Function an interrupted attempt made is reused
        if "S" not in made:
            made["S"] = nlpsol("S", "caspar", nlp, {"print_time": False,
                                                    "caspar": {"print_level": 0}})
        S = made["S"]
        sol = S(**args)
        return S.stats()["return_status"], np.array(sol["x"], float).ravel()

    def state():
        return [str(nlp[k]) for k in keys]
    return prepare, lambda: None, attempt, state


def _pyomo():
    import pyomo.environ as pyo

    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))
    from tests.support import interrupt_child

    interrupt_child.N = N
    m = interrupt_child._pyomo_chain()
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    start = {v.name: v.value for v in m.x.values()}
    made = {}

    def restart():                  # every attempt from the model's start
        for v in m.x.values():
            v.set_value(start[v.name])

    def prepare():
        # a new solver object (its first solve compiles the model), made outside the
        # interrupted part: Pyomo's factory catches every exception of a plugin's
        # constructor with a bare ``except:`` (pyomo/opt/base/solvers.py), Ctrl-C
        # included, for ipopt as for caspar
        made["opt"] = pyo.SolverFactory("caspar")
        restart()

    def attempt():                  # the solver object of the interrupted attempt is reused
        res = made["opt"].solve(m)
        return (str(res.solver.termination_condition),
                np.array([v.value for v in m.x.values()], float))

    def state():
        return ([(v.name, v.value, v.fixed, v.lb, v.ub) for v in m.x.values()],
                len(m.dual), m.p.value)
    return prepare, restart, attempt, state


def _stray_files() -> list:
    root = os.environ.get("CASPAR_CACHE_DIR")
    if not root:
        return []
    return sorted(str(p) for p in Path(root).rglob("*.tmp"))


def main(api: str, points: int) -> None:
    prepare, restart, attempt, state = dict(core=_core, casadi=_casadi, pyomo=_pyomo)[api]()
    prepare()
    attempt()                            # imports and first-use work
    prepare()
    count = Trigger()
    ref_status, ref_x = count.run(attempt)
    print(json.dumps({"setup_calls": count.setup_calls, "status": ref_status}), flush=True)
    # the first entry into each of caspar's files (each phase of the setup), and points
    # spread evenly over the setup
    phases = [k for k in count.first.values() if k <= count.setup_calls]
    spread = np.linspace(1, count.setup_calls, points).round().astype(int)
    for at in np.unique(np.concatenate([phases, spread])):
        prepare()
        before = state()
        trigger = Trigger(int(at))
        try:
            outcome = trigger.run(attempt)[0]
        except KeyboardInterrupt:
            outcome = "KeyboardInterrupt"
        untouched = state() == before
        restart()                        # what the interrupted attempt made is kept
        status, x = attempt()
        print(json.dumps({"at": int(at), "where": trigger.where, "outcome": outcome,
                          "untouched": bool(untouched), "status": status,
                          "same": bool(status == ref_status and np.array_equal(x, ref_x)),
                          "stray": _stray_files()}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
