"""Device experiment (session 41): cuDSS's analysis with the ordering of an earlier one
(linsolve/cudss_ordering.py).

One process, one PGLib case (benchmark suite's CasADi AC-OPF), GPU, fresh Problems of the
same model (each a fresh analysis): A with an empty store (cuDSS reorders; the ordering
stored), B the store's ordering (permutation and ND tree), C the permutation alone, D the
store off.  Per run: build s, first solve s (analysis included), its analysis s, a
re-solve s, iterations, objective, factorization ms per iteration.  The ANALYSIS phases'
own times (REORDERING then SYMBOLIC_FACTORIZATION, timed apart) are printed as they run.
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
os.environ["CASPAR_PROBLEM_CACHE"] = "0"
os.environ["CASPAR_CUDSS_ORDERINGS"] = "1"
import caspar_backend as cb
from caspar_backend.linsolve import cudss_handle as H
from caspar_backend.linsolve import cudss_ordering as O
from benchmarks.cases import acopf_cases
from benchmarks.measure import phase_ms

case = sys.argv[1] if len(sys.argv) > 1 else "case9241_pegase"
c = H.bindings()
_execute = H.CudssHandle._execute


def timed_execute(self, phase, stream):
    if int(phase) != int(c.Phase.ANALYSIS):
        return _execute(self, phase, stream)
    import cupy as cp
    a, b, x = self._matrices
    c.set_stream(self._handle, int(stream))
    t0 = time.perf_counter()
    c.execute(self._handle, 1, self._config, self._data, a, x, b)
    cp.cuda.runtime.deviceSynchronize()
    t1 = time.perf_counter()
    c.execute(self._handle, 2, self._config, self._data, a, x, b)
    cp.cuda.runtime.deviceSynchronize()
    t2 = time.perf_counter()
    print(f"  ANALYSIS n={self.n} reorder {t1 - t0:.4f} s symbolic {t2 - t1:.4f} s", flush=True)


H.CudssHandle._execute = timed_execute
t = time.perf_counter()
built = list(acopf_cases(10 ** 6, {case}))[0].build()
print("model", round(time.perf_counter() - t, 2), flush=True)
nlp, args = built[1], built[2]


def run(label):
    t = time.perf_counter()
    p = cb.from_casadi(nlp, **args)
    p.evaluator("cuda")
    out = dict(build=time.perf_counter() - t)
    for k in range(2):
        t = time.perf_counter()
        r = p.solve(tol=1e-6, print_level=0, max_iter=3000, device="cuda")
        out[f"solve{k}"] = dict(s=round(time.perf_counter() - t, 4), status=r.status,
                                it=int(r.iterations), f=repr(float(r.f)),
                                phases=phase_ms(r),
                                analysis_s=float(r.extra.get("analysis_seconds", 0.0)))
    print("RUN", label, json.dumps(out), flush=True)


print("store", O.enabled(), os.environ.get("CASPAR_CACHE_DIR"), flush=True)
run("A-reorder")
got = dict(O.ORDERINGS._memory)
print("stored", {k[:8]: (v.perm.size, v.tree.size, v.tree[:8].tolist()) for k, v in got.items()},
      flush=True)
run("B-stored")
_get = O.ORDERINGS.get
O.ORDERINGS.get = lambda key, n: (lambda f: None if f is None else O.Ordering(
    f.perm, np.zeros(0, np.int32)))(_get(key, n))
run("C-perm-only")
O.ORDERINGS.get = _get
os.environ["CASPAR_CUDSS_ORDERINGS"] = "0"
run("D-off")
