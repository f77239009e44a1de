"""Benchmark: caspar-CPU vs IPOPT (CasADi's bundled 3.14 with MUMPS) on the test bank.

    python benchmarks/bench_solver_bank.py [--fast] [--filter SUBSTRING] [--options k=v ...]
        [--caspar-options k=v ...] [--json PATH]

Prints one row per problem: status, objective, iterations and wall time of both solvers
(IPOPT's time is its own t_wall_total; caspar's is the whole solve_nlp call).  ``--json``
also writes caspar's ``{problem: [status, iterations, repr(objective)]}``: two such files
from two commits are equal exactly when a change left every answer bit for bit as it was
(the check a refactor must pass).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # the repository root: tests.support

from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import run_caspar, run_ipopt  # noqa: E402


def _parse(kv):
    out = {}
    for item in kv:
        k, v = item.split("=", 1)
        for conv in (int, float):
            try:
                v = conv(v)
                break
            except ValueError:
                pass
        out[k] = v
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--fast", action="store_true", help="skip the large instances")
    ap.add_argument("--filter", default="")
    ap.add_argument("--json", default=None, help="write caspar's status, iterations and "
                    "repr(objective) per problem to this file")
    ap.add_argument("--options", nargs="*", default=[], help="key=value for both solvers")
    ap.add_argument("--caspar-options", nargs="*", default=[],
                    help="key=value for caspar alone (its own options)")
    a = ap.parse_args(argv)
    opts = _parse(a.options)
    copts = {**opts, **_parse(a.caspar_options)}
    hdr = (f"{'problem':34s} {'IPOPT status':28s} {'caspar status':28s} {'f IPOPT':>14s} "
           f"{'f caspar':>14s} {'it I':>5s} {'it c':>5s} {'t I [s]':>8s} {'t c [s]':>8s}")
    print(hdr)
    print("-" * len(hdr))
    ratios = []
    answers = {}
    for p in bank(include_slow=not a.fast):
        if a.filter not in p.name:
            continue
        d = dict(p.build(), options=p.options)
        ri = run_ipopt(d, opts)
        t = time.perf_counter()
        rc = run_caspar(d, copts)
        tc = time.perf_counter() - t
        ratios.append(rc.iterations / max(ri["iter"], 1))
        answers[p.name] = [rc.status, int(rc.iterations), repr(float(rc.f))]
        print(f"{p.name:34s} {ri['status']:28s} {rc.status:28s} {ri['f']:14.7e} {rc.f:14.7e} "
              f"{ri['iter']:5d} {rc.iterations:5d} {ri['t']:8.3f} {tc:8.3f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(answers, f, indent=0)
    if ratios:
        print(f"\nmedian iteration ratio caspar/IPOPT = {np.median(ratios):.3f} "
              f"over {len(ratios)} problems")


if __name__ == "__main__":
    main()
