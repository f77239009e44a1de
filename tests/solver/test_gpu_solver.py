"""The interior-point method on the device: cuDSS KKT solves, iterates in device memory.

Two layers:

* CPU-run tests (no marker): the device code path of the method — every array in a
  module that is *not* NumPy, host transfers only through ``.get()`` — runs on a strict
  NumPy stand-in for CuPy (:class:`_DevArray` refuses to mix with host arrays, as CuPy
  does), with qdldl standing in for cuDSS; it must reproduce the CPU solve exactly.  And
  the ``device`` option's errors and 'auto' choice on a machine without a GPU.
* GPU tests (``@pytest.mark.gpu``, skipped without CuPy and a CUDA device; the bank
  tests also need nvmath-python/cuDSS, casadi and qdldl): bank problems solved with
  ``device='cuda'`` reach the CPU path's and IPOPT's status and objective (1e-6
  relative); the iteration loop copies no vector to the host and its CuPy memory-pool
  usage is the same at every iteration.
"""

from __future__ import annotations

import collections
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from caspar_backend import Graph, NLPModel, Problem


def _chain_model(N=200):
    """The chained benchmark problem (benchmarks/models/chain.py), n = N + 2, m = N."""
    from benchmarks.models.chain import chain_graph

    return Problem(chain_graph(N))


def _bounded_model(N=100):
    """Bounds, inequalities, a fixed variable and a wide equality row: every index set
    of the method non-empty (the problem caspar warmup's GPU step solves at N = 700)."""
    from caspar_backend.gpu_warmup import sparse_check_problem

    return sparse_check_problem(N)


# ====================================================================== CPU emulation
class _DevArray(np.ndarray):
    """A NumPy array posing as device memory: ``.get()`` copies to the host; mixing it
    with a host array of rank >= 1 in an operation raises, as CuPy does."""

    def get(self):
        return np.array(self.view(np.ndarray))

    @staticmethod
    def _check(objs):
        for a in objs:
            if isinstance(a, (list, tuple)):
                _DevArray._check(a)
            elif isinstance(a, np.ndarray) and not isinstance(a, _DevArray) and a.ndim:
                raise TypeError("host array in a device operation")

    @staticmethod
    def _strip(a):
        if isinstance(a, _DevArray):
            return a.view(np.ndarray)
        if isinstance(a, (list, tuple)):
            return type(a)(_DevArray._strip(v) for v in a)
        return a

    @staticmethod
    def _wrap(r):
        if isinstance(r, tuple):
            return tuple(_DevArray._wrap(v) for v in r)
        if isinstance(r, (np.ndarray, np.generic)):
            return np.asarray(r).view(_DevArray)
        return r

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kw):
        self._check(inputs + (out or ()))
        if out is not None:
            kw["out"] = tuple(self._strip(o) for o in out)
        r = getattr(ufunc, method)(*self._strip(inputs), **kw)
        return out[0] if out is not None and len(out) == 1 else self._wrap(r)

    def __array_function__(self, func, types_, args, kwargs):
        self._check(list(args) + list(kwargs.values()))
        out = kwargs.get("out")
        r = func(*self._strip(args), **{k: self._strip(v) for k, v in kwargs.items()})
        return out if out is not None else self._wrap(r)

    def __getitem__(self, key):
        self._check([key])
        return super().__getitem__(key)

    def __setitem__(self, key, value):
        self._check([key, value])
        super().__setitem__(key, value)


class _EmulatedFusedModule:
    """Stand-in for the ``cupy.RawModule`` of the fused ops
    (caspar_backend/arrays/fused_cuda.py): each kernel runs its op's NumPy reference
    (``fused.OPS[op].reference``) on the kernel's own arguments, and ``caspar_pack``
    gathers its values."""

    def __init__(self, code=None):
        pass

    @staticmethod
    def get_function(kname):
        from caspar_backend.arrays import fused
        from caspar_backend.arrays.fused_cuda import Reduction, Reductions

        if kname == "caspar_pack":
            def pack(grid, block, args):   # (p0..p23, kinds, offs_lo, offs_hi, k, out)
                k, out = int(args[-2]), args[-1]
                offs = (int(args[-4]) % 2 ** 64) | (int(args[-3]) << 64)
                out[:k] = [float(np.asarray(v).reshape(-1)[(offs >> (4 * j)) & 15])
                           for j, v in enumerate(args[:k])]
            return pack
        op = fused.OPS[kname[len("caspar_"):]]
        n_in = len(op.kernel.params.split(","))

        def run(grid, block, args):
            if isinstance(op.kernel, Reduction):    # (..., n, partial, count, out)
                args[-1][...] = op.reference(*args[:n_in])
            elif isinstance(op.kernel, Reductions):     # out[c]: column c
                for c, v in enumerate(op.reference(*args[:n_in])):
                    args[-1][c] = v
            elif op.kernel.out:
                args[n_in][...] = op.reference(*args[:n_in])
            else:
                op.reference(*args[:n_in])
        return run


