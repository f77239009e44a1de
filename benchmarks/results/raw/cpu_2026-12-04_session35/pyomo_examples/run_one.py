"""Solve one registered model with one solver and write a JSON record.

usage: python run_one.py NAME caspar|ipopt OUT.json [--tee]

caspar: pyo.SolverFactory('caspar').solve(m[, tee=True]) with default options.
ipopt : tests/support/pyomo_ipopt_reference.solve_reference(m) from /work/main
        (Pyomo NL writer -> casadi NlpBuilder.import_nl -> IPOPT 3.14 bundled with casadi).
"""

from __future__ import annotations

import json
import math
import sys
import time
import traceback

sys.path.insert(0, "/tmp/pyomo_sweep")

import pyomo.environ as pyo  # noqa: E402

from models import MODELS  # noqa: E402


def _f(x):
    if x is None:
        return None
    try:
        x = float(x)
    except Exception:
        return None
    return x if math.isfinite(x) else str(x)


def _is_kernel(m):
    from pyomo.core.kernel.block import IBlock
    return isinstance(m, IBlock)


def _vars(m):
    if _is_kernel(m):
        import pyomo.kernel as pmo
        return list(m.components(ctype=pmo.variable._ctype))
    return list(m.component_data_objects(pyo.Var, descend_into=True))


def _cons(m):
    if _is_kernel(m):
        import pyomo.kernel as pmo
        return list(m.components(ctype=pmo.constraint._ctype, active=True))
    return list(m.component_data_objects(pyo.Constraint, active=True))


def objective_value(m):
    if _is_kernel(m):
        import pyomo.kernel as pmo
        objs = list(m.components(ctype=pmo.objective._ctype, active=True))
    else:
        objs = list(m.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if not objs:
        return None
    try:
        return _f(pyo.value(objs[0]))
    except Exception:
        return None


def var_values(m):
    out = {}
    for v in _vars(m):
        if not v.fixed:
            out[v.name] = _f(v.value)
    return out


def main():
    name, solver, out = sys.argv[1], sys.argv[2], sys.argv[3]
    tee = "--tee" in sys.argv
    rec = {"name": name, "solver": solver, "path": MODELS[name][0], "note": MODELS[name][2]}
    t0 = time.perf_counter()
    try:
        m = MODELS[name][1]()
    except Exception:
        rec["build_error"] = traceback.format_exc()
        json.dump(rec, open(out, "w"), indent=1)
        return
    rec["build_s"] = time.perf_counter() - t0
    rec["nvars_model"] = sum(1 for v in _vars(m) if not v.fixed)
    rec["ncons_model"] = len(_cons(m))
    sys.stdout.flush()
    sys.stderr.flush()
    print("=== SOLVE BEGIN", flush=True)
    print("=== SOLVE BEGIN", file=sys.stderr, flush=True)
    if solver == "caspar":
        import caspar_backend  # noqa: F401  registers 'caspar'
        t0 = time.perf_counter()
        try:
            res = pyo.SolverFactory("caspar").solve(m, tee=tee)
            rec["wall_s"] = time.perf_counter() - t0
            s = res.solver
            rec["termination"] = str(s.termination_condition)
            rec["status"] = str(s.status)
            rec["message"] = str(getattr(s, "termination_message", None) or s.message)
            rec["iterations"] = s.statistics.black_box.number_of_iterations
            try:
                rec["iterations"] = int(rec["iterations"])
            except Exception:
                rec["iterations"] = None
            rec["solver_time"] = _f(s.time)
            rec["n"] = int(res.problem.number_of_variables)
            rec["m"] = int(res.problem.number_of_constraints)
            rec["objective"] = objective_value(m)
            rec["x"] = var_values(m)
        except Exception:
            rec["wall_s"] = time.perf_counter() - t0
            rec["exception"] = traceback.format_exc()
    else:
        if solver == "ipopt_adj":
            # supplementary: the same NLP, made acceptable to the reference's input path
            adj = []
            for sfx in m.component_objects(pyo.Suffix, descend_into=True):
                if sfx.export_enabled() and sfx.active:
                    sfx.deactivate()
                    adj.append(f"deactivated export Suffix {sfx.name}")
            nfix = 0
            for v in m.component_data_objects(pyo.Var, descend_into=True):
                if v.fixed and v.value is not None:
                    lb, ub = v.bounds
                    if (lb is not None and v.value < lb) or (ub is not None and v.value > ub):
                        v.setlb(None)
                        v.setub(None)
                        nfix += 1
            if nfix:
                adj.append(f"removed bounds of {nfix} fixed vars whose fixed value violates them")
            rec["adjustments"] = adj
        sys.path.insert(0, "/work/main")
        from tests.support import pyomo_ipopt_reference as R
        captured = {}
        orig = R.ipopt.solve

        def wrapped(*a, **k):
            run = orig(*a, **k)
            captured["run"] = run
            return run

        R.ipopt.solve = wrapped
        t0 = time.perf_counter()
        try:
            ref = R.solve_reference(m)
            rec["wall_s"] = time.perf_counter() - t0
            rec["status"] = ref.status
            rec["success"] = ref.success
            rec["iterations"] = ref.iterations
            rec["objective"] = _f(ref.objective)
            rec["n"] = len(ref.x)
            rec["m"] = len(ref.dual)
            rec["solver_time"] = _f(captured["run"].t) if "run" in captured else None
            rec["x"] = {v.name: _f(val) for v, val in ref.x.items()}
        except Exception:
            rec["wall_s"] = time.perf_counter() - t0
            rec["exception"] = traceback.format_exc()
    print("=== SOLVE END", flush=True)
    print("=== SOLVE END", file=sys.stderr, flush=True)
    json.dump(rec, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
