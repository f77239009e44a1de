"""The prototype (tape interpreter: compiled once, the model is data) on caspar's problem
bank (tests/support/problem_bank.py, large instances left out), from each problem's x0:
status, iterations and objective against caspar's single path; time per solve of both
and IPOPT (casadi nlpsol).  Instances that meet a path the prototype does not implement
are counted as ejected (the product would run the general path)."""
import os, sys, time
from collections import Counter
import numpy as np
sys.path.insert(0, "/work/main")                      # tests.support (read only)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tests.support.problem_bank import bank
from tests.support.solver_harness import _nlp
import casadi as ca
from caspar_backend.adapters.casadi import from_casadi
from proto.builder import SmallSolver, STATUS
from proto.tape import Unsupported

REASONS = {-1: "invalid number at start", -2: "invalid number in a derivative",
           -3: "zero pivot at delta_w=0", -4: "pivoting switch", -5: "no regularization",
           -6: "refinement fall-back", -7: "step not finite", -8: "safe slacks",
           -9: "watchdog", -10: "line search failed (restoration)",
           -11: "invalid at every trial", -20: "fixed variables / structure / filter full",
           -21: "not enough degrees of freedom", -30: "option not implemented (start_with_resto, ...)"}


def timeit(fn, k=5):
    ts = []
    for _ in range(k):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


counts, fates, rows = Counter(), Counter(), []
for bp in bank(include_slow=False):
    d = bp.build()
    problem = from_casadi(_nlp(d))
    opts = dict(bp.options)
    bounds = {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}
    x0 = np.asarray(d["x0"], float)
    try:
        s = SmallSolver(problem, **bounds, backend="interp", **opts)
    except Unsupported as e:
        fates[f"unsupported op {e}"] += 1
        continue
    except Exception as e:                       # noqa: BLE001
        fates[f"setup: {type(e).__name__}"] += 1
        continue
    st, it, x, f = s.solve(x0, problem.p)
    r = problem.solve(x0, **bounds, print_level=0, **opts)
    if st < 0:
        fates["ejected: " + REASONS.get(st, str(st))] += 1
        continue
    same_it = it == r.iterations and STATUS[st] == r.status
    rel = abs(f - r.f) / max(1.0, abs(r.f))
    fates["lockstep, same status+iterations" if same_it else "DIFFERENT status/iterations"] += 1
    tp = timeit(lambda: s.solve(x0, problem.p))
    tc = timeit(lambda: problem.solve(x0, **bounds, print_level=0, **opts), 3)
    conv = {k: ("yes" if v is True else "no" if v is False else v) for k, v in opts.items()}
    try:
        S = ca.nlpsol("S", "ipopt", _nlp(d), {"ipopt.print_level": 0, "print_time": 0,
                                              **{"ipopt." + k: v for k, v in conv.items()}})
        args = dict(x0=x0, lbx=d["lbx"], ubx=d["ubx"])
        if d["g"] is not None:
            args.update(lbg=d["lbg"], ubg=d["ubg"])
        ti = timeit(lambda: S(**args), 3)
    except Exception:                            # noqa: BLE001
        print("   (IPOPT options", opts, "not taken: no IPOPT time)")
        ti = np.nan
    rows.append((bp.name, problem.n, problem.m, it, r.iterations, rel, same_it, tp, tc, ti))
    print(f"{bp.name:28s} {str(opts)[:30]:30s} n={problem.n:4d} m={problem.m:4d} it {it:4d}/{r.iterations:4d} "
          f"rel f {rel:.1e} proto {tp * 1e6:8.0f} us  caspar {tc * 1e6:9.0f} us  ipopt "
          f"{ti * 1e6:8.0f} us", flush=True)
print("\nfates:", dict(fates))
if rows:
    a = np.array([(r[7], r[8], r[9]) for r in rows])
    print(f"solved by the prototype: {len(rows)}; max rel f diff {max(r[5] for r in rows):.1e}; "
          f"median time ratio prototype/IPOPT {np.nanmedian(a[:, 0] / a[:, 2]):.3f}, "
          f"caspar/IPOPT {np.nanmedian(a[:, 1] / a[:, 2]):.2f}")