def _fake_xp():
    def dev(fn):
        return lambda *a, **k: np.asarray(fn(*a, **k)).view(_DevArray)

    stream = types.SimpleNamespace(synchronize=lambda: None, ptr=0)
    ns = types.SimpleNamespace(
        zeros=dev(np.zeros), ones=dev(np.ones), full=dev(np.full), empty=dev(np.empty),
        arange=dev(np.arange),
        asarray=lambda a, dtype=None: np.array(a, dtype=dtype).view(_DevArray)
        if not isinstance(a, _DevArray) else a,
        cuda=types.SimpleNamespace(get_current_stream=lambda: stream))
    # the fused ops' raw kernels (caspar_backend/arrays/fused_cuda.py): each runs its
    # NumPy reference on the posing arrays, with the kernel's arguments
    ns.RawModule = _EmulatedFusedModule
    for name in ("take", "multiply", "add", "subtract", "divide", "where", "maximum", "minimum",
                 "abs", "sum", "max", "min", "mean", "log", "sqrt", "isfinite", "clip",
                 "concatenate", "stack", "hstack", "column_stack", "inf", "float64",
                 "linalg", "argsort", "cumsum", "empty_like", "bincount", "int64", "uint32"):
        setattr(ns, name, getattr(np, name))
    return ns


class _EmulatedEvaluator:
    """The NumPy evaluator behind device-array inputs and outputs."""

    device = "cuda"

    def __init__(self, ev, xp):
        self.ev, self.xp, self.problem = ev, xp, ev.problem
        self.n, self.m = ev.n, ev.m
        for k in ("jac_rows", "jac_cols", "hess_rows", "hess_cols"):
            setattr(self, k, xp.asarray(getattr(ev, k)))

    @staticmethod
    def _h(a):
        assert isinstance(a, _DevArray), type(a)
        return a.view(np.ndarray)

    def parameters(self):
        return self.ev.parameters()

    def obj(self, x):
        return self.ev.obj(self._h(x))

    def obj_unread(self, x):
        """The objective as a 0-d device array, as the GPU evaluator leaves it for the
        trial point's one host read."""
        return np.asarray(self.ev.obj(self._h(x))).view(_DevArray)

    def grad(self, x, out):
        self.ev.grad(self._h(x), self._h(out))
        return out

    def cons(self, x, out):
        self.ev.cons(self._h(x), self._h(out))
        return out

    def jac_values(self, x, out):
        self.ev.jac_values(self._h(x), self._h(out))
        return out

    def hess_values(self, x, lam, obj_factor, out):
        self.ev.hess_values(self._h(x), self._h(lam), obj_factor, self._h(out))
        return out


def _emulated_solver_class():
    from caspar_backend.linsolve.base import LinearSolver
    from caspar_backend.linsolve.qdldl import QDLDLSolver

    class EmulatedCudss(LinearSolver):
        """qdldl behind device arrays (stands in for cuDSS)."""

        name = "cudss"

        def __init__(self):
            self.inner = QDLDLSolver(small_pivoting=False)   # (cuDSS: no dense mode)

        def analyse(self, structure, symbolic=None):
            self.inner.analyse(structure)

        def factorize(self, values):
            return self.inner.factorize(_EmulatedEvaluator._h(values))

        def solve(self, rhs):
            return self.inner.solve(_EmulatedEvaluator._h(rhs)).view(_DevArray)

        def matvec(self, x, out=None):     # the LinearSolver interface's signature
            y = self.inner.matvec(_EmulatedEvaluator._h(x)).view(_DevArray)
            if out is None:
                return y
            out[...] = y
            return out

    return EmulatedCudss


def _large_bound_model(B=1e8):
    """min x0 + x1^2, x0 >= B, x0 - x1 <= 3B: the bound is active at the optimum, and at
    |x0| = 1e8 the slack x0 - B resolves 1.5e-8 only, below mu / z late in the solve
    (IPOPT's safe slacks, tests/solver/test_solver_features.py)."""
    g = Graph()
    x = [g.var(0), g.var(1)]
    return Problem(NLPModel(g, x[0] + x[1] ** 2, [x[0] - x[1]], np.array([B, -np.inf]),
                            np.array([np.inf, np.inf]), np.array([-np.inf]),
                            np.array([3 * B]), x0=np.array([2 * B, 1.0])))


PARAMS_EMULATED = [
    (_chain_model, {}),
    (_large_bound_model, {"tol": 1e-8}),
    (_bounded_model, {}),
    (_bounded_model, {"hessian_approximation": "limited-memory"}),
    (_bounded_model, {"mu_strategy": "adaptive"}),
    (_chain_model, {"kkt_system": "condensed"}),
    (_bounded_model, {"kkt_system": "condensed"}),
    # the restoration phase's elastic columns in the condensed system
    (_bounded_model, {"kkt_system": "condensed", "start_with_resto": True}),
]


