import sys, os
sys.path.insert(0, os.getcwd()); sys.path.insert(0, "/tmp")
if os.environ.get("ALT") == "1":
    import alt_patch  # noqa
if os.environ.get("SCALE") == "1":
    import scale_patch  # noqa
import caspar_backend as cb
from benchmarks.cases import acopf_cases
name = sys.argv[1]
case = next(acopf_cases(100000, names={name}))
kind, nlp, args, extra = case.build()
P = cb.from_casadi(nlp, **args)
r = P.solve(tol=1e-6, print_level=int(os.environ.get("PL", "0")), device="cpu", **({"kkt_static_regularization": float(os.environ["EPS"])} if os.environ.get("EPS") else {}))
print(name, "SCALE", os.environ.get("SCALE"), "ALT", os.environ.get("ALT"), r.status, r.iterations, repr(r.f), __import__("sys").modules.get("alt_patch") and __import__("sys").modules["alt_patch"].STATS)
