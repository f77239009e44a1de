#!/usr/bin/env bash
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc_diag3 PYTHONPATH=$PWD:$PYTHONPATH
timeout 85 python - <<'PY' 2>&1 | grep -E "^(bank|acopf) " | tee $OUT/static0_b.txt
import os, sys, time
sys.path.insert(0, os.getcwd())
import caspar_backend as cb
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_caspar
probs = {p.name: p for p in bank()}
for name in ("degenerate_duplicate_constraints", "unbounded_linear"):
    p = probs[name]
    for o in ({}, {"kkt_static_regularization": 0.0}):
        try:
            d = dict(p.build(), options=p.options)
            t = time.perf_counter(); r = run_caspar(d, dict(o, device="cuda", max_wall_time=15), public=True)
            print("bank", name, o, r.status, r.iterations, repr(float(r.f)), f"{time.perf_counter()-t:.2f}s", flush=True)
        except Exception as e:
            print("bank", name, o, "ERROR", type(e).__name__, str(e)[:150], flush=True)
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
for case in ("case1888_rte", "case1951_rte", "case2000_goc"):
    nlp, args = acopf_casadi(acopf_data(load_pglib(case))); args.pop("data", None)
    P = cb.from_casadi(nlp, **args)
    for o in ({"kkt_static_regularization": 0.0}, {}):
        t = time.perf_counter(); r = P.solve(tol=1e-6, print_level=0, device="cuda", max_wall_time=12, **o)
        print("acopf", case, o, r.status, r.iterations, repr(float(r.f)), f"{time.perf_counter()-t:.2f}s", flush=True)
PY
