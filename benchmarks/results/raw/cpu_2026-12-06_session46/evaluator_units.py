import sys, time; sys.path.insert(0, "/work/main")
import numpy as np
import caspar_backend as cb
from caspar_backend.expr import topo_order
from caspar_backend.compiled.tape_evaluator import general_evaluator
def units(P):
    u = 0
    for g in list(P.objective_groups) + list(P.constraint_groups):
        L = len(topo_order([g.root]))
        if g.grad: L += len(topo_order([x for _, x in g.grad]))
        if g.hess: L += len(topo_order([x for _, x in g.hess]))
        u += g.size * L
    return u
def bench(name, P, x):
    t = time.perf_counter(); U = units(P); tu = time.perf_counter() - t
    ev = P.evaluator("cpu")
    out = {}
    for label, e in (("numpy", ev), ("tape", general_evaluator(ev, "tape"))):
        lam = np.ones(P.m)
        ts = []
        for k in range(5):
            t = time.perf_counter()
            e.obj(x); e.cons(x); e.grad(x); e.jac_values(x); e.hess_values(x, lam)
            ts.append(time.perf_counter() - t)
        out[label] = min(ts) * 1e3
    print(f"{name:30s} units {U/1e6:8.2f}M ({tu*1e3:.0f} ms to count)  numpy {out['numpy']:8.2f} ms  tape {out['tape']:7.2f} ms  numpy ns/unit {out['numpy']*1e6/U:.2f}", flush=True)
from benchmarks.cases import lsq_problem, acopf_cases, ocp_cases, cops_cases
for n in (1000, 3000):
    nlp, args, _ = lsq_problem(n); P = cb.from_casadi(nlp, **args); bench(f"bundle {n}", P, args["x0"])
for case in acopf_cases(2000, min_buses=1990):
    b = case.build(); P = cb.from_casadi(b[1], **b[2]); bench(case.name, P, np.asarray(b[2]["x0"], float))
for case in ocp_cases([10000]):
    b = case.build(); P = cb.from_casadi(b[1], **b[2]); bench(case.name + " 1e4", P, np.asarray(b[2]["x0"], float))
