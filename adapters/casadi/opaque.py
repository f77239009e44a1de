"""CasADi Functions that cannot be written as SX, as opaque calls evaluated by CasADi.

Interpolants, integrators, ``casadi.Callback`` s and external functions have no SX
instruction program: ``expand()`` keeps each call of them as one SX call node.  The
compiler (:mod:`.compiler`) compiles such a Function to an :class:`OpaqueProgram`;
running it at a call site does not build the body but registers the call with the
:class:`OpaqueRegistry` of the model being read, whose graph gets fresh auxiliary
leaves ``var(n + j)`` for the call's result nonzeros.  The rest of the NLP is read as
today.  The registry then hands over one
:class:`~caspar_backend.opaque.calls.CallGroup` per Function, its calls as tables,
evaluated through :class:`CasadiHostFunction`:

* values: ``F.map(N)`` on the N argument columns of one level (one casadi call);
* first derivatives: ``jacobian(out, a_act)`` of a wrapper of F (which calls F's own
  ``jacobian()``, or its forward/reverse derivatives, ``get_jacobian`` for a
  Callback), mapped;
* second derivatives: ``hessian(w^T out, a_act)`` of the same wrapper (casadi builds it
  from F's reverse-mode derivative), lower triangle, mapped;
* along seeds (:mod:`caspar_backend.opaque.seeds`: calls whose arguments read fewer
  quantities than F has inputs): ``jtimes(out, a_act, V)`` (forward), ``jtimes(out,
  a_act, w, True)`` (reverse) and ``V^T jtimes(grad, a_act, V)`` (forward over reverse);
  the full Jacobian and Hessian are then never built.

An MX Function (kept as a call for its depth in a chain, not for lack of an SX program)
is expanded to SX first: casadi evaluates SX and its derivatives many times faster than
an MX graph of nested calls.

``out`` is every output's nonzeros concatenated, ``a_act`` the argument nonzeros that
are not constants in every call (the others enter as a second, undifferentiated input).
A casadi error inside a call (an integrator that fails, a Callback that raises) gives
NaN values, which the solver treats as an evaluation error, with casadi's message warned
(as casadi warns under IPOPT) and named in the solver's message; a Function whose second
derivatives casadi cannot build raises at the first Hessian, saying to use
``hessian_approximation='limited-memory'`` (as IPOPT needs then too).
"""

from __future__ import annotations

import threading
from typing import final

import numpy as np

import casadi as ca

from caspar_backend.errors import EvaluationError, ModelError, UnsupportedOpError
from caspar_backend.opaque.host import HostFunction
from caspar_backend.user_warnings import warn

from .compiler import casadi_message
from .program import Program


@final
class OpaqueProgram(Program):
    """A Function run as one opaque call per call site (final)."""

    opaque = True

    def __init__(self, fn, registry: "OpaqueRegistry"):
        self.fn = fn
        self.name = fn.name()
        self.n_in = [fn.nnz_in(i) for i in range(fn.n_in())]
        self.n_out = [fn.nnz_out(i) for i in range(fn.n_out())]
        self.registry = registry

    def run(self, g, inputs: list) -> list:
        return self.registry.call(self.fn, g, inputs)


