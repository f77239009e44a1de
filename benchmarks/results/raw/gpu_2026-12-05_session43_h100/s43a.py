"""Session 43: does cuDSS 1.0 give its nested-dissection partition tree back, and under
which configuration?  (The ordering store needs it: a permutation alone factorizes 35x
slower, session 42.)  case9241_pegase's KKT structure from a real solve; every variant is
a fresh handle on the same arrays: ANALYSIS timed (reorder / symbolic apart), the tree
queried with size 0 and with room, one factorization timed; where a tree comes back, a
handle given perm + tree is analysed and factorized the same way."""
import os, sys, time
import numpy as np
sys.path.insert(0, os.getcwd())
os.environ["CASPAR_PROBLEM_CACHE"] = "0"
import caspar_backend as cb
from caspar_backend.linsolve import cudss as S
from caspar_backend.linsolve import cudss_handle as H
from benchmarks.cases import acopf_cases
import cupy as cp

c = H.bindings()
print("cudss", H.cudss_version(), flush=True)
done = []


def get(h, param, count):
    w = np.zeros(1, np.uint64)
    out = {}
    try:
        c.data_get(h._handle, h._data, param, 0, 0, w.ctypes.data)
        out["q0"] = int(w[0])
    except Exception as e:
        out["q0"] = "err " + repr(e)[:80]
    if isinstance(out["q0"], int) and out["q0"] > 0:
        count = out["q0"] // 4
    buf = np.zeros(count, np.int32)
    w[0] = 0
    try:
        c.data_get(h._handle, h._data, param, buf.ctypes.data, buf.nbytes, w.ctypes.data)
        k = int(w[0]) // 4
        out["got"] = k
        out["head"] = buf[:min(k, 12)].tolist()
        out["arr"] = buf[:k].copy()
    except Exception as e:
        out["got"] = "err " + repr(e)[:80]
    return out


def variant(solver, label, cfg=(), pivot=True, levels=None, ordering=None):
    n = solver.structure.n
    vals = cp.array(solver._values)
    b, x = cp.zeros(n), cp.zeros(n)
    try:
        h = H.CudssHandle(solver._indptr, solver._indices, vals, b, x, pivoting=pivot,
                          threading_lib=S._mtlayer_path(solver.version[0]),
                          workspace_pool=S._workspace_pool(cp))
        if levels is not None:
            h.nd_levels = levels
            h._config_set(c.ConfigParam.ND_NLEVELS, levels)
        for p, v in cfg:
            h._config_set(p, v)
        keep = []
        if ordering is not None:
            perm, tree, on_dev = ordering
            for prm, arr in ((c.DataParam.USER_PERM, perm), (c.DataParam.USER_ND_PARTITION_TREE, tree)):
                if arr is None:
                    continue
                if on_dev is True or (on_dev == "tree" and prm == c.DataParam.USER_ND_PARTITION_TREE):
                    d = cp.asarray(arr, dtype=cp.int32); keep.append(d)
                    c.data_set(h._handle, h._data, prm, int(d.data.ptr), d.nbytes)
                else:
                    a = np.ascontiguousarray(arr, dtype=np.int32); keep.append(a)
                    c.data_set(h._handle, h._data, prm, a.ctypes.data, a.nbytes)
        a, bb, xx = h._matrices
        s = cp.cuda.get_current_stream()
        c.set_stream(h._handle, s.ptr)
        t0 = time.perf_counter()
        c.execute(h._handle, 1, h._config, h._data, a, xx, bb)   # REORDERING
        s.synchronize(); t1 = time.perf_counter()
        c.execute(h._handle, 2, h._config, h._data, a, xx, bb)   # SYMBOLIC_FACTORIZATION
        s.synchronize(); t2 = time.perf_counter()
        tree = get(h, c.DataParam.ND_PARTITION_TREE, 1 << 17)
        perm = get(h, c.DataParam.PERM_REORDER_ROW, n)
        ts = []
        for _ in range(3):
            t3 = time.perf_counter(); h.factorize(s.ptr); s.synchronize(); ts.append(time.perf_counter() - t3)
        info = h.info_inertia()
        print(f"VARIANT {label}: reorder {t1-t0:.4f} symbolic {t2-t1:.4f} fact_ms {[round(1e3*t,2) for t in ts]} "
              f"info {info} tree q0={tree['q0']} got={tree['got']} head={tree.get('head')} perm q0={perm['q0']} got={perm['got']}",
              flush=True)
        res = (perm.get("arr"), tree.get("arr"))
        h.free()
        return res
    except Exception as e:
        print(f"VARIANT {label}: error {e!r}", flush=True)
        return None


def probe(solver):
    cfg = c.ConfigParam
    base = variant(solver, "default(levels 12)")
    nd = [(cfg.REORDERING_ALG, int(c.ReorderingAlg.NESTED_DISSECTION))]
    which = os.environ.get("VARIANT", "a")
    if which == "a":
        variant(solver, "reuse perm+tree on device, ND alg", cfg=nd, ordering=(base[0], base[1], True))
    elif which == "b":
        variant(solver, "reuse perm+tree on device, ND alg, no pivoting", cfg=nd, pivot=False, ordering=(base[0], base[1], True))
    elif which == "c":
        variant(solver, "reuse perm(host)+tree(device), ND alg", cfg=nd, ordering=(base[0], base[1], "tree"))
    elif which == "d":
        import numpy as _np
        t = base[1]
        print("tree sum", int(t.sum()), "n", solver.structure.n, "min", int(t.min()), "zeros", int((t == 0).sum()), "last", t[-8:].tolist(), flush=True)
        variant(solver, "reuse perm+tree on device, ND alg, no superpanels", cfg=nd + [(cfg.USE_SUPERPANELS, 0)], ordering=(base[0], base[1], True))
    os._exit(0)


_orig = S.CudssSolver._analyse_plan


def patched(self, stream):
    _orig(self, stream)
    if not done and self.structure.n > 100000:
        done.append(1)
        probe(self)


S.CudssSolver._analyse_plan = patched
case = sys.argv[1] if len(sys.argv) > 1 else "case9241_pegase"
built = list(acopf_cases(10 ** 6, {case}))[0].build()
p = cb.from_casadi(built[1], **built[2])
t = time.perf_counter()
r = p.solve(tol=1e-6, print_level=0, max_iter=3000, device="cuda")
print("solve", r.status, r.iterations, round(time.perf_counter() - t, 2), flush=True)
