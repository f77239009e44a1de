import sys, os
sys.path.insert(0, os.getcwd())
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_ipopt, run_caspar
tol = float(sys.argv[1])
for p in bank(include_slow=False):
    d = dict(p.build(), options=p.options)
    try:
        a = run_ipopt(d, {"tol": tol})
        b = run_caspar(d, {"tol": tol})
    except Exception as e:
        print(p.name, "ERR", e); continue
    flag = "" if (a["status"], a["iter"]) == (b.status, b.iterations) else "  <-- differs"
    if a["status"] != "Solve_Succeeded" or flag:
        print(f"{p.name:40s} IPOPT {a['status']} {a['iter']}   caspar {b.status} {b.iterations}{flag}", flush=True)
