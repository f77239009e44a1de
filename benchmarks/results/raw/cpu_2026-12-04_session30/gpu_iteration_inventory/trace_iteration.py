"""Ordered trace of the device code path's interior-point iterations (CPU emulation).

Built on benchmarks/count_device_ops.py's instrumentation (tests/solver/test_gpu_solver.py's
emulation): every device array operation, fused kernel, evaluator call, segment sum, linear
solver call, host read and device allocation is logged *in order*, per iteration (the
iteration_callback runs at the top of the loop), with its source line and, for fused
kernels and CuPy calls, the scalars passed by value and whether each array argument was
allocated in the current iteration.

    PYTHONPATH=<checkout> python trace_iteration.py [--problem acopf] [SIZE]
        [--out trace_SIZE.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import traceback
import weakref

import numpy as np

sys.path.insert(0, os.getcwd())   # run from the root of a checkout


def site(skip=("arrays/", "gpu_iteration_inventory/")):
    for fr in reversed(traceback.extract_stack()[:-2]):
        fn = fr.filename.replace(os.sep, "/")
        if "caspar_backend" in fn and not any(s in fn for s in skip):
            return f"{fn.split('caspar_backend/')[-1]}:{fr.lineno}"
    return "?"


def chain():
    """caspar_backend frames of the stack, innermost last (for context)."""
    out = []
    for fr in traceback.extract_stack()[:-2]:
        fn = fr.filename.replace(os.sep, "/")
        if "caspar_backend" in fn and "arrays/" not in fn:
            out.append(f"{fn.split('caspar_backend/')[-1]}:{fr.lineno}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", default="acopf")
    ap.add_argument("size", nargs="?")
    ap.add_argument("--out")
    ap.add_argument("--opt", action="append", default=[], help="solver option k=v")
    args = ap.parse_args(argv)

    from benchmarks.count_device_ops import DEFAULT_SIZE, build
    size = args.size or DEFAULT_SIZE[args.problem]
    from tests.solver import test_gpu_solver as T
    from _pytest.monkeypatch import MonkeyPatch
    from caspar_backend.solver import solve_nlp
    from caspar_backend.arrays import fused
    from caspar_backend.arrays.fused_cuda import _params

    D = T._DevArray
    state = dict(on=False, it=-1, in_lib=0)
    allocs = {}            # id(root) -> (iteration, site)
    iters = []             # list of event lists
    ev = []

    def root(a):
        r = a
        while isinstance(getattr(r, "base", None), np.ndarray):
            r = r.base
        return r

    def register(a, what):
        if not isinstance(a, np.ndarray):
            return
        r = root(a)
        k = id(r)
        allocs[k] = (state["it"], what)
        try:
            weakref.finalize(r, allocs.pop, k, None)
        except TypeError:
            pass

    def origin(a):
        if not isinstance(a, np.ndarray):
            return None
        got = allocs.get(id(root(a)))
        if got is None:
            return "persistent"
        it, what = got
        if it == state["it"]:
            return f"temp({what})"
        if it < 0:
            return "persistent"
        return f"earlier-iter({what})"

    def log(kind, name, **kw):
        if state["on"] and not state["in_lib"]:
            e = dict(kind=kind, name=name, site=site())
            e.update(kw)
            ev.append(e)

    def pyscalars(objs):
        out = []
        for o in objs:
            if isinstance(o, (float, int, np.floating, np.integer)) and not isinstance(o, bool):
                out.append(float(o))
            elif isinstance(o, np.ndarray) and o.ndim == 0 and not isinstance(o, D):
                out.append(float(o))
        return out

    ufunc, func, get = D.__array_ufunc__, D.__array_function__, D.get
    getitem, setitem, astype = D.__getitem__, D.__setitem__, np.ndarray.astype
    copy, fill = np.ndarray.copy, np.ndarray.fill

    def c_ufunc(self, uf, method, *a, **k):
        r = ufunc(self, uf, method, *a, **k)
        if state["on"] and not state["in_lib"]:
            out = k.get("out")
            alloc = out is None
            log("cupy", f"{uf.__name__}.{method}", scalars=pyscalars(a), alloc=alloc,
                args=[origin(x) for x in a if isinstance(x, np.ndarray)])
            if alloc:
                register(r, f"{uf.__name__} {site()}")
        return r

    def c_func(self, fn, types_, a, k):
        r = func(self, fn, types_, a, k)
        if state["on"] and not state["in_lib"]:
            alloc = "out" not in k
            log("cupy", f"fn {fn.__name__}", alloc=alloc)
            if alloc:
                register(r, f"{fn.__name__} {site()}")
        return r

    def c_getitem(self, key):
        r = getitem(self, key)
        if isinstance(key, np.ndarray) or (isinstance(key, tuple) and any(
                isinstance(x, np.ndarray) for x in key)):
            if state["on"] and not state["in_lib"]:
                log("cupy", "gather x[idx]", alloc=True)
                register(r, f"gather {site()}")
        return r

    def c_setitem(self, key, value):
        if state["on"] and not state["in_lib"]:
            fancy = isinstance(key, np.ndarray) or (isinstance(key, tuple) and any(
                isinstance(x, np.ndarray) for x in key))
            log("cupy", "setitem x[idx]=v" if fancy else "setitem x[...]=v",
                scalars=pyscalars([value]), alloc=False,
                args=[origin(value)] if isinstance(value, np.ndarray) else [])
        return setitem(self, key, value)

    def c_astype(self, dtype, *a, **k):
        r = astype(self, dtype, *a, **k)
        if state["on"] and not state["in_lib"] and isinstance(self, D) and (
                k.get("copy", True) or np.dtype(dtype) != self.dtype):
            log("cupy", "astype", alloc=True)
            register(r, f"astype {site()}")
        return r

    def c_copy(self, *a, **k):
        r = copy(self, *a, **k)
        if state["on"] and not state["in_lib"] and isinstance(self, D):
            log("cupy", "copy", alloc=True)
            register(r, f"copy {site()}")
        return r

    def c_fill(self, value):
        if state["on"] and not state["in_lib"] and isinstance(self, D):
            log("cupy", "fill", scalars=[float(value)], alloc=False)
        return fill(self, value)

    def c_get(self):
        if state["on"]:
            log("read", ".get", n=int(self.size))
        return get(self)

    def c_bool(self):
        if state["on"]:
            log("read", "bool", n=1)
        return bool(self.view(np.ndarray))

    def c_float(self):
        if state["on"]:
            log("read", "float", n=1)
        return float(self.view(np.ndarray))

    get_function = T._EmulatedFusedModule.get_function

    def c_fused(kname):
        run = get_function(kname)
        op = kname[len("caspar_"):]
        if op == "pack":
            names = None
        else:
            names = _params(fused.OPS[op].kernel.params)

        def counted(grid, block, a):
            if state["on"] and not state["in_lib"]:
                if names is None:
                    k = int(a[-2])
                    log("fused", "pack", n=k, alloc=False,
                        args=[origin(x) for x in a[:k]])
                else:
                    sc = {n: float(a[j]) for j, (kd, n) in enumerate(names) if kd == "scalar"}
                    org = {n: origin(a[j]) for j, (kd, n) in enumerate(names)
                           if kd != "scalar"}
                    log("fused", op, scalars=sc, args=org)
            was, state["on"] = state["on"], False
            try:
                return run(grid, block, a)
            finally:
                state["on"] = was
        return counted

    mp = MonkeyPatch()
    mp.setattr(T._EmulatedFusedModule, "get_function", staticmethod(c_fused))
    for name, f in (("__array_ufunc__", c_ufunc), ("__array_function__", c_func),
                    ("get", c_get), ("__bool__", c_bool), ("__float__", c_float),
                    ("__getitem__", c_getitem), ("__setitem__", c_setitem),
                    ("astype", c_astype), ("copy", c_copy), ("fill", c_fill)):
        mp.setattr(D, name, f)
    try:
        xp = T._emulate_device(mp)
        # allocations through the array module
        for fname in ("zeros", "empty", "ones", "full", "empty_like", "asarray",
                      "concatenate", "stack"):
            orig = getattr(xp, fname)

            def wrap(*a, _orig=orig, _n=fname, **k):
                before = a[0] if (_n == "asarray" and a) else None
                r = _orig(*a, **k)
                if state["on"] and not state["in_lib"] and not (_n == "asarray" and r is before):
                    inside = any("fused_cuda.py" in fr.filename for fr in traceback.extract_stack())
                    what = "fused out" if inside else f"xp.{_n}"
                    log("alloc", what, shape=list(r.shape) if hasattr(r, "shape") else [])
                    register(r, f"{what} {site()}")
                return r
            setattr(xp, fname, wrap)
        import types as _types
        _st = _types.SimpleNamespace(ptr=0, synchronize=lambda: log("sync", "stream.synchronize"))
        xp.cuda = _types.SimpleNamespace(get_current_stream=lambda: _st)
        import caspar_backend.arrays.segments as segments
        import caspar_backend.arrays.matvec as matvec
        import caspar_backend.linsolve.cudss as cudss_mod

        SS = segments.DeviceSegmentSum
        ss_call = SS.__call__

        def seg_call(self, v, out):
            log("raw", "segment_sum", n=int(out.size),
                args={"v": origin(v), "out": origin(out)})
            state["in_lib"] += 1
            try:
                return ss_call(self, v, out)
            finally:
                state["in_lib"] -= 1
        mp.setattr(SS, "__call__", seg_call)
        MV = matvec.DeviceIndexedMatVec
        mv_call = MV.__call__

        def mv_c(self, x, out):
            log("raw", "indexed_matvec")
            state["in_lib"] += 1
            try:
                return mv_call(self, x, out)
            finally:
                state["in_lib"] -= 1
        mp.setattr(MV, "__call__", mv_c)

        LS = cudss_mod.CudssSolver
        f_fact, f_solve, f_mv = LS.factorize, LS.solve, LS.matvec

        def fact(self, values):
            log("cudss", "copyto(values) + FACTORIZATION")
            log("read", "cudss sync + data_get(INFO, INERTIA)", n=3)
            state["in_lib"] += 1
            try:
                return f_fact(self, values)
            finally:
                state["in_lib"] -= 1

        def solve(self, rhs):
            log("cudss", "copyto(b) + SOLVE + x.copy()", alloc=True,
                args={"rhs": origin(rhs)})
            state["in_lib"] += 1
            try:
                r = f_solve(self, rhs)
            finally:
                state["in_lib"] -= 1
            if state["on"]:
                register(r, f"cudss x.copy() {site()}")
            return r

        def mvec(self, x, out=None):
            log("raw", "indexed_matvec(K)", alloc=out is None,
                args={"x": origin(x), "out": origin(out) if out is not None else None})
            state["in_lib"] += 1
            try:
                return f_mv(self, x, out)
            finally:
                state["in_lib"] -= 1
        mp.setattr(LS, "factorize", fact)
        mp.setattr(LS, "solve", solve)
        mp.setattr(LS, "matvec", mvec)

        prob = build(args.problem, size)
        evalr = T._EmulatedEvaluator(prob.evaluator("cpu"), xp)
        for meth in ("obj", "obj_unread", "grad", "cons", "jac_values", "hess_values"):
            orig = getattr(evalr, meth)

            def wrapm(*a, _o=orig, _m=meth, **k):
                log("eval", _m, scalars=pyscalars(a), args=[origin(x) for x in a
                                                          if isinstance(x, np.ndarray)])
                state["in_lib"] += 1
                try:
                    r = _o(*a, **k)
                finally:
                    state["in_lib"] -= 1
                if _m == "obj_unread" and state["on"]:
                    register(r, "obj_unread .sum()")
                return r
            setattr(evalr, meth, wrapm)

        def hook(ipm):
            if state["it"] >= 0:
                iters.append(dict(it=state["it"], mu=ipm.barrier.mu, events=list(ev),
                                  info=dict(ls=ipm.info.ls, tag=ipm.info.tag,
                                            delta_w=ipm.info.delta_w,
                                            alpha_pr=ipm.info.alpha_pr,
                                            alpha_du=ipm.info.alpha_du)))
            ev.clear()
            state["it"] += 1
            state["on"] = True

        opts = dict(print_level=0, iteration_callback=hook)
        for kv in args.opt:
            k, v = kv.split("=", 1)
            try:
                v = float(v) if "." in v or "e" in v else int(v)
            except ValueError:
                pass
            opts[k] = v
        r = solve_nlp(evalr, prob.lbx, prob.ubx, prob.lbg, prob.ubg, prob.x0, options=opts)
        state["on"] = False
        iters.append(dict(it=state["it"], mu=None, events=list(ev), info={}, last=True))
    finally:
        mp.undo()
    try:
        from caspar_backend.evaluators.layout import Layout
        lay = Layout.of(prob, host_jacobian=False)
        layout = dict(term_rows=int(len(lay.term_rows)),
                      jac_map=lay.jac_map is not None,
                      n_obj_groups=len(prob.objective_groups),
                      n_con_groups=len(prob.constraint_groups))
    except Exception as exc:
        layout = dict(error=str(exc))
    out = dict(problem=args.problem, size=size, n=prob.n, m=prob.m, status=r.status,
               iterations=r.iterations, layout=layout, iters=iters)
    path = args.out or f"trace_{size}.json"
    with open(path, "w") as fh:
        json.dump(out, fh)
    print(path, r.status, r.iterations, layout)


if __name__ == "__main__":
    main()
