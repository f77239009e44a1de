"""Compare IPOPT (NL-writer reference) and caspar on one parmest semibatch experiment.
usage: python scratch/semibatch_compare.py [exp_index 0..9] [tag] [caspar_opt=value ...]
   tag 'ipopt' -> run IPOPT only; otherwise caspar with the given options (log /tmp/helperA_caspar_<tag>.log)
"""
import json, sys, os, re, time
import pyomo.environ as pyo
from pyomo.contrib.parmest.examples.semibatch.semibatch import SemiBatchExperiment

HERE = os.path.dirname(os.path.abspath(__file__))

def build(i):
    with open(os.path.join(HERE, "data", f"exp{i+1}.out")) as fh:
        d = json.load(fh)
    return SemiBatchExperiment(d).get_labeled_model()

def parse_opt(s):
    k, v = s.split("=", 1)
    for cast in (int, float):
        try:
            return k, cast(v)
        except ValueError:
            pass
    return k, v

if __name__ == "__main__":
    i = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    tag = sys.argv[2] if len(sys.argv) > 2 else "default"
    extra = dict(parse_opt(s) for s in sys.argv[3:])
    m = build(i)
    nv = sum(1 for v in m.component_data_objects(pyo.Var, active=True) if not v.fixed)
    nc = sum(1 for c in m.component_data_objects(pyo.Constraint, active=True))
    print(f"exp{i+1}: free vars {nv}, constraints {nc}")
    t0 = time.time()
    if tag == "ipopt":
        from tests.support.pyomo_ipopt_reference import solve_reference
        ref = solve_reference(m, {"tol": 1e-8, "output_file": f"/tmp/helperA_ipopt_exp{i+1}.log",
                                  "file_print_level": 5, **extra})
        print(f"IPOPT status={ref.status} iters={ref.iterations} obj={ref.objective!r} time={time.time()-t0:.1f}s")
    else:
        import caspar_backend  # noqa: F401  registers 'caspar'
        log = f"/tmp/helperA_caspar_exp{i+1}_{tag}.log"
        res = pyo.SolverFactory("caspar").solve(m, options={"tol": 1e-8, "output_file": log, **extra})
        it = None
        try:
            txt = open(log).read()
            mm = re.findall(r"Number of Iterations\.*:\s*(\d+)", txt)
            it = mm[-1] if mm else None
        except Exception:
            pass
        print(f"caspar[{tag}] status={res.solver.status},{res.solver.termination_condition} iters={it} "
              f"obj={pyo.value(m.Total_Cost_Objective)!r} time={time.time()-t0:.1f}s")
