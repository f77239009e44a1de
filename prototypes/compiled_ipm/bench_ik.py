"""The prototype against caspar's single path and IPOPT on the three-link arm IK.

    /work/venv_numba/bin/python bench_ik.py [--targets 200] [--no-compile]

Prints, for the targets (x0 = (0.1, 0.2, 0.3)):
  * iterations equal to caspar's single path (count), status, max relative objective
    difference, per backend of the prototype (tape interpreter / generated code);
  * median and p99 time per solve, and per iteration: prototype (warm), caspar single
    path (problem.solve) and IPOPT (casadi.nlpsol), interleaved target by target;
  * "flat": the interpreter build with the tuples of arrays packed into four flat
    buffers (proto/flatten.py);
  * first-call compile time (fresh Numba cache, a new process) and the cached load
    (a second process on the same cache), per backend.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def compile_times(backend):
    with tempfile.TemporaryDirectory(prefix="numba_cache_") as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        out = []
        for _ in range(2):
            r = subprocess.run([sys.executable, os.path.join(HERE, "compile_probe.py"), backend],
                               env=env, capture_output=True, text=True, check=True)
            out.append(json.loads(r.stdout.strip().splitlines()[-1]))
        return out


def stats(ts):
    ts = np.asarray(ts) * 1e6
    return np.median(ts), np.percentile(ts, 99)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", type=int, default=200)
    ap.add_argument("--no-compile", action="store_true")
    a = ap.parse_args()

    import casadi as ca
    import caspar_backend
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
    from proto.builder import SmallSolver, FlatSolver

    nlp, bounds = arm_ik()
    problem = caspar_backend.from_casadi(nlp, **bounds)
    lbx, ubx, lbg, ubg = bounds["lbx"], bounds["ubx"], bounds["lbg"], bounds["ubg"]
    protos = {b: SmallSolver(problem, lbx, ubx, lbg, ubg, backend=b)
              for b in ("interp", "codegen")}
    protos["flat"] = FlatSolver(problem, lbx, ubx, lbg, ubg)
    ipopt = ca.nlpsol("S", "ipopt", nlp, {"ipopt.print_level": 0, "print_time": 0})
    x0 = np.array([0.1, 0.2, 0.3])
    T = arm_targets(a.targets)
    # warm-up (compiles / loads the cache; caspar's first solve builds its structures)
    for s in protos.values():
        s.solve(x0, T[0])
    problem.solve(x0=x0, p=T[0], print_level=0)
    ipopt(x0=x0, p=T[0], lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg)

    t = {k: [] for k in ("interp", "codegen", "flat", "caspar", "ipopt")}
    its = {k: [] for k in t}
    res = {k: [] for k in ("interp", "codegen", "flat")}
    ref = []
    for tgt in T:
        for b, s in protos.items():
            t0 = time.perf_counter()
            st, it, x, f = s.solve(x0, tgt)
            t[b].append(time.perf_counter() - t0)
            its[b].append(it)
            res[b].append((st, it, f, x))
        t0 = time.perf_counter()
        r = problem.solve(x0=x0, p=tgt, print_level=0)
        t["caspar"].append(time.perf_counter() - t0)
        its["caspar"].append(r.iterations)
        ref.append(r)
        t0 = time.perf_counter()
        sol = ipopt(x0=x0, p=tgt, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg)
        t["ipopt"].append(time.perf_counter() - t0)
        its["ipopt"].append(ipopt.stats()["iter_count"])

    print(f"three-link arm IK, {len(T)} targets, x0 = {x0.tolist()}  (load avg "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print("\nagreement with caspar's single path (problem.solve):")
    for b in res:
        same_it = sum(int(rr[1] == r.iterations) for rr, r in zip(res[b], ref))
        ok = sum(int(rr[0] == 0 and r.status == "Solve_Succeeded") for rr, r in zip(res[b], ref))
        rel = max(abs(rr[2] - r.f) / max(abs(r.f), 1e-300) for rr, r in zip(res[b], ref))
        bit = sum(int(rr[2] == r.f and np.array_equal(rr[3], r.x)) for rr, r in zip(res[b], ref))
        ej = sum(int(rr[0] < 0) for rr in res[b])
        print(f"  {b:8s} iterations equal {same_it}/{len(T)}, both Solve_Succeeded {ok}, "
              f"ejected {ej}, max rel objective diff {rel:.2e}, x and f bit-identical {bit}")
    print("\ntime per solve (interleaved, same run), us:")
    print(f"  {'':8s} {'median':>9s} {'p99':>9s} {'iters(med)':>10s} {'us/iter(med)':>12s}"
          f" {'median/IPOPT':>12s}")
    med_ip = stats(t["ipopt"])[0]
    for k in t:
        med, p99 = stats(t[k])
        per_it = np.median(np.asarray(t[k]) * 1e6 / np.maximum(1, its[k]))
        print(f"  {k:8s} {med:9.1f} {p99:9.1f} {np.median(its[k]):10.0f} {per_it:12.2f}"
              f" {med / med_ip:12.3f}")
    # fixed cost of one call (structure check, scaling, initialization; max_iter = 0)
    for b, s in protos.items():
        keep = s.O[47]
        s.O[47] = 0
        ts = []
        for tgt in T:
            t0 = time.perf_counter()
            s.solve(x0, tgt)
            ts.append(time.perf_counter() - t0)
        s.O[47] = keep
        print(f"  {b:8s} call + setup + initialization alone (max_iter=0): median "
              f"{np.median(ts) * 1e6:.1f} us")
    if not a.no_compile:
        print("\ncompile (new processes; a fresh NUMBA_CACHE_DIR, then the same one again):")
        for b in ("interp", "codegen", "flat"):
            cold, warm = compile_times(b)
            print(f"  {b:8s} first call: {cold['first_solve_wall_s']:.1f} s wall "
                  f"({cold['first_solve_cpu_s']:.1f} s CPU); cached, second process: "
                  f"{warm['first_solve_wall_s']:.2f} s wall ({warm['first_solve_cpu_s']:.2f} s "
                  f"CPU); building the tables/module {warm['build_s']:.2f} s")


if __name__ == "__main__":
    main()
