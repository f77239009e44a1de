"""A Pyomo solve imports SciPy without Pyomo's eager SciPy set-up
(adapters/pyomo/scipy_import.py): in a fresh interpreter that has imported
``pyomo.environ``, a caspar solve leaves ``scipy.stats`` unimported, and Pyomo's own
deferred ``scipy`` still resolves afterwards, running its callback then."""
import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pyomo.environ")

_CHILD = textwrap.dedent("""
    import json, sys
    import pyomo.environ as pyo
    import caspar_backend  # noqa: F401
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=-1.2)
    m.y = pyo.Var(initialize=1.0)
    m.c = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= 4)
    m.o = pyo.Objective(expr=(1 - m.x) ** 2 + 100 * (m.y - m.x ** 2) ** 2)
    res = pyo.SolverFactory('caspar').solve(m)
    out = dict(status=str(res.solver.termination_condition), x=pyo.value(m.x),
               scipy='scipy' in sys.modules, stats_after_solve='scipy.stats' in sys.modules)
    from pyomo.common.dependencies import scipy, scipy_available
    out['pyomo_scipy_available'] = bool(scipy_available)
    out['stats_after_pyomo'] = 'scipy.stats' in sys.modules
    out['norm_cdf'] = float(scipy.stats.norm.cdf(0.0))
    finders = [type(f).__name__ for f in sys.meta_path]
    out['finder_kept'] = 'DeferredImportCallbackFinder' in finders
    out['finder_first'] = finders[0] == 'DeferredImportCallbackFinder'
    print(json.dumps(out))
""")


def test_a_solve_leaves_pyomos_scipy_callback_to_pyomo():
    r = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["status"] == "optimal" and abs(out["x"] - 1.0) < 1e-6
    assert out["scipy"]                        # caspar did import it ...
    assert not out["stats_after_solve"]        # ... without Pyomo's scipy.stats
    assert out["pyomo_scipy_available"]        # Pyomo's deferred import still works,
    assert out["stats_after_pyomo"]            # its callback run when Pyomo asked
    assert out["norm_cdf"] == 0.5
    assert out["finder_kept"] and out["finder_first"]


def test_without_pyomos_finder_nothing_changes(monkeypatch):
    from caspar_backend.adapters.pyomo import scipy_import

    before = list(sys.meta_path)
    monkeypatch.setattr(scipy_import, "_pyomo_finders", lambda: [])
    monkeypatch.delitem(sys.modules, "scipy", raising=False)
    scipy_import.import_scipy()            # nothing to hide: returns without importing
    assert sys.meta_path == before