def _emulate_device(monkeypatch, solver_class=None):
    """The device code path on host arrays posing as device memory: the fake array
    module, the host segment sums and matvecs behind it, ``solver_class`` (default:
    qdldl) as cuDSS.  Returns the fake array module."""
    import caspar_backend.arrays.matvec as matvec
    import caspar_backend.arrays.segments as segments
    import caspar_backend.linsolve.cudss as cudss_mod
    import caspar_backend.device as devices

    xp = _fake_xp()

    class HostLikeSegmentSum(segments.HostSegmentSum):
        def __init__(self, cp, idx, size):
            super().__init__(idx, size)

        def __call__(self, v, out):
            assert isinstance(v, _DevArray) and isinstance(out, _DevArray)
            super().__call__(v.view(np.ndarray), out.view(np.ndarray))
            return out

    class HostLikeIndexedMatVec(matvec.HostIndexedMatVec):
        def __init__(self, cp, rows, cols, src, n_rows):
            super().__init__(rows, cols, src, n_rows)

        def update(self, val):
            assert isinstance(val, _DevArray)
            super().update(val.view(np.ndarray))

        def __call__(self, x, out):
            assert isinstance(x, _DevArray) and isinstance(out, _DevArray)
            super().__call__(x.view(np.ndarray), out.view(np.ndarray))
            return out

    monkeypatch.setattr(segments, "DeviceSegmentSum", HostLikeSegmentSum)
    monkeypatch.setattr(matvec, "DeviceIndexedMatVec", HostLikeIndexedMatVec)
    monkeypatch.setattr(cudss_mod, "CudssSolver", solver_class or _emulated_solver_class())
    monkeypatch.setattr(devices, "gpu_problem", lambda solver=True: None)
    return xp


def _solve_emulated(prob, opts, monkeypatch):
    """(CPU result, emulated-device result, per-iteration 'all on device' flags)."""
    pytest.importorskip("qdldl")
    from caspar_backend.solver import solve_nlp

    xp = _emulate_device(monkeypatch)
    # the reference factorizes as the emulated cuDSS does: QDLDL with its static term,
    # also for a small K (the CPU path's dense Bunch-Kaufman off)
    monkeypatch.setattr("caspar_backend.linsolve.dense_kkt.SMALL_PIVOTING_MAX_N", 0)
    seen = []
    o = dict(print_level=0, **opts)
    # the reference evaluates with the generated NumPy code, as the emulated device does
    # (the tape's exp/log/pow are the C library's: round-off apart)
    ref = solve_nlp(prob.evaluator("cpu"), prob.lbx, prob.ubx, prob.lbg, prob.ubg, prob.x0,
                    options=dict(o, cpu_evaluator="numpy"))
    ev = _EmulatedEvaluator(prob.evaluator("cpu"), xp)
    res = solve_nlp(ev, prob.lbx, prob.ubx, prob.lbg, prob.ubg, prob.x0,
                    options=dict(o, iteration_callback=lambda ipm: seen.append(
                        all(isinstance(a, _DevArray) for a in (ipm.w, ipm.y, ipm.zL,
                                                                ipm.zU, ipm.kkt.values)))))
    return ref, res, seen


@pytest.mark.parametrize("build, opts", PARAMS_EMULATED)
def test_device_code_path_emulated_matches_cpu(build, opts, monkeypatch):
    ref, res, seen = _solve_emulated(build(), opts, monkeypatch)
    assert res.extra, (res.status, res.message)
    assert res.extra["device"] == "cuda" and res.extra["linear_solver"] == "cudss"
    assert ref.extra["device"] == "cpu" and ref.extra["linear_solver"] == "qdldl"
    assert seen and all(seen)
    assert res.status == ref.status == "Solve_Succeeded"
    assert res.iterations == ref.iterations
    for a, b in ((res.x, ref.x), (res.lam_g, ref.lam_g), (res.lam_x, ref.lam_x),
                 (res.g, ref.g)):
        assert type(a) is np.ndarray and a.dtype == np.float64
        np.testing.assert_array_equal(a, b)
    assert res.f == ref.f


class _NanAfter:
    """An evaluator whose ``method`` writes a NaN into its output from its ``k``-th call
    on (the rest delegated): a Hessian or derivative that turns non-finite mid-solve
    while the function values stay finite."""

    def __init__(self, ev, method, k):
        self._ev, self._method, self._k, self._calls = ev, method, k, 0

    def __getattr__(self, name):
        attr = getattr(self._ev, name)
        if name != self._method:
            return attr

        def poisoned(*args):
            out = attr(*args)
            self._calls += 1
            if self._calls >= self._k:
                args[-1][0] = np.nan
            return out
        return poisoned


