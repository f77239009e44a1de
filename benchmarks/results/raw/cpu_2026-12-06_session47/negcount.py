"""How often an unpivoted QDLDL factorization of K + E (every constraint row's diagonal
negative) reports fewer than m negative eigenvalues -- impossible in exact arithmetic --
over the COPS, OCP and PGLib (typ <= 2,000 buses) suites, general path, tol 1e-6."""
import sys, csv, time
sys.path.insert(0, '/work/main')
import numpy as np
import caspar_backend as cb
import caspar_backend.kkt.augmented as A
from benchmarks.cases import cops_cases, ocp_cases, acopf_cases
stats = {}
orig = A.AugmentedKKT.factorize
def fz(self):
    fact, ok = orig(self)
    s = stats.setdefault("cur", dict(f=0, bad=0, badrows=0))
    s["f"] += 1
    if self.solver.name == "qdldl" and not getattr(self.solver, "pivots", False) and self.r == 0:
        dc = np.asarray(self._diag_c)
        if fact.ok and fact.n_neg < self.m and np.all(dc < 0):
            s["bad"] += 1
    return fact, ok
A.AugmentedKKT.factorize = fz
which = sys.argv[1]
cases = {"cops": lambda: cops_cases("1"), "ocp": lambda: ocp_cases([1000, 10000]),
         "acopf": lambda: acopf_cases(2000)}[which]()
for c in cases:
    b = c.build()
    P = cb.from_pyomo(b[1]) if b[0] == "pyomo" else cb.from_casadi(b[1], **b[2])
    stats["cur"] = dict(f=0, bad=0)
    t = time.perf_counter()
    r = P.solve(tol=1e-6, print_level=0, compiled_path="no", max_wall_time=120)
    print(f"{c.name:18s} {c.size:10s} {r.status[:16]:16s} it {r.iterations:4d} factorizations {stats['cur']['f']:5d} n_neg<m {stats['cur']['bad']:4d} {time.perf_counter()-t:.1f}s", flush=True)
