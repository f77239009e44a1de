"""One PGLib case through caspar on the given devices at tol 1e-6, iteration logs to $OUT (print_level 5), twice per device (the re-solve too)."""
import os, sys, time
sys.path.insert(0, os.getcwd())
import caspar_backend as cb
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib

out = os.environ["OUT"]
name = sys.argv[1]
nlp, args = acopf_casadi(acopf_data(load_pglib(name)))
args.pop("data", None)
for device in sys.argv[2].split(","):
    P = cb.from_casadi(nlp, **args)
    P.evaluator(device)
    for k in (1, 2):
        t = time.perf_counter()
        r = P.solve(tol=1e-6, print_level=0, device=device, output_file=f"{out}/{name}_{device}_{k}.log")
        print(name, device, k, r.status, r.iterations, repr(float(r.f)), f"{time.perf_counter() - t:.2f}s", flush=True)