def _nan_blind_solver_class():
    """The emulated cuDSS factorizing NaN entries as zeros: a factorization that does
    not notice a non-finite matrix, so that the direction comes out finite."""
    base = _emulated_solver_class()

    class NanBlind(base):
        def factorize(self, values):
            return self.inner.factorize(np.nan_to_num(_EmulatedEvaluator._h(values)))

    return NanBlind


@pytest.mark.parametrize("method, k, blind, hooked", [
    ("hess_values", 1, False, False), ("hess_values", 4, False, False),
    ("hess_values", 4, True, False), ("grad", 5, False, False), ("jac_values", 5, False, False),
    ("grad", 5, False, True), ("jac_values", 4, False, True)])
def test_device_code_path_emulated_nonfinite_evaluation_ends_as_on_cpu(method, k, blind,
                                                                       hooked, monkeypatch):
    """On the device a non-finite Hessian is read with the line search's reference
    values (``blind``: the factorization did not notice it) or, when no factorization
    is usable, on its own before the fallback, and an accepted point's gradient and
    Jacobian with the next iteration's norms (the step's multipliers gated on them; the
    step uncounted where they fail) or, with an iteration callback (``hooked``: it sees
    only checked points), on their own before it -- no read of their own per iteration;
    the solve ends as on the CPU, where they are checked at their evaluation: the same
    status, message, iterations, point and multipliers."""
    pytest.importorskip("qdldl")
    from caspar_backend.solver import solve_nlp

    prob = _bounded_model()
    seen = []
    o = dict(print_level=0)
    if hooked:
        o["iteration_callback"] = lambda ipm: seen.append(ipm.sh.iter)
    ref = solve_nlp(_NanAfter(prob.evaluator("cpu"), method, k), prob.lbx, prob.ubx,
                    prob.lbg, prob.ubg, prob.x0, options=o)
    xp = _emulate_device(monkeypatch, _nan_blind_solver_class() if blind else None)
    res = solve_nlp(_NanAfter(_EmulatedEvaluator(prob.evaluator("cpu"), xp), method, k),
                    prob.lbx, prob.ubx, prob.lbg, prob.ubg, prob.x0, options=o)
    what = "Hessian" if method == "hess_values" else "derivative"
    assert ref.status == res.status == "Invalid_Number_Detected"
    assert f"NaN or Inf in a {what} evaluation" in ref.message
    assert res.message == ref.message
    assert res.iterations == ref.iterations
    for a, b in ((res.x, ref.x), (res.lam_g, ref.lam_g), (res.lam_x, ref.lam_x)):
        np.testing.assert_array_equal(a, b)
    if hooked:      # the callback saw the same iterations on both (each twice: two solves)
        assert seen[:len(seen) // 2] == seen[len(seen) // 2:] and seen


def test_device_code_path_emulated_reads_new_derivatives_with_the_norms(monkeypatch):
    """An accepted point's derivatives are not read on their own on the device: past
    the start, the immediate check (``eval_first_order``) is not called."""
    pytest.importorskip("qdldl")
    from caspar_backend.solver import solve_nlp
    from caspar_backend.solver.quantities import BarrierQuantities

    calls = collections.Counter()
    for name in ("eval_first_order", "eval_first_order_later"):
        def wrap(self, it, _f=getattr(BarrierQuantities, name), _n=name):
            calls[_n] += 1
            return _f(self, it)
        monkeypatch.setattr(BarrierQuantities, name, wrap)
    prob = _bounded_model()
    xp = _emulate_device(monkeypatch)
    res = solve_nlp(_EmulatedEvaluator(prob.evaluator("cpu"), xp), prob.lbx, prob.ubx,
                    prob.lbg, prob.ubg, prob.x0, options=dict(print_level=0))
    assert res.status == "Solve_Succeeded"
    assert calls["eval_first_order"] == 1
    assert calls["eval_first_order_later"] == res.iterations


def test_device_code_path_emulated_resolves_through_the_structure_cache(monkeypatch):
    """With a structure cache on the (emulated) device evaluator, a re-solve takes the
    cached device structures and gives the answers of the solve that built them."""
    from caspar_backend.solver import solve_nlp
    from caspar_backend.structure_cache import StructureCache

    prob = _bounded_model()
    xp = _emulate_device(monkeypatch)
    ev = _EmulatedEvaluator(prob.evaluator("cpu"), xp)
    ev.structure_cache = StructureCache()
    o = dict(print_level=0)

    def solve(x0):
        r = solve_nlp(ev, prob.lbx, prob.ubx, prob.lbg, prob.ubg, x0, options=o)
        return r.status, r.iterations, repr(r.f), r.x.tobytes(), r.lam_g.tobytes()

    first = solve(prob.x0)
    solve(np.asarray(prob.x0) + 0.3)
    misses = ev.structure_cache.misses
    assert solve(prob.x0) == first
    assert ev.structure_cache.misses == misses and ev.structure_cache.hits > 0
    assert first[0] == "Solve_Succeeded"
    slack = next(v for k, v in ev.structure_cache._entries.items() if k[1] == ())
    assert isinstance(slack.free_d, _DevArray) and isinstance(slack.slack_d, _DevArray)


@pytest.mark.parametrize("build, ratio_max", [(_chain_model, 1e-17),
                                               (_large_bound_model, 1e-15)])
def test_device_code_path_emulated_refinement_past_its_first_test(build, ratio_max,
                                                                  monkeypatch):
    """On the device the solve's first refinement test is read with the line search's
    reference values; where it fails (a residual_ratio_max below rounding) refinement
    goes on, the inertia correction's rules for slow and failed refinements follow and
    the direction is taken anew, as the host does at once: the same iterates."""
    from caspar_backend.solver.inertia import InertiaCorrector

    stands = collections.Counter()
    finish = InertiaCorrector.finish_direction

    def counted(self, *a):
        out = finish(self, *a)
        stands[out[1]] += 1
        return out

    monkeypatch.setattr(InertiaCorrector, "finish_direction", counted)
    ref, res, seen = _solve_emulated(build(), {"residual_ratio_max": ratio_max},
                                     monkeypatch)
    assert stands[False] and stands[False] + stands[True] == res.iterations
    assert res.status == ref.status == "Solve_Succeeded"
    assert res.iterations == ref.iterations
    for a, b in ((res.x, ref.x), (res.lam_g, ref.lam_g), (res.lam_x, ref.lam_x)):
        np.testing.assert_array_equal(a, b)


def test_device_code_path_emulated_watchdog_and_soft_restoration(monkeypatch):
    """The watchdog's stored iterate and the soft restoration's trial state on device
    arrays: x^2 + y^2 <= 1, x + y >= 3 with the watchdog triggered after four shortened
    steps takes 'w' and 's' steps and ends locally infeasible, identically on both
    paths.  (After one, the watchdog's restored searches now take IPOPT's smallest step
    size and the iterates creep along a cycle of rejected watchdog steps to max_iter;
    IPOPT leaves the same cycle after four rounds, an accident of rounding.)"""
    pytest.importorskip("pyomo")
    import caspar_backend as cb
    from tests.support import pyomo_nlp_models as nlpm

    ref, res, seen = _solve_emulated(cb.from_pyomo(nlpm.infeasible()),
                                     {"watchdog_shortened_iter_trigger": 4}, monkeypatch)
    assert seen and all(seen)
    tags = "".join(h.step_type for h in res.history)
    assert "w" in tags and "s" in tags
    assert res.status == ref.status == "Infeasible_Problem_Detected"
    assert res.iterations == ref.iterations
    np.testing.assert_array_equal(res.x, ref.x)


#: the pivot epsilon of the emulated static pivoting (cuDSS 0.8 replaces pivots below its
#: pivot epsilon by +-epsilon)
STATIC_PIVOT_EPS = 1e-13


def _static_pivot_cudss_class(pivoting=False):
    """:class:`CudssSolver` with its cuDSS calls emulated as cuDSS factorizes a small
    K: ``K = V diag(lam) V^T`` with every ``|lam| < STATIC_PIVOT_EPS`` replaced by
    ``+-STATIC_PIVOT_EPS`` (the sign of lam, + for 0) and the inertia counted from the
    replaced values, so a (nearly) singular K factorizes with no zero pivot -- as cuDSS
    0.8 does (``pivoting=False``) and 1.0 with Bunch-Kaufman (``pivoting=True``: it too
    perturbs a zero pivot, info 0, H200 2026-11-30).  The rest
    (``perturbs_pivots``, ``enable_pivoting``, the switch to the dense eigendecomposition
    on device arrays) is CudssSolver's own code."""
    from caspar_backend.linsolve.base import Factorization
    from caspar_backend.linsolve.cudss import CudssSolver

    h = _EmulatedEvaluator._h

    class StaticPivotCudss(CudssSolver):
        def __init__(self):
            self.cp, self.pivoting, self.structure, self._dense = (
                _fake_xp(), pivoting, None, None)

        def symbolic(self, structure):
            return None

        def analyse(self, structure, symbolic=None):
            self.structure, self._dense = structure, None
            n = structure.n
            self._cols = np.repeat(np.arange(n), np.diff(structure.indptr))

        def _factorize_cudss(self, values):
            a = np.zeros((self.structure.n,) * 2)
            a[self.structure.indices, self._cols] = h(values)
            a[self._cols, self.structure.indices] = h(values)
            lam, self._v = np.linalg.eigh(a)
            sign = np.where(lam >= 0, 1.0, -1.0)
            self._lam = np.where(np.abs(lam) < STATIC_PIVOT_EPS, sign * STATIC_PIVOT_EPS, lam)
            self._a = a
            n_pos = int(np.count_nonzero(self._lam > 0))
            return Factorization(True, n_pos, self.structure.n - n_pos, 0)

        def _solve_cudss(self, rhs, out):
            v = self._v
            return (v @ ((v.T @ h(rhs)) / self._lam)).view(_DevArray)

        def _solve_add_cudss(self, rhs, x):
            x += self._solve_cudss(rhs, None)

        def _matvec_cudss(self, x, out):
            return (self._a @ h(x)).view(_DevArray)

        def free(self):
            pass

    return StaticPivotCudss


@pytest.mark.parametrize("switch,pivoting", [(True, False), (True, True), (False, False)])
def test_static_pivoting_switches_small_system_to_dense_eigen(switch, pivoting, monkeypatch):
    """min -x1 - x2 + 0.01 x2^2, x2 <= 1 (the bank's unbounded_linear) on the device
    code path with a statically pivoting cuDSS: delta_w falls below the pivot epsilon,
    the replaced pivot caps the x1 step and the refinement against K fails.  With the
    switch to the dense eigendecomposition (CudssSolver.enable_pivoting, asked by the
    KKT system's increase_quality) the iterates diverge as on the CPU path and in IPOPT;
    without it (as on the H200 with cuDSS 0.8 before) they grow linearly until the
    iteration limit."""
    pytest.importorskip("casadi")
    pytest.importorskip("qdldl")
    from caspar_backend.solver import solve_nlp
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import make_evaluator, run_caspar, run_ipopt

    cls = _static_pivot_cudss_class(pivoting)
    if not switch:
        monkeypatch.setattr(cls, "enable_pivoting", lambda self: False)
    xp = _emulate_device(monkeypatch, cls)
    p = {b.name: b for b in bank()}["unbounded_linear"]
    d = dict(p.build(), options=p.options)
    ev = _EmulatedEvaluator(make_evaluator(d), xp)
    res = solve_nlp(ev, d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"],
                    options=dict(print_level=0, max_iter=300))
    assert res.extra["device"] == "cuda" and res.extra["linear_solver"] == "cudss"
    if switch:
        assert res.status == run_caspar(d).status == "Diverging_Iterates"
        assert run_ipopt(d)["status"] == "Diverging_Iterates"
    else:
        assert res.status == "Maximum_Iterations_Exceeded"


def test_dense_eigen_inertia_and_solve():
    """The dense eigendecomposition: the inertia of a random symmetric K with known
    eigenvalues, an exact zero (a zero row and column) reported as zero, a 1e-20
    eigenvalue of a diagonal K kept (not rounded to zero), K x = b to rounding."""
    import scipy.sparse as sp
    from caspar_backend.linsolve.base import SparseStructure
    from caspar_backend.linsolve.dense_eigen import DenseEigenSolver

    rng = np.random.default_rng(3)
    n = 40
    b = rng.standard_normal(n)
    for singular in (False, True):
        q = np.linalg.qr(rng.standard_normal((n, n)))[0]
        lam = np.concatenate([rng.uniform(1e-3, 10, 25), -rng.uniform(1e-3, 10, 15)])
        k = (q * lam) @ q.T
        k = (k + k.T) / 2
        if singular:        # the first row and column zero: eigenvalue exactly 0
            k[0, :] = k[:, 0] = 0.0
            k[1:, 1:] = (q[1:, 1:] * lam[1:]) @ q[1:, 1:].T
            k[1:, 1:] = (k[1:, 1:] + k[1:, 1:].T) / 2
        u = sp.csc_matrix(sp.triu(k))
        u.sort_indices()
        st = SparseStructure(n, u.indptr.astype(np.int64), u.indices.astype(np.int64))
        s = DenseEigenSolver(np)
        s.analyse(st)
        f = s.factorize(u.data)
        assert f.inertia == ((24, 15, 1) if singular else (25, 15, 0))
        assert f.ok is not singular
        if not singular:
            x = s.solve(b)
            assert np.abs(k @ x - b).max() <= 1e-10 * np.abs(b).max() * np.linalg.cond(k)
            np.testing.assert_allclose(s.matvec(x), k @ x, rtol=0, atol=1e-12)
    bad = u.data.copy()
    bad[0] = np.nan
    assert not s.factorize(bad).ok
    tiny = SparseStructure(2, np.array([0, 1, 2]), np.array([0, 1]))
    s.analyse(tiny)
    f = s.factorize(np.array([1e-20, 1e3]))
    assert f.inertia == (2, 0, 0) and f.ok
    np.testing.assert_allclose(s.solve(np.array([1.0, 1.0])), [1e20, 1e-3], rtol=1e-15)


def test_cuda_without_gpu_stack_is_a_clear_error(monkeypatch):
    import caspar_backend.device as devices
    from caspar_backend.errors import DeviceError

    monkeypatch.setattr(devices, "gpu_problem",
                        lambda solver=True: "CuPy is not importable (test)")
    with pytest.raises(DeviceError, match="CuPy is not importable.*device='cpu'"):
        _chain_model(5).solve(device="cuda", print_level=0)


def test_auto_runs_small_problems_on_cpu():
    pytest.importorskip("qdldl")
    from caspar_backend.device import AUTO_MIN_SIZE

    prob = _chain_model(20)
    assert prob.n + prob.m < AUTO_MIN_SIZE
    res = prob.solve(device="auto", print_level=0, compiled_path="no")
    assert res.success and res.extra["device"] == "cpu"
    assert set(res.timings) >= {"function_evaluations", "kkt_assembly",
                                "kkt_factorization", "kkt_solve", "other", "total"}


# ====================================================================== on the GPU
def _gpu_stack():
    from caspar_backend.device import gpu_problem

    why = gpu_problem()
    if why is not None:
        pytest.skip(why)


def _bank_names():
    """Every problem of the 69-problem bank (tests/support/problem_bank.py; it needs casadi)."""
    try:
        from tests.support.problem_bank import bank
    except ImportError:
        return []
    return [b.name for b in bank()]


#: the whole bank is solved on the GPU: bounds, inequalities, equalities, fixed
#: variables, restoration, infeasible, unbounded, undefined regions, degenerate
GPU_BANK = _bank_names()


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_BANK)
def test_bank_on_cuda_matches_cpu_and_ipopt(name):
    """With cuDSS 0.8 (static pivoting) and 1.0 (Bunch-Kaufman) alike: unbounded_linear
    needs the switch of its small KKT system to the dense eigendecomposition
    (Diverging_Iterates as IPOPT; the iteration limit without it, H200 2026-11-30, both
    versions)."""
    _gpu_stack()
    pytest.importorskip("casadi")
    pytest.importorskip("qdldl")
    from caspar_backend.solver.status import STATUSES
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import run_caspar, run_ipopt

    p = {b.name: b for b in bank()}[name]
    d = dict(p.build(), options=p.options)
    ri = run_ipopt(d)
    rc = run_caspar(d)
    rg = run_caspar(d, {"device": "cuda"})
    assert rg.extra["device"] == "cuda" and rg.extra["linear_solver"] == "cudss"
    assert rg.status == rc.status, (rg.status, rg.message, rc.status)
    assert rg.kind == STATUSES[ri["status"]].kind
    if rg.kind == "optimal":
        for f_ref in (rc.f, ri["f"]):
            assert abs(rg.f - f_ref) <= 1e-6 * max(1.0, abs(f_ref)), (rg.f, f_ref)
    assert type(rg.x) is np.ndarray and rg.x.shape == rc.x.shape
    assert type(rg.lam_g) is np.ndarray and rg.lam_g.shape == rc.lam_g.shape
    assert set(rg.timings) == set(rc.timings)


