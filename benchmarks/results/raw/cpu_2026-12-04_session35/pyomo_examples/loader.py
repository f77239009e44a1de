"""Build Pyomo example models from the Pyomo repository's examples/ tree without
running any solver: the scripts are executed with ``SolverFactory`` replaced by a
stub whose ``solve(model)`` raises ``Captured(model)`` (the model exactly as it
would have been handed to the solver)."""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from pathlib import Path

import pyomo.environ as pyo

SRC = Path("/tmp/pyomo_sweep/src/examples")


class Captured(Exception):
    def __init__(self, model):
        super().__init__("captured")
        self.model = model


class _DummyResults:
    class solver:
        termination_condition = pyo.TerminationCondition.optimal
        status = pyo.SolverStatus.ok


class _FakeSolver:
    def __init__(self, counter, nth):
        self.options = {}
        self._counter, self._nth = counter, nth

    def available(self, *a, **k):
        return True

    def set_instance(self, *a, **k):
        pass

    def solve(self, *args, **kwds):
        model = args[0] if args else kwds.get("model")
        self._counter[0] += 1
        if self._counter[0] == self._nth:
            raise Captured(model)
        return _DummyResults()


@contextlib.contextmanager
def _in_dir(d):
    old = os.getcwd()
    os.chdir(d)
    sys.path.insert(0, str(d))
    try:
        yield
    finally:
        os.chdir(old)
        if sys.path and sys.path[0] == str(d):
            sys.path.pop(0)


@contextlib.contextmanager
def _patched_solver_factory(nth=1):
    import pyomo.opt
    import pyomo.opt.base.solvers as solvers_mod

    counter = [0]
    orig = pyo.SolverFactory

    def fake(*a, **k):
        return _FakeSolver(counter, nth)

    import pyomo.kernel as pmo

    saved = (pyo.SolverFactory, pyomo.opt.SolverFactory, pmo.SolverFactory)
    pyo.SolverFactory = fake
    pyomo.opt.SolverFactory = fake
    pmo.SolverFactory = fake
    try:
        yield
    finally:
        pyo.SolverFactory, pyomo.opt.SolverFactory, pmo.SolverFactory = saved


def capture(relpath, *, main=True, call=None, call_args=(), nth=1):
    """Run the script (as __main__ unless main=False); optionally call
    ns[call](*call_args) afterwards; return the model given to the nth solve."""
    path = SRC / relpath
    with _in_dir(path.parent), _patched_solver_factory(nth):
        try:
            ns = runpy.run_path(str(path), run_name="__main__" if main else "__sweep__")
            if call is not None:
                ns[call](*call_args)
        except Captured as c:
            return c.model
    raise RuntimeError(f"{relpath}: no solve() call captured")


def namespace(relpath, *, main=False, until=None, replace=()):
    """Execute the script (optionally only up to the first line containing
    ``until``, optionally with textual replacements) and return its globals."""
    path = SRC / relpath
    text = path.read_text()
    for old, new in replace:
        assert old in text, (relpath, old)
        text = text.replace(old, new)
    if until is not None:
        idx = text.index(until)
        text = text[:idx]
    ns = {"__name__": "__main__" if main else "__sweep__", "__file__": str(path)}
    with _in_dir(path.parent), _patched_solver_factory(nth=10**9):
        exec(compile(text, str(path), "exec"), ns)
    return ns


def abstract_instance(relpath, datfile=None, attr="model", until=None):
    ns = namespace(relpath, until=until)
    path = SRC / relpath
    with _in_dir(path.parent):
        return ns[attr].create_instance(datfile) if datfile else ns[attr].create_instance()
