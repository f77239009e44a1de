import sys, os
sys.path.insert(0, "/work/main")
import casadi as ca
from benchmarks.cases import acopf_cases
from benchmarks.models.reference import _ipopt_opts
name = sys.argv[1]; iters = int(sys.argv[2])
case = next(acopf_cases(100000, names={name}))
kind, nlp, args, extra = case.build()
opts = _ipopt_opts(1e-6, iters, {})
opts["expand"] = True
opts["ipopt.print_level"] = 5
S = ca.nlpsol("s", "ipopt", nlp, opts)
r = S(**{k: v for k, v in args.items() if k in ("x0", "lbx", "ubx", "lbg", "ubg", "p")})