@pytest.mark.gpu
@pytest.mark.parametrize("kkt_system", ["augmented", "condensed"])
def test_loop_keeps_vectors_on_device_and_allocates_nothing(monkeypatch, kkt_system):
    _gpu_stack()
    import cupy as cp

    prob = _chain_model(3000)
    pool = cp.get_default_memory_pool()
    state = dict(inside=False, big=0, small=0, used=[], types=[], big_at_hook=[])
    orig_get, orig_asnumpy = cp.ndarray.get, cp.asnumpy

    def counted_get(self, *a, **k):
        if state["inside"]:
            state["big" if self.size > 32 else "small"] += 1
        return orig_get(self, *a, **k)

    def counted_asnumpy(a, *args, **k):
        if state["inside"] and getattr(a, "size", 0) > 32:
            state["big"] += 1
        return orig_asnumpy(a, *args, **k)

    def hook(ipm):
        state["inside"] = True
        state["types"].append(all(isinstance(a, cp.ndarray) for a in (
            ipm.w, ipm.y, ipm.zL, ipm.zU, ipm.it.gradf, ipm.it.jv, ipm.kkt.values)))
        cp.cuda.get_current_stream().synchronize()
        state["used"].append(pool.used_bytes())
        # copies made after the last iteration (building the host result) do not count
        state["big_at_hook"].append(state["big"])

    patched = True
    try:
        monkeypatch.setattr(cp.ndarray, "get", counted_get)
    except (TypeError, AttributeError):
        patched = False           # a CuPy whose ndarray type is closed: types only
    monkeypatch.setattr(cp, "asnumpy", counted_asnumpy)
    res = prob.solve(device="cuda", print_level=0, iteration_callback=hook,
                     kkt_system=kkt_system)
    state["inside"] = False
    assert res.success, res.message
    assert res.extra["device"] == "cuda" and res.extra["kkt_system"] == kkt_system
    assert len(state["types"]) >= 5 and all(state["types"])
    copies = state["big_at_hook"][-1]
    assert copies == 0, f"{copies} vector copies to the host inside the loop"
    if patched:
        assert state["small"] > 0          # the scalars the method branches on
    used = state["used"][2:]
    assert max(used) - min(used) <= 64 * 1024, used