@final
class OpaqueRegistry:
    """The opaque calls met while reading one model (final).

    :meth:`bind` sets the model's graph and its variable count ``n``; every call
    registered gets the next auxiliary leaves ``var(n + j)``.  A call with the same
    Function and the same argument nodes as an earlier one returns that call's leaves
    (casadi evaluates such duplicates once too)."""

    def __init__(self):
        self.graph = None
        self.n_x = 0
        self.n_aux = 0
        self._memo: dict = {}
        #: hash(fn) -> [fn, [argument node lists], [first aux index]]
        self._calls: dict = {}
        self.aux_names: list = []

    def bind(self, graph, n_x: int) -> None:
        self.graph, self.n_x = graph, n_x

    def program(self, fn) -> OpaqueProgram:
        """The program of ``fn`` whose runs register calls here."""
        return OpaqueProgram(fn, self)

    def __bool__(self) -> bool:
        return bool(self._calls)

    def call(self, fn, g, inputs: list) -> list:
        if g is not self.graph:
            raise UnsupportedOpError(
                f"casadi Function {fn.name()!r} ({fn.class_name()}) cannot be written as "
                "SX and is called where caspar needs an expression (a template)")
        key = (hash(fn), tuple(map(id, inputs)))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        entry = self._calls.get(hash(fn))
        if entry is None:
            entry = self._calls[hash(fn)] = [fn, [], []]
        k = len(entry[1])
        n_out = sum(fn.nnz_out(i) for i in range(fn.n_out()))
        first = self.n_aux
        out = [g.var(self.n_x + first + j) for j in range(n_out)]
        self.n_aux += n_out
        self.aux_names += [f"{fn.name()}#{k}.{nm}" for nm in _labels(fn, "out")]
        entry[1].append(list(inputs))
        entry[2].append(first)
        self._memo[key] = out
        return out

    def calls(self):
        """The :class:`~caspar_backend.opaque.calls.OpaqueCalls` of what was met."""
        from caspar_backend.opaque.calls import CallGroup, OpaqueCalls

        args, arg_names, groups = [], [], []
        for fn, arg_lists, firsts in self._calls.values():
            n_in = sum(fn.nnz_in(i) for i in range(fn.n_in()))
            n_out = sum(fn.nnz_out(i) for i in range(fn.n_out()))
            N = len(arg_lists)
            base = len(args)
            for a in arg_lists:
                args.extend(a)
            labels = _labels(fn, "in")
            arg_names += [f"{fn.name()}#{k}.{nm}" for k in range(N) for nm in labels]
            rows = (base + np.arange(N * n_in, dtype=np.int64)).reshape(N, n_in).T
            aux = (np.asarray(firsts, dtype=np.int64)[None, :]
                   + np.arange(n_out, dtype=np.int64)[:, None])
            groups.append(CallGroup(CasadiHostFunction(fn), rows, aux))
        return OpaqueCalls(self.n_aux, args, groups, aux_names=list(self.aux_names),
                           arg_names=arg_names)


def _labels(fn, side: str) -> list[str]:
    """``name[k]`` per nonzero of every input (``side='in'``) or output."""
    if side == "in":
        names, nnz = fn.name_in(), [fn.nnz_in(i) for i in range(fn.n_in())]
    else:
        names, nnz = fn.name_out(), [fn.nnz_out(i) for i in range(fn.n_out())]
    return [nm if k == 1 else f"{nm}[{j}]" for nm, k in zip(names, nnz) for j in range(k)]


