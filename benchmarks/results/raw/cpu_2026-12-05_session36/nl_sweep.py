"""The NL reader on Pyomo's examples (the session-35 sweep's registry, /tmp/pyomo_sweep):
each model written by Pyomo's NL writer (symbolic labels), read by caspar_backend.ampl,
evaluated at the written start against Pyomo's own values (objective; each row's distance
to its sides), then solved by the executable ('asl:caspar') against the in-process
SolverFactory('caspar').  One line per model."""
import os
import shutil
import sys
import time
import traceback

sys.path.insert(0, "/tmp/pyomo_sweep")
sys.path.insert(0, "/work/main")
import numpy as np  # noqa: E402
import pyomo.environ as pyo  # noqa: E402

import caspar_backend  # noqa: E402,F401
from caspar_backend.ampl.nl_reader import read_nl  # noqa: E402
from caspar_backend.problem import Problem  # noqa: E402
from models import MODELS  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/pdx/nlsweep"
MAX_VARS = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
EXE = shutil.which("caspar")


def check_eval(m, stub):
    m.write(stub + ".nl", io_options={"symbolic_solver_labels": True})
    cols = open(stub + ".col").read().split("\n")
    rows = open(stub + ".row").read().split("\n")
    nl = read_nl(stub + ".nl")
    ev = Problem(nl.model).evaluator("cpu")
    by = {v.name: v for v in m.component_data_objects(pyo.Var, active=True)}
    cons = {c.name: c for c in m.component_data_objects(pyo.Constraint, active=True)}
    x = nl.model.x0
    # the NL start (uninitialized variables written as 0) into the model, for Pyomo
    for name, v in zip(cols, x.tolist()):
        by[name].set_value(v, skip_validation=True)
    err = 0.0
    objs = list(m.component_data_objects(pyo.Objective, active=True))
    if objs and nl.n_obj:
        f = pyo.value(objs[0])
        err = max(err, abs(ev.obj(x) * nl.sense - f) / max(1.0, abs(f)))
    g = ev.cons(x) if nl.n_con else np.zeros(0)
    for i in range(nl.n_con):
        c = cons[rows[i]]
        body = pyo.value(c.body)
        if c.has_lb():
            ref = body - pyo.value(c.lower)
            err = max(err, abs((g[i] - nl.model.lbg[i]) - ref) / max(1.0, abs(body)))
        if c.has_ub():
            ref = pyo.value(c.upper) - body
            err = max(err, abs((nl.model.ubg[i] - g[i]) - ref) / max(1.0, abs(body)))
    return nl, err


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (path, build, note) in MODELS.items():
        stub = os.path.join(OUT, name.replace("/", "__"))
        t = time.perf_counter()
        try:
            m = build()
            n = sum(1 for _ in m.component_data_objects(pyo.Var, active=True))
            if n > MAX_VARS:
                print(f"{name}: skipped ({n} variables)", flush=True)
                continue
            nl, err = check_eval(m, stub)
            a, b = build(), build()
            ra = pyo.SolverFactory("asl:caspar", executable=EXE).solve(a)
            rb = pyo.SolverFactory("caspar").solve(b)
            oa = [pyo.value(o) for o in a.component_data_objects(pyo.Objective, active=True)]
            ob = [pyo.value(o) for o in b.component_data_objects(pyo.Objective, active=True)]
            rel = (abs(oa[0] - ob[0]) / max(1e-8, abs(ob[0]))) if oa else 0.0
            print(f"{name}: n={nl.n_var} m={nl.n_con} eval_err={err:.1e} "
                  f"exe={ra.solver.termination_condition} inproc={rb.solver.termination_condition} "
                  f"obj_rel={rel:.1e} ({time.perf_counter() - t:.1f} s)", flush=True)
        except Exception as e:  # noqa: BLE001 -- recorded, the sweep goes on
            print(f"{name}: ERROR {type(e).__name__}: {str(e)[:200]}", flush=True)
            traceback.print_exc(file=sys.stderr)


if __name__ == "__main__":
    main()