@pytest.mark.gpu
def test_problem_solve_result_form_identical_across_devices():
    _gpu_stack()
    pytest.importorskip("qdldl")
    prob = _bounded_model(200)
    # (the CPU's general path: the compiled one reports its own timers, compiled/setup)
    rc = prob.solve(device="cpu", print_level=0, compiled_path="no")
    rg = prob.solve(device="cuda", print_level=0)
    assert rc.status == rg.status == "Solve_Succeeded"
    assert abs(rg.f - rc.f) <= 1e-6 * max(1.0, abs(rc.f))
    for k in ("x", "g", "lam_g", "lam_x"):
        a, b = getattr(rg, k), getattr(rc, k)
        assert type(a) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert set(rg.timings) == set(rc.timings) and set(rg.counts) == set(rc.counts)


@pytest.mark.gpu
@pytest.mark.parametrize("kkt_system", ["augmented", "condensed"])
def test_resolve_reuses_cudss_analysis_with_identical_answers(kkt_system):
    """cuDSS analyses a compiled problem's KKT structure once: a second solve borrows the
    first one's analysed handle (no ANALYSIS phase) and takes the same path -- status
    and iterations equal, the answer equal to rounding (cuDSS's factorizations of one
    matrix on two handles agree to the last bits, not bit for bit: H200, 2026-12-03)."""
    _gpu_stack()
    prob = _bounded_model(300)
    opts = dict(device="cuda", print_level=0, kkt_system=kkt_system)
    r1 = prob.solve(**opts)
    r2 = prob.solve(**opts)
    assert r1.status == r2.status == "Solve_Succeeded"
    assert r1.extra["analysis_seconds"] > 0.0 and r2.extra["analysis_seconds"] == 0.0
    assert r1.iterations == r2.iterations
    assert abs(r1.f - r2.f) <= 1e-12 * max(1.0, abs(r1.f))
    for k in ("x", "g", "lam_g", "lam_x"):
        np.testing.assert_allclose(getattr(r2, k), getattr(r1, k), rtol=1e-9, atol=1e-12)


