"""cuDSS's static term split by part (session 49): which of its two parts -- the primal
columns' ew_j = eps min(1, |K_j|) or the constraint rows' eps_i -- parts the GPU from IPOPT's
iterations (Van der Pol collocation 10^4, case1803_snem, case1888_rte, case8387_pegase,
case13659_pegase, case9241_pegase), and which the bank's degenerate_duplicate_constraints
and unbounded_linear need.  Patches AugmentedKKT (no library change):

* default;
* cols0: the columns' term 0 (``_primal_static_term`` writes ew = 0), the rows' kept, eps
  itself unchanged (so the refinement is still checked as regularized);
* rows0: the rows' term 0 (the ``row_static_term`` op given eps = 0), the columns' kept.

    PYTHONPATH=$PWD:$PYTHONPATH python s49d_terms.py [models|bank|all]
"""
import os
import sys
import time

sys.path.insert(0, os.getcwd())

import caspar_backend as cb  # noqa: E402
import caspar_backend.kkt.augmented as aug  # noqa: E402

MODE = {"v": "default"}
_orig_primal = aug.AugmentedKKT._primal_static_term
_fused = aug.fused


def _primal(self, eps):
    if MODE["v"] == "cols0":
        return self._uniform_primal_static_term(0.0)
    return _orig_primal(self, eps)


class _FusedProxy:
    def __getattr__(self, k):
        return getattr(_fused, k)

    @staticmethod
    def call(xp, name, *args, **kw):
        if name == "row_static_term" and MODE["v"] == "rows0":
            args = (args[0], 0.0) + tuple(args[2:])
        elif name == "row_static_term" and MODE["v"].startswith("rows*"):
            args = (args[0], args[1] * float(MODE["v"][5:])) + tuple(args[2:])
        return _fused.call(xp, name, *args, **kw)


aug.AugmentedKKT._primal_static_term = _primal
aug.fused = _FusedProxy()
CONFIGS = tuple(os.environ.get("S49D_CONFIGS", "default,cols0,rows0").split(","))
IPOPT_IT = {"case1803_snem": 123, "case1888_rte": 268, "case8387_pegase": 293,
            "case13659_pegase": 66, "case9241_pegase": 58, "vdp_colloc_10000": 11}


def model_rows(names):
    from benchmarks.models.acopf import acopf_casadi, acopf_data
    from benchmarks.models.matpower import load_pglib
    from caspar_backend.adapters.casadi.models import vanderpol_collocation
    for name in names:
        t = time.perf_counter()
        if name.startswith("vdp"):
            nlp, args = vanderpol_collocation(10000)
        else:
            nlp, args = acopf_casadi(acopf_data(load_pglib(name)))
            args.pop("data", None)
        P = cb.from_casadi(nlp, **args)
        P.solve(tol=1e-6, print_level=0, device="cuda", max_iter=1)     # analysis once
        print(f"# {name} built and analysed in {time.perf_counter() - t:.1f}s", flush=True)
        for v in CONFIGS:
            MODE["v"] = v
            t = time.perf_counter()
            r = P.solve(tol=1e-6, print_level=0, device="cuda", max_wall_time=60)
            print("model", f"{name:18s} {v:8s} {r.status[:20]:20s} {r.iterations:4d} "
                  f"(IPOPT {IPOPT_IT.get(name, '?')}) {float(r.f)!r} "
                  f"{time.perf_counter() - t:.2f}s", flush=True)
        MODE["v"] = "default"


def bank_rows():
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import run_caspar, run_ipopt
    for p in bank(include_slow=False):
        d = dict(p.build(), options=p.options)
        ri = run_ipopt(d, {})
        row = [f"{p.name:36s} IPOPT {ri['status'][:20]:20s} {ri['iter']:4d} {ri['f']!r}"]
        for v in CONFIGS:
            MODE["v"] = v
            try:
                r = run_caspar(d, dict(device="cuda", max_wall_time=20), public=True)
                row.append(f"{v}: {r.status[:20]:20s} {r.iterations:4d} {float(r.f)!r}")
            except Exception as e:    # noqa: BLE001
                row.append(f"{v}: ERROR {type(e).__name__}: {e}"[:120])
        MODE["v"] = "default"
        print("bank", " | ".join(row), flush=True)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("models", "all"):
        model_rows(["vdp_colloc_10000", "case1803_snem", "case1888_rte", "case9241_pegase",
                    "case8387_pegase", "case13659_pegase"])
    if what in ("bank", "all"):
        bank_rows()
