"""Parameter estimation by shooting (CasADi's system-identification example system):
caspar's nlpsol against IPOPT's, construction and solve, the way a CasADi user waits.

    python benchmarks/bench_estimation.py [--N 2000] [--shooting multiple single]
                                          [--out DIR]

Per shooting mode (``benchmarks/models/estimation.py``), in one process: the problem is
built, then ``casadi.nlpsol(..., 'ipopt', ...)`` and ``caspar_backend.casadi.nlpsol(...,
'caspar', ...)`` are constructed (timed: IPOPT builds its derivative functions, caspar
reads, groups, derives and compiles) and called once (timed), each with its default
exact Hessian and IPOPT's default tol 1e-8.  Reported: construction and solve seconds,
their sum, iterations, status, the objective, the largest relative error of the
estimated parameters against the truth, and caspar's end-to-end time over IPOPT's.
Multiple shooting exercises the map call site read as template blocks (its results
enter the continuity constraints and the squared residuals of f); single shooting a
``mapaccum`` chain.  --out DIR writes DIR/results.csv and DIR/meta.json.  --phases
prints where each solve's time went: IPOPT's ``t_wall_nlp_*`` stats and the seconds of
caspar's calls of the CasADi Functions it evaluates on the host (opaque calls: values,
derivatives; docs/single-shooting.md).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

COLUMNS = ("shooting", "N", "solver", "construct", "solve", "total", "iterations", "status",
           "f", "param_error", "ratio")


def host_timer() -> dict:
    """Patch CasadiHostFunction's evaluations with per-method seconds and call counts."""
    from caspar_backend.adapters.casadi.opaque import CasadiHostFunction

    spent: dict = {}
    for name in ("values", "jacobian", "hessian", "directional", "directional_hessian",
                 "vjp"):
        orig = getattr(CasadiHostFunction, name)

        def timed(self, *a, _orig=orig, _name=name):
            t = time.perf_counter()
            try:
                return _orig(self, *a)
            finally:
                s, c = spent.get(_name, (0.0, 0))
                spent[_name] = (s + time.perf_counter() - t, c + 1)

        setattr(CasadiHostFunction, name, timed)
    return spent


def phases(solver: str, stats: dict, spent: dict) -> str:
    """One line: IPOPT's own timing stats, or caspar's host calls (seconds, calls)."""
    if solver == "ipopt":
        return ", ".join(f"{k[7:]} {v:.2f} s ({stats.get('n_call_' + k[7:], '?')})"
                         for k, v in sorted(stats.items())
                         if k.startswith("t_wall_nlp_") and v > 0)
    return ", ".join(f"host {k} {s:.2f} s ({c})" for k, (s, c) in spent.items()) or "-"


def run(shooting: str, N: int, spent: dict | None = None) -> list[dict]:
    import casadi as ca

    from benchmarks.models.estimation import SCALE, TRUTH, estimation_nlp
    from caspar_backend.casadi import nlpsol as caspar_nlpsol

    rows = []
    for solver in ("ipopt", "caspar"):
        nlp, args = estimation_nlp(N, shooting)
        make = ca.nlpsol if solver == "ipopt" else caspar_nlpsol
        opts = ({"print_time": False, "ipopt.print_level": 0} if solver == "ipopt"
                else {"print_time": False, "caspar": {"print_level": 0}})
        t0 = time.perf_counter()
        S = make("S", solver, nlp, opts)
        t1 = time.perf_counter()
        sol = S(**args)
        t2 = time.perf_counter()
        st = S.stats()
        if spent is not None:
            print(f"{shooting} N={N} {solver}: {phases(solver, st, spent)}")
            spent.clear()
        p = np.asarray(sol["x"]).ravel()[:4] * SCALE
        rows.append(dict(shooting=shooting, N=N, solver=solver, construct=t1 - t0,
                         solve=t2 - t1, total=t2 - t0, iterations=int(st["iter_count"]),
                         status=st["return_status"], f=float(sol["f"]),
                         param_error=float(np.max(np.abs(p / (TRUTH * SCALE) - 1.0)))))
    for r in rows:
        r["ratio"] = r["total"] / rows[0]["total"]
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--N", type=int, default=2000)
    ap.add_argument("--shooting", nargs="+", default=["multiple", "single"])
    ap.add_argument("--out", default=None)
    ap.add_argument("--phases", action="store_true")
    a = ap.parse_args(argv)
    spent = host_timer() if a.phases else None
    rows = []
    for shooting in a.shooting:
        rows += run(shooting, a.N, spent)
    print("| shooting | N | solver | construct s | solve s | total s | it | status | f | "
          "param err | / IPOPT |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['shooting']} | {r['N']} | {r['solver']} | {r['construct']:.2f} | "
              f"{r['solve']:.2f} | {r['total']:.2f} | {r['iterations']} | {r['status']} | "
              f"{r['f']:.3e} | {r['param_error']:.1e} | {r['ratio']:.2f} |")
    if a.out:
        from benchmarks.runner import commit, hardware, write_meta, write_results

        write_results(a.out, list(COLUMNS), rows)
        hw = hardware()
        write_meta(os.path.join(a.out, "meta.json"), commit=commit(),
                   date=time.strftime("%Y-%m-%d %H:%M %Z"),
                   hardware=f"{hw['cpu']}, {hw['cores']} cores (load average "
                            f"{os.getloadavg()[0]:.1f} at the end)",
                   sizes=f"N = {a.N} samples (multiple shooting: {2 * a.N + 4} "
                         "variables; single shooting: 4)",
                   tol="IPOPT's default tol 1e-8 on both, exact Hessians; one process, "
                       "IPOPT first",
                   command=" ".join(["python benchmarks/bench_estimation.py",
                                     *(argv if argv is not None else sys.argv[1:])]))
        print(f"wrote {a.out}/results.csv and meta.json")


if __name__ == "__main__":
    main()
