#!/usr/bin/env bash
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc_diag3 PYTHONPATH=$PWD:$PYTHONPATH
timeout 90 python - <<'PY' 2>&1 | grep -E "^(vdp|acopf) " | tee $OUT/static0.txt
import os, sys, time
sys.path.insert(0, os.getcwd())
import numpy as np, casadi as ca, caspar_backend as cb
from caspar_backend.adapters.casadi.models import vanderpol_collocation
nlp, args = vanderpol_collocation(10000)
P = cb.from_casadi(nlp, **args)
for o in ({}, {"kkt_static_regularization": 0.0}):
    t = time.perf_counter(); r = P.solve(tol=1e-6, print_level=0, device="cuda", **o)
    print("vdp", o, r.status, r.iterations, repr(float(r.f)), f"{time.perf_counter()-t:.2f}s", "(IPOPT 11, 3.616185419885552)", flush=True)
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
nlp, args = acopf_casadi(acopf_data(load_pglib("case1803_snem"))); args.pop("data", None)
P = cb.from_casadi(nlp, **args)
for o in ({"kkt_static_regularization": 0.0}, {"kkt_static_regularization": 0.0}, {}):
    t = time.perf_counter(); r = P.solve(tol=1e-6, print_level=0, device="cuda", max_wall_time=25, **o)
    print("acopf case1803_snem", o, r.status, r.iterations, repr(float(r.f)), f"{time.perf_counter()-t:.2f}s", "(IPOPT 123, 98334.543)", flush=True)
PY
