"""Array operations and host reads per interior-point iteration on the device code path.

    python benchmarks/count_device_ops.py [--problem acopf|chain|colloc] [SIZE] [--top 25]

On the GPU every array operation of the solver is a kernel launch with CuPy's Python
overhead (~10–40 µs each), and every scalar read back to the host synchronizes the
device; at 10^4–10^5 variables these, not the kernels, are the per-iteration floor (the
"other" column of the GPU benchmarks).  This script runs the *device* code path on the
CPU through the emulation the GPU tests use (tests/solver/test_gpu_solver.py: NumPy arrays posing
as device memory, qdldl posing as cuDSS) and counts, from the second iteration on:

* operations: ufunc calls, array functions, gathers ``x[idx]``, assignments ``x[...] = v``,
  copies (``astype``, ``copy``, ``fill``) on device arrays and the fused kernels of
  ``caspar_backend/arrays/fused.py`` (one each) -- each a launch on a GPU
  (the evaluator's and the linear solver's own kernels are not counted), per source line;
* host reads: ``.get()``, ``bool()`` and ``float()`` of device arrays, per source line.

SIZE: a PGLib case name (acopf, default case118_ieee), N (chain, default 10^4; colloc,
default 1111).  A benchmark, not a test: prints tables.

``--sequence K``: also the ordered launches of iteration K (K >= 2), cut into the runs a
CUDA graph could replay -- a run ends at a host read or a call of the linear solver
(cuDSS's phases cannot be captured); the evaluator's calls, the segment sums, the
indexed and the KKT matrix's matvecs are counted apart (each one or a few kernels of
their own on the GPU) -- and, per run, the fused kernels whose
scalar arguments differ in iteration K + 1 (what a replayed graph would have to read from
device memory instead) and those whose arrays are other buffers then, with the
positions of those arrays among the kernel's array arguments (a replayed graph works on
the buffers it was captured with).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def _site(skip=("arrays/",)):
    """The innermost caspar_backend source line of the current stack (not the helpers
    in ``skip``)."""
    for fr in reversed(traceback.extract_stack()[:-2]):
        if "caspar_backend" in fr.filename.replace(os.sep, "/") or "/adapters/" in fr.filename:
            if not any(s in fr.filename for s in skip):
                tail = fr.filename.replace(os.sep, "/").split("caspar_backend/")[-1]
                return f"{tail}:{fr.lineno} {fr.name}"
    return "?"


DEFAULT_SIZE = dict(acopf="case118_ieee", chain="10000", colloc="1111")


def build(problem: str, size: str):
    if problem == "acopf":
        import caspar_backend as cb
        from benchmarks.models.acopf import acopf_casadi

        nlp, args = acopf_casadi(size)
        args.pop("data", None)
        return cb.from_casadi(nlp, **args)
    from benchmarks.bench_gpu_solver import build as build_solver_problem

    return build_solver_problem(problem, size)[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="acopf", choices=("acopf", "chain", "colloc"))
    ap.add_argument("size", nargs="?")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--sequence", type=int, default=0, metavar="K",
                    help="print iteration K's launches cut at reads and solver calls")
    args = ap.parse_args(argv)
    size = args.size or DEFAULT_SIZE[args.problem]

    from tests.solver import test_gpu_solver as T
    from _pytest.monkeypatch import MonkeyPatch

    from caspar_backend.solver import solve_nlp

    ops, op_sites, reads = collections.Counter(), collections.Counter(), collections.Counter()
    counting = [False]
    iters = [0]
    events = []     # (iteration, kind, label, site, scalars, buffers) of iterations K, K + 1

    def record(kind, label, scalars=(), buffers=()):
        if args.sequence and iters[0] + 1 in (args.sequence, args.sequence + 1):
            events.append((iters[0] + 1, kind, label, _site(), scalars, buffers))
    D = T._DevArray
    ufunc, func, get = D.__array_ufunc__, D.__array_function__, D.get
    getitem, setitem, astype = D.__getitem__, D.__setitem__, np.ndarray.astype
    copy, fill = np.ndarray.copy, np.ndarray.fill

    def launch(name, scalars=(), buffers=()):
        if counting[0]:
            ops[name] += 1
            op_sites[_site()] += 1
            record("launch", name, scalars, buffers)

    def count_getitem(self, key):       # a gather kernel when the index is an array
        if isinstance(key, np.ndarray) or (isinstance(key, tuple) and any(
                isinstance(k, np.ndarray) for k in key)):
            launch("gather x[idx]")
        return getitem(self, key)

    def count_setitem(self, key, value):
        launch("assignment x[...] = v")
        return setitem(self, key, value)

    def count_astype(self, dtype, *a, **k):
        if k.get("copy", True) or np.dtype(dtype) != self.dtype:
            launch("astype (copy)")
        return astype(self, dtype, *a, **k)

    def count_copy(self, *a, **k):
        launch("copy")
        return copy(self, *a, **k)

    def count_fill(self, value):
        launch("fill")
        return fill(self, value)

    def count_ufunc(self, uf, method, *a, **k):
        launch(f"ufunc {uf.__name__}.{method}")
        return ufunc(self, uf, method, *a, **k)

    def count_func(self, fn, types_, a, k):
        launch(f"function {fn.__name__}")
        return func(self, fn, types_, a, k)

    def read(how):
        if counting[0]:
            reads[how + " " + _site()] += 1
            record("read", how)

    def count_get(self):
        read(".get")
        return get(self)

    def count_bool(self):
        read("bool")
        return bool(self.view(np.ndarray))

    def count_float(self):
        read("float")
        return float(self.view(np.ndarray))

    get_function = T._EmulatedFusedModule.get_function

    def count_fused(kname):     # one launch per raw kernel, not its NumPy ops
        run = get_function(kname)

        def counted(grid, block, args):
            was, counting[0] = counting[0], False
            try:
                return run(grid, block, args)
            finally:
                counting[0] = was
                launch("fused " + kname[len("caspar_"):],
                       tuple(float(v) for v in args if type(v) is np.float64),
                       tuple(v.__array_interface__["data"][0] for v in args
                             if isinstance(v, np.ndarray) and v.ndim))
        return counted

    def noted(cls, method, label):
        """``cls.method`` recorded in the sequence as ``label`` (not counted as a launch:
        the evaluator's and the linear solver's kernels are their own)."""
        inner = getattr(cls, method)

        def call(self, *a, **k):
            if counting[0]:
                record(label, method)
            was, counting[0] = counting[0], False
            try:
                return inner(self, *a, **k)
            finally:
                counting[0] = was
        mp.setattr(cls, method, call)

    mp = MonkeyPatch()
    mp.setattr(T._EmulatedFusedModule, "get_function", staticmethod(count_fused))
    for name, f in (("__array_ufunc__", count_ufunc), ("__array_function__", count_func),
                    ("get", count_get), ("__bool__", count_bool), ("__float__", count_float),
                    ("__getitem__", count_getitem), ("__setitem__", count_setitem),
                    ("astype", count_astype), ("copy", count_copy), ("fill", count_fill)):
        mp.setattr(D, name, f)
    try:
        xp = T._emulate_device(mp)
        import caspar_backend.arrays.matvec as matvec
        import caspar_backend.arrays.segments as segments
        import caspar_backend.linsolve.cudss as cudss_mod

        for method in ("obj", "obj_unread", "grad", "cons", "jac_values", "hess_values"):
            noted(T._EmulatedEvaluator, method, "evaluator")
        for method in ("factorize", "solve"):
            noted(cudss_mod.CudssSolver, method, "linear solver")
        noted(cudss_mod.CudssSolver, "matvec", "K matvec")
        noted(segments.DeviceSegmentSum, "__call__", "segment sum")
        noted(matvec.DeviceIndexedMatVec, "__call__", "indexed matvec")
        prob = build(args.problem, size)
        ev = T._EmulatedEvaluator(prob.evaluator("cpu"), xp)

        # each iteration's record marks its end: count from the second on (not through
        # iteration_callback, which a solve checks the new point's derivatives for first)
        from caspar_backend.solver.ipm import InteriorPoint
        log_iteration = InteriorPoint.log_iteration

        def hook(ipm, *a, **k):
            log_iteration(ipm, *a, **k)
            iters[0] += 1
            counting[0] = True

        mp.setattr(InteriorPoint, "log_iteration", hook)
        r = solve_nlp(ev, prob.lbx, prob.ubx, prob.lbg, prob.ubg, prob.x0,
                      options=dict(print_level=0))
    finally:
        mp.undo()
    n = max(1, r.iterations - 1)
    print(f"# {args.problem} {size}: n = {prob.n}, m = {prob.m}, {r.status}, "
          f"{r.iterations} iterations (counted from the second)")
    print(f"\noperations per iteration: {sum(ops.values()) / n:.1f}; host reads per iteration: "
          f"{sum(reads.values()) / n:.1f}\n")
    print("| operation | per iteration |\n|---|---|")
    for k, v in ops.most_common(args.top):
        print(f"| {k} | {v / n:.1f} |")
    print("\n| source line (operations) | per iteration |\n|---|---|")
    for k, v in op_sites.most_common(args.top):
        print(f"| {k} | {v / n:.1f} |")
    print("\n| host read | per iteration |\n|---|---|")
    for k, v in reads.most_common(args.top):
        print(f"| {k} | {v / n:.2f} |")
    if args.sequence:
        print_sequence(events, args.sequence)


def print_sequence(events, k):
    """Iteration ``k``'s events (``main``'s ``events``) as runs between reads and linear
    solver calls, each with its launches and the scalar arguments that change in
    iteration ``k + 1`` (matched by position in the run, where both iterations took the
    same sequence of launches)."""
    def runs(it):
        out, cur = [], []
        for e in events:
            if e[0] != it:
                continue
            if e[1] in ("read", "linear solver"):
                out.append((cur, e))
                cur = []
            else:
                cur.append(e)
        out.append((cur, None))
        return out

    now, nxt = runs(k), runs(k + 1)
    same = [[e[2] for e in r] for r, _ in now] == [[e[2] for e in r] for r, _ in nxt]
    print(f"\n## iteration {k}: launches between reads and linear-solver calls "
          f"(iteration {k + 1} {'takes the same runs' if same else 'takes other runs'})\n")
    print("| run | launches | evaluator / segment sums / matvecs | scalars that change "
          "in the next iteration | other buffers in the next iteration | ends at |\n"
          "|---|---|---|---|---|---|")
    for j, (run, end) in enumerate(now):
        launches = [e for e in run if e[1] == "launch"]
        other = [e for e in run if e[1] != "launch"]
        changing, moved = [], []
        if same:
            for a, b in zip(run, nxt[j][0]):
                if a[1] == "launch" and any(x != y for x, y in zip(a[4], b[4])):
                    changing.append(a[2].removeprefix("fused "))
                if a[1] == "launch" and a[5] != b[5]:
                    # (which of its array arguments, counted among the arrays)
                    at = [str(q) for q, (x, y) in enumerate(zip(a[5], b[5])) if x != y]
                    moved.append(f"{a[2].removeprefix('fused ')} [{' '.join(at)}]")
        names = collections.Counter(e[2].removeprefix("fused ") for e in launches)
        label = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in names.items())
        print(f"| {j + 1} | {len(launches)}: {label} | {len(other)} | "
              f"{', '.join(changing) or '-'} | {', '.join(moved) or '-'} | "
              f"{'the end' if end is None else end[1] + ' ' + end[3]} |")


if __name__ == "__main__":
    main()
