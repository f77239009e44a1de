import sys, os, time
sys.path.insert(0, os.getcwd())
import casadi as ca
from benchmarks.cases import acopf_cases
from benchmarks.models.reference import _ipopt_opts
case = next(acopf_cases(2000, names={"case1888_rte"}))
kind, nlp, args, extra = case.build()
which = sys.argv[1]
t = time.perf_counter()
if which == "ipopt":
    opts = _ipopt_opts(1e-6, 3000, {})
    opts["expand"] = True
    opts["ipopt.print_level"] = 5
    S = ca.nlpsol("s", "ipopt", nlp, opts)
    r = S(**{k: v for k, v in args.items() if k in ("x0", "lbx", "ubx", "lbg", "ubg", "p")})
    print("IPOPT", S.stats()["iter_count"], time.perf_counter() - t)
else:
    import caspar_backend as cb
    P = cb.from_casadi(nlp, **args)
    r = P.solve(tol=1e-6, print_level=5, device="cpu")
    print("CASPAR", r.status, r.iterations, time.perf_counter() - t)
