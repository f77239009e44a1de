"""Next lease (not run): cuDSS without the static term, its perturbed pivots as zero pivots.

cuDSS replaces a pivot below its epsilon by +-eps and counts it (CUDSS_DATA_NPIVOTS, read
after FACTORIZATION) -- as PARDISO's iparm[13], which caspar's pardisomkl path already reads
as "K singular" with no static term (bank: degenerate_duplicate_constraints and
unbounded_linear at IPOPT's answers on the CPU that way).  Session 47 found the static term
is what parts the GPU from IPOPT (Van der Pol collocation 10^4, case1803_snem) and what
those two bank cases need on cuDSS.  This script patches CudssSolver._factorize_cudss (no
library change) and runs, per configuration -- default; kkt_static_regularization=0;
kkt_static_regularization=0 with perturbed pivots singular -- the bank on the GPU
against IPOPT, Van der Pol collocation 10^4 and four PGLib cases.

    bash .stage/p6/install.sh && export PYTHONPATH=/tmp/site:$PYTHONPATH \
        LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH && \
        PYTHONPATH=$PWD:$PYTHONPATH python s48_cudss_npivots.py > $OUT/npivots.txt
"""
import os
import sys
import time

sys.path.insert(0, os.getcwd())

import numpy as np  # noqa: E402

import caspar_backend as cb  # noqa: E402
import caspar_backend.linsolve.cudss as cu  # noqa: E402
from caspar_backend.linsolve.base import Factorization  # noqa: E402

_orig = cu.CudssSolver._factorize_cudss
PATCH = {"on": False, "seen": 0}


def _patched(self, values):
    f = _orig(self, values)
    if not PATCH["on"]:
        return f
    h = self._handle
    buf = np.zeros(1, dtype=np.int32)  # CUDSS_DATA_NPIVOTS: int (nvmath 0.x lacks its dtype entry)
    h._get(h._c.DataParam.NPIVOTS, buf)
    npiv = int(buf[0])
    if npiv > 0:
        PATCH["seen"] += 1
        return Factorization(False, f.n_pos, f.n_neg, max(f.n_zero, npiv))
    return f


cu.CudssSolver._factorize_cudss = _patched
CONFIGS = [("default", {}, False), ("static0", {"kkt_static_regularization": 0.0}, False),
           ("static0+npivots", {"kkt_static_regularization": 0.0}, True)]


def bank_rows():
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import run_caspar, run_ipopt
    for p in bank(include_slow=False):
        d = dict(p.build(), options=p.options)
        ri = run_ipopt(d, {})
        row = [f"{p.name:36s} IPOPT {ri['status'][:20]:20s} {ri['iter']:4d}"]
        for name, o, on in CONFIGS:
            PATCH["on"], PATCH["seen"] = on, 0
            try:
                r = run_caspar(d, dict(o, device="cuda", max_wall_time=20), public=True)
                row.append(f"{name}: {r.status[:20]:20s} {r.iterations:4d} ({PATCH['seen']})")
            except Exception as e:
                row.append(f"{name}: ERROR {type(e).__name__}")
        print("bank", " | ".join(row), flush=True)


def model_rows():
    from benchmarks.models.acopf import acopf_casadi, acopf_data
    from benchmarks.models.matpower import load_pglib
    from caspar_backend.adapters.casadi.models import vanderpol_collocation
    models = [("vdp_colloc_10000", *vanderpol_collocation(10000))]
    for case in ("case1354_pegase", "case1803_snem", "case1888_rte", "case2000_goc"):
        nlp, args = acopf_casadi(acopf_data(load_pglib(case)))
        args.pop("data", None)
        models.append((case, nlp, args))
    for name, nlp, args in models:
        P = cb.from_casadi(nlp, **args)
        P.solve(tol=1e-6, print_level=0, device="cuda", max_iter=1)     # analysis once
        for cname, o, on in CONFIGS:
            PATCH["on"], PATCH["seen"] = on, 0
            t = time.perf_counter()
            r = P.solve(tol=1e-6, print_level=0, device="cuda", max_wall_time=30, **o)
            print("model", f"{name:18s} {cname:16s} {r.status[:20]:20s} {r.iterations:4d} "
                  f"{float(r.f)!r} {time.perf_counter() - t:.2f}s ({PATCH['seen']})", flush=True)


if __name__ == "__main__":
    model_rows()
    bank_rows()
