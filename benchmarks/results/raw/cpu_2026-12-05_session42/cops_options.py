"""COPS at published sizes through the NL writer (benchmarks.models.reference.nl_problem)
with the given options on both sides, IPOPT and caspar through casadi's nlpsol (the general
path where the options need it): status, iterations, objective, wall time.

    PYTHONPATH=. python benchmarks/results/raw/cpu_2026-12-05_session42/cops_options.py "{'mu_strategy': 'adaptive'}"
"""
import sys, time
import casadi as ca
from benchmarks.models.reference import nl_problem
from benchmarks.models.cops import PROBLEMS
from benchmarks.cases import cops_size
from caspar_backend.casadi import nlpsol
extra = eval(sys.argv[1])
ok = tot = 0
for name, P in PROBLEMS.items():
    size = cops_size(P, "1")
    nlp, args, sense = nl_problem(P(size))
    args = {k: v for k, v in args.items() if k in ("x0", "lbx", "ubx", "lbg", "ubg", "p")}
    o = {"tol": 1e-6, "max_iter": 3000, **extra}
    R = ca.nlpsol("R", "ipopt", nlp, {"print_time": False, "ipopt": {"print_level": 0, "sb": "yes", **o}})
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {"print_level": 0, **o}})
    t = time.perf_counter(); a = R(**args); ti = time.perf_counter() - t
    t = time.perf_counter(); b = S(**args); tc = time.perf_counter() - t
    sr, ss = R.stats(), S.stats()
    same = (sr["return_status"], sr["iter_count"]) == (ss["return_status"], ss["iter_count"])
    tot += 1; ok += same
    print(f"{name:10s} {size:5d} IPOPT {sr['return_status']:28s} {sr['iter_count']:5d}  caspar {ss['return_status']:28s} {ss['iter_count']:5d}  f {float(a['f']):.8g} {float(b['f']):.8g}  {'same' if same else 'DIFF'}  t {ti:.2f}/{tc:.2f}", flush=True)
print("same", ok, "of", tot)