def test_count_device_ops_script_counts_launches_and_reads(capsys):
    """benchmarks/count_device_ops.py (the per-iteration operation and host-read counts the
    GPU overhead work is measured by) runs on this emulation and counts both."""
    pytest.importorskip("qdldl")
    import importlib
    import re

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root))
    try:
        script = importlib.import_module("benchmarks.count_device_ops")
    finally:
        sys.path.remove(str(root))
    script.main(["--problem", "chain", "200", "--top", "40", "--sequence", "3"])
    out = capsys.readouterr().out
    m = re.search(r"operations per iteration: ([0-9.]+); host reads per iteration: ([0-9.]+)",
                  out)
    assert m and float(m.group(1)) > 30 and float(m.group(2)) > 3, out
    # a guard on the per-iteration floor of the GPU loop (each read is a device
    # synchronization): 366 launches / 18.8 reads at 70fbdc3, 267 / 9.0 after the
    # bit-exact reductions, 177 / 9.0 with the fused kernels (arrays/fused.py), 158 / 9.0
    # at 7ff1a74, 61 / 9.0 with the multi-column reductions and the fused KKT build,
    # 44 / 4.5 with the new point's derivatives and the first refinement test read with
    # the next reads; more needs a reason (benchmarks/RESULTS.md)
    assert float(m.group(1)) <= 66 and float(m.group(2)) <= 5.0, out
    assert "solver/newton.py" in out and "fused " in out
    # --sequence: iteration 3's launches as runs, each ending at a host read or a phase
    # of the linear solver, the last at the iteration's end, and together the launches
    # the per-iteration count has (the chain's iterations take the same runs)
    table = out.split("## iteration 3")[1]
    rows = [r for r in table.splitlines() if re.match(r"\| \d+ \|", r)]
    ends = [r.rsplit("|", 2)[1].strip() for r in rows]
    assert ends[-1] == "the end" and all(e.startswith(("read ", "linear solver "))
                                         for e in ends[:-1]), table
    assert any("factorize" in e for e in ends) and any("errors" in e for e in ends), table
    launches = sum(int(r.split("|")[2].split(":")[0]) for r in rows)
    assert 30 < launches <= 66, table
    # the counters were removed again: a device array is back to the plain emulation
    assert _DevArray.__array_ufunc__.__name__ == "__array_ufunc__"
