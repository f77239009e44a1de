import sys, os, time
sys.path.insert(0, os.getcwd())
import casadi as ca
from benchmarks.cases import acopf_cases
from benchmarks.models.reference import _ipopt_opts
case = next(acopf_cases(20000, names={"case13659_pegase"}))
kind, nlp, args, extra = case.build()
which = sys.argv[1]
if which == "ipopt":
    opts = _ipopt_opts(1e-6, 3000, {})
    opts["expand"] = True
    opts["ipopt.print_level"] = 5
    opts["ipopt.output_file"] = "/tmp/ipopt13659.log"
    opts["ipopt.file_print_level"] = 5
    S = ca.nlpsol("s", "ipopt", nlp, opts)
    r = S(**{k: v for k, v in args.items() if k in ("x0", "lbx", "ubx", "lbg", "ubg", "p")})
    print(S.stats()["iter_count"])
else:
    import caspar_backend as cb
    P = cb.from_casadi(nlp, **args)
    r = P.solve(tol=1e-6, print_level=5, device="cpu")
    print(r.status, r.iterations)
