"""Setup time of a plain CasADi SX AC-OPF: read, grouped and derived (issue 20).

The model is :func:`benchmarks.models.acopf.acopf_casadi_polar` (variables vm, va,
pg, qg; the branch flows written out in the balances and thermal limits; no
``.map``), built once per child process and not timed.  Each reader runs in its
own child process, which times

* ``read``    ``casadi_to_model``: casadi's Function, the instruction program read,
              terms grouped into template blocks (bulk) or the DAG built (per node);
* ``problem`` ``Problem(model)``: pattern groups and their derivatives;
* ``total``   ``from_casadi`` (both), wall and process CPU seconds,

and reports the instruction count, the number of pattern groups, whether the bulk
reader took the program (``taken``: else it read it per node) and the child's peak
resident memory (model building included).  Readers: ``bulk`` (the default
for large SX programs) and ``per-node`` (``bulk=False``, the reference path).

    python benchmarks/bench_setup_sx.py [--cases case9241_pegase ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time


def child(case: str, reader: str) -> dict:
    import casadi as ca

    from benchmarks.models.acopf import acopf_casadi_polar
    from caspar_backend.adapters.casadi import casadi_to_model
    from caspar_backend.problem import Problem

    nlp, _args = acopf_casadi_polar(case)
    k = ca.Function("count", [nlp["x"]], [nlp["f"], nlp["g"]]).n_instructions()
    bulk = {"bulk": True, "per-node": False}[reader]
    t0, c0 = time.perf_counter(), time.process_time()
    model = casadi_to_model(nlp, bulk=bulk)
    t1, c1 = time.perf_counter(), time.process_time()
    prob = Problem(model)
    t2, c2 = time.perf_counter(), time.process_time()
    return dict(case=case, reader=reader, instructions=k, n=prob.n, m=prob.m,
                read=t1 - t0, problem=t2 - t1, total=t2 - t0, total_cpu=c2 - c0,
                read_cpu=c1 - c0, groups=len(prob.groups), taken="bulk" in model.meta,
                rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def run(case: str, reader: str) -> dict:
    p = subprocess.run([sys.executable, __file__, "--child", case, reader],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return dict(case=case, reader=reader,
                    error=(p.stderr.strip().splitlines() or ["killed"])[-1])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=["case9241_pegase"])
    ap.add_argument("--readers", nargs="*", default=["bulk", "per-node"])
    ap.add_argument("--repeat", type=int, default=3, help="runs per reader (medians)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(*a.child)))
        return
    print("| case | reader | instructions | groups | read s (CPU) | Problem s | total s "
          "(CPU) | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for case in a.cases:
        for reader in a.readers:
            runs = [run(case, reader) for _ in range(a.repeat)]
            ok = [r for r in runs if "error" not in r]
            for r in runs:
                print(json.dumps(r), file=sys.stderr, flush=True)
            if not ok:
                print(f"| {case} | {reader} | failed: {runs[0]['error']} |")
                continue

            def med(key):
                return statistics.median(r[key] for r in ok)

            r = ok[0]
            print(f"| {case} | {reader} | {r['instructions']:,} | {r['groups']} | "
                  f"{med('read'):.2f} ({med('read_cpu'):.2f}) | {med('problem'):.2f} | "
                  f"{med('total'):.2f} ({med('total_cpu'):.2f}) | {med('rss_mb'):.0f} |",
                  flush=True)


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0])
    main()
