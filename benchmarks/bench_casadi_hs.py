"""CasADi's own Hock-Schittkowski collection through caspar's ``nlpsol``, against IPOPT.

    python benchmarks/bench_casadi_hs.py DIR [--json PATH] [--filter hs05]

DIR is ``test/python/hock_schittkowski`` of a CasADi source checkout (not part of this
repository: models written by others, read from where the user keeps them).  Each file
``hsNNN.py`` defines ``hsNNN()`` returning ``(x_opt, f_opt, x, f, g, lbg, ubg, lbx, ubx,
x0)`` on MX symbols (rows assigned element by element into ``MX.zeros``).  Every problem is
solved by ``casadi.nlpsol(..., 'ipopt')`` (the wheel's IPOPT 3.14 + MUMPS) and by
``caspar_backend.casadi.nlpsol(..., 'caspar')`` with the defaults of both; one row per
problem: both return statuses and iteration counts, the objectives' relative difference
``|f_c - f_i| / max(1, |f_i|)`` and a mark where the statuses differ or the objectives
differ by more than 1e-6.  ``--json`` writes ``{problem: {"ipopt": [status, iterations,
f], "caspar": [...]}}``.  A check, not a timing: the solves are small.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import importlib.util
import io
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def load(path: str):
    """The tuple ``hsNNN()`` of the file ``path`` returns."""
    name = os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(f"casadi_hs_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):    # the files print remarks
        spec.loader.exec_module(mod)
        return getattr(mod, name)()


def solve(make, solver: str, nlp: dict, args: dict, opts: dict):
    """``[status, iterations, f]`` of one solve (the status 'exception: ...' where the
    solver raised)."""
    try:
        S = make("S", solver, nlp, dict(opts, print_time=False))
        with contextlib.redirect_stdout(io.StringIO()):
            r = S(**args)
        st = S.stats()
        return [st.get("return_status"), int(st.get("iter_count", -1)), float(r["f"])]
    except Exception as e:          # a failure is a row of the table, not the end of it
        return [f"exception: {e!r}"[:120], -1, math.nan]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="CasADi's test/python/hock_schittkowski")
    ap.add_argument("--json", default=None)
    ap.add_argument("--filter", default="")
    a = ap.parse_args(argv)
    import casadi as cs

    from caspar_backend.casadi import nlpsol

    paths = sorted(p for p in glob.glob(os.path.join(a.dir, "hs*.py")) if a.filter in p)
    if not paths:
        raise SystemExit(f"no hs*.py in {a.dir}")
    out, marked = {}, 0
    print("| problem | IPOPT | it | caspar | it | rel. f difference | |\n"
          "|---|---|---|---|---|---|---|")
    for path in paths:
        name = os.path.basename(path)[:-3]
        _, _, x, f, g, lbg, ubg, lbx, ubx, x0 = load(path)
        nlp = {"x": x, "f": f, "g": g}
        args = dict(x0=x0, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg)
        ri = solve(cs.nlpsol, "ipopt", nlp, args, {"ipopt": {"print_level": 0, "sb": "yes"}})
        rc = solve(nlpsol, "caspar", nlp, args, {"caspar": {"print_level": 0}})
        rel = abs(rc[2] - ri[2]) / max(1.0, abs(ri[2]))
        mark = "" if ri[0] == rc[0] and rel <= 1e-6 else "differs"
        marked += bool(mark)
        out[name] = {"ipopt": ri, "caspar": rc}
        print(f"| {name} | {ri[0]} | {ri[1]} | {rc[0]} | {rc[1]} | {rel:.1e} | {mark} |",
              flush=True)
    same_it = sum(v["ipopt"][:2] == v["caspar"][:2] for v in out.values())
    print(f"\n{len(out)} problems: {same_it} with IPOPT's status and iterations, "
          f"{marked} differing in status or objective (> 1e-6)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=0)
    return out


if __name__ == "__main__":
    main()