@final
class CasadiHostFunction(HostFunction):
    """A casadi Function as a :class:`~caspar_backend.opaque.host.HostFunction`
    (final; see the module docstring)."""

    def __init__(self, fn):
        self.fn = fn
        self.name = fn.name()
        self.kind = fn.class_name()
        self.n_in = sum(fn.nnz_in(i) for i in range(fn.n_in()))
        self.n_out = sum(fn.nnz_out(i) for i in range(fn.n_out()))
        self.active = None
        self._maps: dict = {}
        self._lock = threading.Lock()
        self._hess_error = None
        self._hess_rc = None
        self._jac_sp = None
        self._local = threading.local()

    # ---------------------------------------------------------------- building
    def prepare(self, active) -> None:
        active = np.asarray(active, dtype=np.int64)
        if self.active is not None:
            if not np.array_equal(active, self.active):
                raise ValueError(f"{self.describe()} prepared for other inputs")
            return
        self.active = active
        fn, self._sx_body = self.fn, False
        if fn.is_a("MXFunction") and _sx_only(fn):
            # a Function kept as a call for its depth in a chain (single shooting), not
            # for lack of an SX program: casadi's SX virtual machine evaluates it and
            # its derivatives many times faster than the MX graph of nested calls
            # (benchmarks/bench_estimation.py, single shooting, 1,000 samples: 21 s per
            # solve on the MX graph, 1.4 s expanded).  A body that calls an integrator,
            # a Callback, ... stays MX: as an SX call node, such a call's derivatives are
            # slower than through the MX graph (a chain of cvodes calls: 3x)
            try:
                fn, self._sx_body = fn.expand(), True
            except RuntimeError:
                pass
        const = self._const = np.setdiff1d(np.arange(self.n_in), active)
        a_act = ca.MX.sym("a", len(active))
        a_cst = ca.MX.sym("c", len(const))
        pos = np.empty(self.n_in, dtype=np.int64)
        pos[active] = np.arange(len(active))
        pos[const] = len(active) + np.arange(len(const))
        flat = ca.vertcat(a_act, a_cst)
        flat = flat[pos.tolist()] if self.n_in else ca.MX(0, 1)
        args, lo = [], 0
        for i in range(fn.n_in()):
            sp_i, k = fn.sparsity_in(i), fn.nnz_in(i)
            args.append(ca.sparsity_cast(flat[lo:lo + k], sp_i) if k else ca.MX(sp_i))
            lo += k
        res = fn.call(args)
        outs = [ca.sparsity_cast(r, ca.Sparsity.dense(r.nnz(), 1)) for r in res if r.nnz()]
        out = ca.vertcat(*outs) if outs else ca.MX(0, 1)
        ins = [a_act, a_cst]
        self._value = ca.Function(f"{self.name}_values", ins, [out])
        self._sym = (a_act, ins, out)
        self._jac = None
        if self._sx_body:
            # an SX body is differentiable: the structure by sparsity propagation, the
            # Jacobian itself built on first use (seeded calls never ask for it)
            self._jac_sp = ca.jacobian_sparsity(out, a_act)
        else:
            # built now, so that a Function without derivatives is refused here
            self._first_order()
            self._jac_sp = self._jac.sparsity_out(0)
        self.jac_rows, self.jac_cols = _triplets(self._jac_sp)

    def _first_order(self) -> None:
        """The full Jacobian's Function (its output in the structure of ``jac_rows``,
        ``jac_cols`` once that is set)."""
        if self._jac is not None:
            return
        a_act, ins, out = self._sym
        try:
            J = ca.jacobian(out, a_act)
        except RuntimeError as e:
            raise ModelError(
                f"casadi Function {self.describe()} has no first derivatives "
                f"({casadi_message(e)}); give it a Jacobian (a Callback's has_jacobian / "
                "get_jacobian), forward/reverse derivatives, or the option enable_fd") \
                from None
        sp_ = self._jac_sp
        self._jac = ca.Function(f"{self.name}_jac", ins,
                                [J if sp_ is None else ca.project(J, sp_)])

    def _second(self) -> None:
        """The full Hessian's Function and structure, built on first use (the seeded
        path of :meth:`prepare_directions` never builds it: over k inputs it is k
        directions of forward over reverse, casadi's construction included)."""
        if self._hess_rc is not None:
            return
        a_act, ins, out = self._sym
        w = ca.MX.sym("w", self.n_out)
        try:
            H = ca.tril(ca.hessian(ca.dot(w, out), a_act)[0])
            self._hess = ca.Function(f"{self.name}_hess", ins + [w], [H])
            self._hess_rc = _triplets(H.sparsity())
        except RuntimeError as e:
            # no second derivatives (e.g. a Callback whose Jacobian is not
            # differentiable): the structure is dense, an evaluation raises
            self._hess = None
            self._hess_error = casadi_message(e)
            r, c = np.tril_indices(len(self.active))
            self._hess_rc = (r.astype(np.int64), c.astype(np.int64))

    @property
    def hess_rows(self) -> np.ndarray:
        self._second()
        return self._hess_rc[0]

    @property
    def hess_cols(self) -> np.ndarray:
        self._second()
        return self._hess_rc[1]

    def prepare_directions(self, n_dir: int) -> None:
        """Forward mode along ``n_dir`` seeds ``V`` (k x n_dir per call), reverse mode
        along one weight vector, and forward over reverse for ``V^T H V``."""
        a_act, ins, out = self._sym
        V = ca.MX.sym("V", len(self.active), n_dir)
        w = ca.MX.sym("w", self.n_out)
        try:
            dv = ca.densify(ca.jtimes(out, a_act, V))
            self._dir = ca.Function(f"{self.name}_dir", ins + [V], [dv])
            grad = ca.jtimes(out, a_act, w, True)
            self._vjp = ca.Function(f"{self.name}_vjp", ins + [w], [ca.densify(grad)])
        except RuntimeError as e:
            raise ModelError(f"casadi Function {self.describe()} has no directional "
                             f"derivatives ({casadi_message(e)})") from None
        try:
            vhv = ca.densify(ca.mtimes(V.T, ca.jtimes(grad, a_act, V)))
            self._dir_hess = ca.Function(f"{self.name}_dir_hess", ins + [V, w], [vhv])
        except RuntimeError as e:
            self._dir_hess = None
            self._hess_error = casadi_message(e)
        self.n_dir = n_dir

    def _mapped(self, kind: str, N: int):
        key = (kind, N)
        f = self._maps.get(key)
        if f is None:
            with self._lock:
                f = self._maps.get(key)
                if f is None:
                    if kind == "hess":
                        self._second()
                    elif kind == "jac":
                        self._first_order()
                    base = getattr(self, {"values": "_value", "jac": "_jac", "hess": "_hess",
                                          "dir": "_dir", "vjp": "_vjp",
                                          "dir_hess": "_dir_hess"}[kind])
                    f = self._maps[key] = base if N == 1 else base.map(N)
        return f

    def _inputs(self, A):
        act = np.ascontiguousarray(A[self.active])
        const = np.ascontiguousarray(A[self._const])
        return ca.DM(act), ca.DM(const)

    def _buffer(self, N: int):
        """``(a, c, r, run)``: the values Function over N instances evaluated in place on
        NumPy arrays (casadi's ``Function.buffer``; per thread, as evaluators bound to
        other parameters share this function across concurrent solves).  ``a`` (N, k)
        and ``c`` (N, n_in - k) are casadi's column-major (k, N) and (n_in - k, N)
        inputs, ``r`` (N, n_out) its output."""
        bufs = getattr(self._local, "bufs", None)
        if bufs is None:
            bufs = self._local.bufs = {}
        hit = bufs.get(N)
        if hit is None:
            buf, run = self._mapped("values", N).buffer()
            k = len(self.active)
            a, c = np.zeros((N, k)), np.zeros((N, self.n_in - k))
            r = np.zeros((N, self.n_out))
            buf.set_arg(0, memoryview(a.reshape(-1)))
            buf.set_arg(1, memoryview(c.reshape(-1)))
            buf.set_res(0, memoryview(r.reshape(-1)))
            hit = bufs[N] = (a, c, r, run, buf)
        return hit

    # -------------------------------------------------------------- evaluating
    def values(self, A) -> np.ndarray:
        A = np.asarray(A, dtype=float)
        N = A.shape[1]
        if self._sx_body and self.n_out:
            # an SX body cannot fail (NaN propagates); in place, a call costs ~1 us
            # where converting arrays to DM costs ~100 us, once per level of a chain
            a, c, r, run, _ = self._buffer(N)
            a[...] = A[self.active].T
            c[...] = A[self._const].T
            run()
            return r.T.copy()
        try:
            r = self._mapped("values", N)(*self._inputs(A))
        except RuntimeError as exc:
            return self._failed(exc, (self.n_out, N))
        return np.asarray(r.full(), dtype=float).reshape(self.n_out, N)

    def jacobian(self, A) -> np.ndarray:
        A = np.asarray(A, dtype=float)
        N, nnz = A.shape[1], len(self.jac_rows)
        try:
            r = self._mapped("jac", N)(*self._inputs(A))
        except RuntimeError as exc:
            return self._failed(exc, (N, nnz))
        return _nonzeros(r).reshape(N, nnz)

    def directional(self, A, V) -> np.ndarray:
        A = np.asarray(A, dtype=float)
        N, K = A.shape[1], self.n_dir
        Vm = np.asarray(V, dtype=float).transpose(1, 0, 2).reshape(len(self.active), N * K)
        try:
            r = self._mapped("dir", N)(*self._inputs(A), ca.DM(Vm))
        except RuntimeError as exc:
            return self._failed(exc, (N, self.n_out, K))
        return np.asarray(r.full(), dtype=float).reshape(self.n_out, N, K).transpose(1, 0, 2)

    def vjp(self, A, W) -> np.ndarray:
        A = np.asarray(A, dtype=float)
        N = A.shape[1]
        try:
            r = self._mapped("vjp", N)(*self._inputs(A), ca.DM(np.asarray(W, dtype=float)))
        except RuntimeError as exc:
            return self._failed(exc, (N, len(self.active)))
        return np.asarray(r.full(), dtype=float).T

    def directional_hessian(self, A, V, W) -> np.ndarray:
        if self._dir_hess is None:
            self._no_second()
        A = np.asarray(A, dtype=float)
        N, K = A.shape[1], self.n_dir
        Vm = np.asarray(V, dtype=float).transpose(1, 0, 2).reshape(len(self.active), N * K)
        try:
            r = self._mapped("dir_hess", N)(*self._inputs(A), ca.DM(Vm),
                                            ca.DM(np.asarray(W, dtype=float)))
        except RuntimeError as exc:
            return self._failed(exc, (N, K, K))
        return np.asarray(r.full(), dtype=float).reshape(K, N, K).transpose(1, 0, 2)

    def _failed(self, exc: RuntimeError, shape) -> np.ndarray:
        """NaN values of shape ``shape`` for a call casadi could not evaluate: an
        evaluation error, as in IPOPT's nlpsol, whose reason (casadi's message) is kept
        in :attr:`last_error` for the solver's message and warned (once per text)."""
        self.last_error = casadi_message(exc)
        warn(f"caspar: casadi Function {self.describe()} failed to evaluate "
             f"({self.last_error}); the point counts as an evaluation error, as in "
             "IPOPT's nlpsol")
        return np.full(shape, np.nan)

    def _no_second(self):
        raise EvaluationError(
            f"casadi Function {self.describe()} has no second derivatives "
            f"({self._hess_error}); solve with hessian_approximation='limited-memory'")

    def hessian(self, A, W) -> np.ndarray:
        self._second()
        if self._hess is None:
            self._no_second()
        A = np.asarray(A, dtype=float)
        N, nnz = A.shape[1], len(self.hess_rows)
        try:
            r = self._mapped("hess", N)(*self._inputs(A), ca.DM(np.asarray(W, dtype=float)))
        except RuntimeError as exc:
            return self._failed(exc, (N, nnz))
        return _nonzeros(r).reshape(N, nnz)


def _sx_only(fn) -> bool:
    """Whether every Function that ``fn`` calls, directly or nested, has an SX program
    (MX and SX Functions, maps of them): expanded, ``fn`` is one SX program without call
    nodes."""
    find = getattr(fn, "find_functions", None)
    if find is None:
        return False
    return all(g.is_a("MXFunction") or g.is_a("SXFunction") or g.is_a("Map", True)
               for g in find())


def _triplets(sp) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, cols)`` int64 of a casadi Sparsity, in its nonzero order."""
    r, c = sp.get_triplet()
    return np.asarray(r, dtype=np.int64), np.asarray(c, dtype=np.int64)


def _nonzeros(dm) -> np.ndarray:
    """The nonzeros of a DM (column-major) as float64."""
    return np.asarray(dm.nonzeros(), dtype=float)
