"""``nlpsol(name, 'caspar', nlp, opts)``: caspar as a CasADi NLP solver Function.

    from caspar_backend.casadi import nlpsol
    S = nlpsol("S", "caspar", {"x": x, "p": p, "f": f, "g": g},
               {"caspar": {"tol": 1e-8, "print_level": 0}, "print_time": False})
    r = S(x0=x0, p=p0, lbg=0, ubg=0)          # numeric: a dict of DM
    X = S(x0=x0, p=P)["x"]                    # symbolic (MX): a node in any casadi graph
    S.stats()["return_status"]
    R = S(x0=x0, p=P_cols)                    # B columns: B instances, one batched solve
    M = S.map(B)                              # one batched solve per evaluation

Any other solver name is handed to ``casadi.nlpsol`` unchanged, so switching is one
import.  The Function solves

    min_x f(x; p)   s.t.   lbg <= g(x; p) <= ubg,   lbx <= x <= ubx

with CasADi's interface (``casadi.nlpsol_in()/nlpsol_out()``): inputs ``x0, p, lbx, ubx,
lbg, ubg, lam_x0, lam_g0`` with defaults ``0, 0, -inf, +inf, -inf, +inf, 0, 0``; outputs
``x, f, g, lam_x, lam_g, lam_p``.  Signs are CasADi's: with ``l = f + lam_g^T g``,
``grad_x l + lam_x = 0`` (``lam < 0`` at an active lower bound, ``> 0`` at an upper one)
and ``lam_p = -grad_p l`` at the solution, so that ``d f* / d p = -lam_p`` and
``d f* / d lbg_i = -lam_g_i`` for an active lower bound.  The problem is compiled once
when the Function is built; ``p`` and all bounds change per call without recompiling.

**How it is built, and why.**  The solve runs in a ``casadi.Callback`` subclass
(:class:`SolverCallback`), which is what makes the result a real node of casadi graphs:
symbolic calls create call nodes, numeric calls reach our ``eval``, and derivatives go
through the callback's ``get_forward``/``get_reverse`` (:mod:`.sensitivity`, the KKT
system at the solution).  Two things a bare Callback cannot do are added around it:

* *default inputs*: a Callback's missing keyword inputs default to 0 (``ubx = 0`` would
  be a silent disaster), and ``default_in`` is not a Callback option.  The callback is
  therefore wrapped in an MX Function with ``default_in = nlpsol_default_in``;
* *stats()*: ``Function.stats`` is not virtual for Callbacks (casadi 3.8 has no
  ``get_stats`` hook), so the returned object is :class:`NlpsolFunction`, a Python
  subclass of ``casadi.Function`` built from that wrapper (a real ``casadi.Function``:
  ``isinstance`` holds, it can be called, embedded, mapped) whose ``stats()`` returns
  the last solve's statistics, and raises casadi's "No stats available" before the
  first numeric call.  ``stats()`` of a casadi Function that merely *contains* the
  solver does not show them (as with ipopt).

**Lifetime.**  casadi keeps a raw pointer to the Python callback object and does not
own it; if the Python object is collected while any casadi Function still calls it,
evaluation fails with "Callback object has been deleted".  Because a solver embedded in
a user's graph may outlive every Python reference to :class:`NlpsolFunction`, every
callback made by :func:`nlpsol` is kept in the module-level :data:`_ALIVE` list for the
life of the process (a deliberate, bounded leak: one compiled problem per ``nlpsol``
call, plus one per mapped Function or per column count of a symbolic B-column call).
Derivative callbacks are kept alive by their parent.

**Batches.**  A call with B columns (casadi's npar rule) and the Functions of
``S.map(B)`` solve their B instances in one :meth:`Problem.solve_batch
<caspar_backend.problem.Problem.solve_batch>` call (:mod:`.nlpsol_batch`), with the
shapes casadi's own evaluation gives; ``stats()`` then describes the batch
(:mod:`.nlpsol_stats`).  With the option ``'client'`` (a ``dask.distributed.Client``)
that batch is solved in chunks on the cluster's workers
(:mod:`caspar_backend.batch.distributed`), with the same results.

Not available (yet): second derivatives through the solver (the derivative callbacks
are evaluated numerically and are not differentiable themselves; casadi's ipopt path
builds them as MX graphs), ``iteration_callback``, ``save``/``serialize``/code
generation of the Function (a Python callback cannot be serialized), and parallel
evaluation of separate solves: they are serialized by a lock (a Function made by casadi,
e.g. ``casadi.Function.map(S, n, 'thread')``, runs its solves one at a time; caspar's
``S.map(n, 'thread')`` is one batched solve).  The solve runs on the device chosen once at construction (``'caspar':
{'device': 'cpu' | 'cuda' | 'auto'}``); lam_p, calc_lam_x and the sensitivities are
evaluated on the CPU.

Options (top level, like casadi's ``Nlpsol`` options; an unknown name raises like
casadi: "Unknown option: ..." with suggestions): see :mod:`.nlpsol_options`.  Solver options
go under ``'caspar'`` as IPOPT's go under ``'ipopt'`` and use IPOPT's names
(:mod:`caspar_backend.solver.options`); ``'caspar.tol'`` at top level is the same as
``{'caspar': {'tol': ...}}``.  Errors in them are raised when the Function is built.
"""

from __future__ import annotations

import threading
import time
from typing import final

import numpy as np

import casadi as ca

from caspar_backend.errors import CasparError, ModelError, NonFiniteError
from caspar_backend.model import check_bounds

from .nlpsol_batch import BatchCallback
from .nlpsol_function import NlpsolFunction, SolverCallback
from .nlpsol_io import DEFAULT_IN, NLPSOL_IN, NLPSOL_OUT, widened
from .nlpsol_options import validate_options
from .nlpsol_post import LagrangianGradients, bound_consistency, finish_rows
from .nlpsol_stats import (UNIFIED_RETURN_STATUS, batch_stats, print_batch_time, print_time,
                           solve_stats)

#: re-exported: the status table lives with the statistics (nlpsol_stats)
__all__ = ["NlpsolCore", "NlpsolFailure", "NlpsolFunction", "UNIFIED_RETURN_STATUS", "nlp_dict",
           "nlpsol"]

@final
class NlpsolFailure(CasparError, RuntimeError):
    """The solve did not succeed and ``error_on_fail`` is set (final)."""


#: every callback made by nlpsol(), kept alive for the process (module docstring)
_ALIVE: list = []


# ====================================================================== nlpsol
def nlpsol(name, solver, nlp, opts=None, *args):
    """``casadi.nlpsol``'s signature; ``solver == 'caspar'`` builds caspar's solver
    (:class:`NlpsolFunction`), any other name is ``casadi.nlpsol`` itself."""
    if solver != "caspar":
        rest = ([] if opts is None else [opts]) + list(args)
        return ca.nlpsol(name, solver, nlp, *rest)
    if args:
        raise TypeError("nlpsol(name, 'caspar', nlp, opts) takes no further arguments")
    core = NlpsolCore(name, nlp, opts or {})
    return core.function(register=True)


def nlp_dict(nlp) -> dict:
    """The ``{'x', 'f', 'g', 'p'}`` dict of an ``nlpsol`` problem given as a dict or as
    a casadi Function with inputs ``x, p`` and outputs ``f, g`` (the nlpsol oracle form;
    its body is kept as one call, replayed by the adapter)."""
    if isinstance(nlp, dict):
        from .nlp import as_symbolic

        return {k: as_symbolic(v) for k, v in nlp.items()}
    if isinstance(nlp, ca.Function):
        names_in, names_out = nlp.name_in(), nlp.name_out()
        if "x" not in names_in or "f" not in names_out and "g" not in names_out:
            raise ModelError(f"an nlpsol Function must have inputs 'x' (and 'p') and outputs "
                             f"'f'/'g'; {nlp.name()!r} has {names_in} -> {names_out}")
        syms = {k: ca.MX.sym(k, nlp.sparsity_in(k)) for k in names_in}
        out = nlp.call(syms)
        d = {k: syms[k] for k in ("x", "p") if k in syms}
        d.update({k: out[k] for k in ("f", "g") if k in out})
        return d
    if isinstance(nlp, str):
        raise ModelError("nlpsol(..., 'caspar', <file name>) is not supported: pass the "
                         "problem dict {'x', 'f', 'g', 'p'}")
    raise ModelError(f"expected the nlpsol problem dict {{'x', 'f', 'g', 'p'}}, got "
                     f"{type(nlp).__name__}")


# ====================================================================== the core
@final
class NlpsolCore:
    """The compiled problem, the options and the last solve's statistics (final).

    Plain Python: :class:`SolverCallback` and :class:`NlpsolFunction` hold one and
    delegate to it, so the solve logic is testable without casadi's call machinery.
    """

    def __init__(self, name: str, nlp, opts: dict):
        from .nlp import from_casadi

        self.name = name
        self.front, solver, self.warm_start = validate_options(opts)
        self.solver_options = solver
        if self.front["client"] is not None:
            from caspar_backend.batch.distributed import check_client

            check_client(self.front["client"])
        self.nlp = nlp_dict(nlp)
        t0 = time.perf_counter()
        self.problem = from_casadi(self.nlp, expand=True)
        # the evaluator (generated code) is part of compiling: build it now, so that the
        # first solve's t_wall_total is a solve's
        # 'auto' weighs the problem size once, here (device.resolve_device)
        from caspar_backend.device import resolve_device

        self.device = resolve_device(self.solver_options.get("device", "cpu"),
                                     size=self.problem.n + self.problem.m, solver=True)
        self.problem.evaluator(self.device)
        self.compile_time = time.perf_counter() - t0
        # one solve at a time: casadi may call from several threads (map(..., 'thread'))
        # and stats() and the sensitivity caches record the last call; the core itself
        # is thread safe (each solve evaluates through an evaluator of its own)
        self._lock = threading.Lock()
        self.n, self.m, self.q = self.problem.n, self.problem.m, self.problem.n_params
        disc = self.front["discrete"]
        if disc is not None:
            if len(disc) != self.n:
                raise ModelError(f"option 'discrete' has {len(disc)} entries, expected "
                                 f"{self.n} (one per variable)")
            bad = [self.problem.var_names[i] for i, d in enumerate(disc) if d]
            if bad:
                raise ModelError(f"variable {bad[0]} is discrete (integer): caspar solves "
                                 "continuous NLPs only"
                                 + (f" ({len(bad)} discrete variables)" if len(bad) > 1 else ""))
        x = self.nlp["x"]
        sym = type(x)
        p = self.nlp.get("p")
        g = self.nlp.get("g")
        self.sp_x = x.sparsity()
        # no 'p' in the dict: casadi's nlpsol has a 0x0 p (and lam_p), not 0x1
        self.sp_p = (p.sparsity() if isinstance(p, (ca.SX, ca.MX)) else
                     ca.Sparsity(0, 0) if p is None and self.q == 0 else
                     ca.Sparsity.dense(self.q, 1))
        gs = g.sparsity() if isinstance(g, (ca.SX, ca.MX)) else None
        self.sp_g = gs if gs is not None and gs.is_dense() and gs.is_column() \
            else ca.Sparsity.dense(self.m, 1)
        self.sym = sym
        self._lifted = None
        #: (x, p, lam_g) -> gradients of the Lagrangian, for B points (batched calls)
        self.lagrangian_gradients = LagrangianGradients(self.nlp)
        self._stats = None
        self._sens_cache = None
        #: optional ``i -> text`` describing variable / constraint ``i`` where it was
        #: declared, appended to error messages (Opti sets them from its g_describe)
        self.describe = {"variable": None, "constraint": None}

    # ---------------------------------------------------------------- sparsity
    def sparsity_in(self, i):
        return (self.sp_x, self.sp_p, self.sp_x, self.sp_x, self.sp_g, self.sp_g,
                self.sp_x, self.sp_g)[i]

    def sparsity_out(self, i):
        return (self.sp_x, ca.Sparsity.dense(1, 1), self.sp_g, self.sp_x, self.sp_g,
                self.sp_p)[i]

    def function(self, register: bool, size: int = 1, name: str | None = None,
                 reduce_in=(), reduce_out=(), sink=None) -> "NlpsolFunction":
        """The user-facing Function; ``register`` keeps the callback alive for the
        process (see the module docstring).  ``size`` > 1: the Function of ``size``
        instances (:class:`~.nlpsol_batch.BatchCallback`) with the inputs of
        ``reduce_in`` shared and the outputs of ``reduce_out`` summed over the
        instances, recording its statistics into ``sink`` (default: this core)."""
        name = name or self.name
        cb = SolverCallback(name + "_caspar", self)
        if size > 1:
            cb = BatchCallback(name + "_caspar", self, size, sink or self, single=cb)
        if register:
            _ALIVE.append(cb)
        ins = [ca.MX.sym(nm, self.sparsity_in(i) if i in reduce_in
                         else widened(self.sparsity_in(i), size))
               for i, nm in enumerate(NLPSOL_IN)]
        outs = cb.call(ins)
        for j in reduce_out:
            # the sum of the instances' column blocks
            outs[j] = sum(ca.horzsplit(outs[j], self.sparsity_out(j).size2()))
        wrapper = ca.Function(name, ins, outs, list(NLPSOL_IN), list(NLPSOL_OUT),
                              {"default_in": list(DEFAULT_IN)})
        return NlpsolFunction(wrapper, cb, self, size=size, sink=sink,
                              plain=not (reduce_in or reduce_out))

    # ---------------------------------------------------------------- checks
    def check_inputs(self, x0, p, lbx, ubx, lbg, ubg) -> None:
        """Raise a ModelError naming the first bad component (wording as the model's
        own validation, plus the input's name)."""
        pr = self.problem
        for lo, hi, names, what, a, b in ((lbx, ubx, self._names("variable"), "variable",
                                           "lbx", "ubx"),
                                          (lbg, ubg, self._names("constraint"), "constraint",
                                           "lbg", "ubg")):
            check_bounds(lo, hi, names, what, (a, b))
        bad = np.flatnonzero(~np.isfinite(x0))
        if bad.size:
            i = bad[0]
            raise NonFiniteError(f"variable {self._names('variable')[i]} has a non-finite initial value "
                                 f"{float(x0[i])!r} (x0[{i}])")
        bad = np.flatnonzero(~np.isfinite(p))
        if bad.size:
            i = bad[0]
            raise NonFiniteError(f"parameter {pr.param_names[i]} has a non-finite value "
                                 f"{float(p[i])!r} (p[{i}])")

    def _names(self, what):
        """Names for error messages, with the declaration site when one is known."""
        pr = self.problem
        base = pr.var_names if what == "variable" else pr.con_names
        desc = self.describe[what]
        if desc is None:
            return base
        return _Described(base, desc)

    # ---------------------------------------------------------------- solve
    def solve(self, x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0) -> dict:
        """One solve from numeric inputs (float64 vectors of the nonzeros); returns the
        outputs as vectors (``f`` a float) and records :meth:`stats`."""
        with self._lock:
            return self._solve(x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0)

    def _solve(self, x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0) -> dict:
        from caspar_backend.solver import solve_nlp

        t_wall, t_proc = time.perf_counter(), time.process_time()
        self.check_inputs(x0, p, lbx, ubx, lbg, ubg)
        pr = self.problem
        pr.p = p
        opts = dict(self.solver_options)
        opts.pop("device", None)
        ev = pr.evaluator(self.device, p=p)
        res = solve_nlp(ev, lbx, ubx, lbg, ubg, x0,
                        lam_g0=lam_g0 if self.warm_start else None,
                        lam_x0=lam_x0 if self.warm_start else None,
                        var_names=pr.var_names, con_names=pr.con_names, options=opts)
        f = float(res.f) * pr.model.sense
        x, g, lam_x, lam_g, lam_p = self._finish(res.x, res.g, res.lam_x, res.lam_g, p,
                                                 lbx, ubx, lbg, ubg)
        wall, proc = time.perf_counter() - t_wall, time.process_time() - t_proc
        self._stats = solve_stats(res, wall, proc, self.compile_time, self.device)
        if self.front["print_time"]:
            print_time(self.name, res, wall, proc)
        if self.front["error_on_fail"] and not res.success:
            raise NlpsolFailure(f"nlpsol process failed: {res.status} ({res.message}). "
                                "Set 'error_on_fail' option to false to ignore this error.")
        return dict(x=x, f=f, g=g, lam_x=lam_x, lam_g=lam_g, lam_p=lam_p)

    def _finish(self, x, g, lam_x, lam_g, p, lbx, ubx, lbg, ubg) -> tuple:
        """``(x, g, lam_x, lam_g, lam_p)`` of one solution as the options ask:
        ``calc_lam_x`` recomputes lam_x, ``calc_lam_p`` gives lam_p (else NaN),
        ``bound_consistency`` clips (casadi's post-processing, in casadi's order)."""
        x, g = np.asarray(x, float), np.asarray(g, float)
        lam_x, lam_g = np.asarray(lam_x, float), np.asarray(lam_g, float)
        if self.front["calc_lam_x"]:
            cpu = self.problem.evaluator("cpu", p=p)   # host arrays, whatever the solve ran on
            lam_x = -(np.asarray(cpu.grad(x), float)
                      + (cpu.jac(x).T @ lam_g if self.m else 0.0))
        lam_p = np.full(self.q, np.nan)
        if self.front["calc_lam_p"] and self.q:
            lam_p = self.lam_p(x, p, lam_g)
        if self.front["bound_consistency"]:
            x, lam_x = bound_consistency(x, lam_x, lbx, ubx)
            g, lam_g = bound_consistency(g, lam_g, lbg, ubg)
        return x, g, lam_x, lam_g, lam_p

    def solve_batch(self, x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0, record) -> dict:
        """B solves in one :meth:`Problem.solve_batch
        <caspar_backend.problem.Problem.solve_batch>` call.  Inputs: float64 (B, k)
        arrays, row b the nonzeros of instance b's input.  Returns the outputs as
        (B, k) arrays (``f``: (B,)), each row what :meth:`solve` returns for that row;
        hands the batch's statistics (:func:`~.nlpsol_stats.batch_stats`) to
        ``record`` before ``error_on_fail`` may raise (for the first failed instance)."""
        with self._lock:
            t_wall, t_proc = time.perf_counter(), time.process_time()
            self.check_rows(x0, p, lbx, ubx, lbg, ubg)
            opts = dict(self.solver_options)
            client = self.front["client"]
            # on a cluster each worker resolves the device option for itself
            opts["device"] = opts.get("device", "cpu") if client is not None else self.device
            res = self.problem.solve_batch(x0, p, lam_g0 if self.warm_start else None,
                                           lam_x0 if self.warm_start else None, lbx=lbx,
                                           ubx=ubx, lbg=lbg, ubg=ubg, client=client, **opts)
            # casadi's post-processing of all B solutions at once (nlpsol_post)
            out = finish_rows(self, res.x, res.g, res.lam_x, res.lam_g, p, lbx, ubx, lbg,
                              ubg)
            out["f"] = np.asarray(res.f, float)
            wall, proc = time.perf_counter() - t_wall, time.process_time() - t_proc
            record(batch_stats(res, wall, proc, self.compile_time, self.device))
            if self.front["print_time"]:
                print_batch_time(self.name, res, wall, proc)
        failed = np.flatnonzero(~res.success)
        if self.front["error_on_fail"] and failed.size:
            b = int(failed[0])
            raise NlpsolFailure(f"nlpsol process failed: {res.status[b]} ({res.message[b]}) "
                                f"in instance {b} of {len(res)} ({failed.size} failed). "
                                "Set 'error_on_fail' option to false to ignore this error.")
        return out

    def check_rows(self, x0, p, lbx, ubx, lbg, ubg) -> None:
        """:meth:`check_inputs` for (B, k) arrays: the masks over every row at once, then
        the first bad row's message, prefixed with its instance."""
        bad = np.zeros(x0.shape[0], bool)
        for lo, hi in ((lbx, ubx), (lbg, ubg)):
            # what check_bounds refuses: a NaN, lo > hi, an infinity on the wrong side
            bad |= (np.isnan(lo) | np.isnan(hi) | (lo > hi) | (lo == np.inf)
                    | (hi == -np.inf)).any(axis=1)
        bad |= ~np.isfinite(x0).all(axis=1) | ~np.isfinite(p).all(axis=1)
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            try:
                self.check_inputs(x0[b], p[b], lbx[b], ubx[b], lbg[b], ubg[b])
            except ModelError as exc:
                raise type(exc)(f"instance {b}: {exc}") from None

    def record(self, stats: dict) -> None:
        """Keep ``stats`` as the last call's (what :meth:`stats` returns)."""
        self._stats = stats

    def stats(self) -> dict:
        if self._stats is None:
            raise RuntimeError(f"No stats available: Function '{self.name}' not set up. To "
                               "get statistics, first evaluate it numerically.")
        return dict(self._stats)

    # ---------------------------------------------------------------- p-derivatives
    def lifted(self):
        """The problem with ``z = (x, p)`` as variables, compiled on first use: its
        evaluator gives the derivatives with respect to p that the solve's evaluator
        (p bound as data) does not -- lam_p and the sensitivity blocks L_xp, L_pp, g_p."""
        if self._lifted is None:
            from .nlp import from_casadi

            p = self.nlp.get("p")
            parts = [ca.vec(self.nlp["x"])] + ([ca.vec(p)] if p is not None and p.nnz() else [])
            d = {"x": ca.vertcat(*parts)}
            for k in ("f", "g"):
                if self.nlp.get(k) is not None:
                    d[k] = self.nlp[k]
            self._lifted = from_casadi(d, expand=True)
        return self._lifted.evaluator()

    def lam_p(self, x, p, lam_g) -> np.ndarray:
        """``-grad_p (f + lam_g^T g)`` at ``(x, p)``."""
        ev = self.lifted()
        z = np.concatenate([x, p])
        gz = np.asarray(ev.grad(z), float)
        if self.m:
            gz = gz + ev.jac(z).T @ lam_g
        return -gz[self.n:]

    def sensitivity(self, x0, p, lbx, ubx, lbg, ubg, x, g, lam_x, lam_g):
        """The :class:`~.sensitivity.KKTSensitivity` at a solution (cached for the last
        point: casadi asks for several batches of directions at the same point)."""
        from .sensitivity import KKTSensitivity

        key = tuple(np.asarray(a, float).tobytes() for a in (p, lbx, ubx, lbg, ubg, x, lam_x,
                                                               lam_g))
        if self._sens_cache is not None and self._sens_cache[0] == key:
            return self._sens_cache[1]
        n = self.n
        ev = self.lifted()
        z = np.concatenate([x, p])
        Hz = ev.hess(z, lam_g if self.m else np.zeros(0), 1.0).tocsr()
        Jz = ev.jac(z).tocsr()
        gz = np.asarray(ev.grad(z), float)
        sens = KKTSensitivity(Hz[:n, :n], Jz[:, :n], gz[:n], Hz[:n, n:], Hz[n:, n:],
                              Jz[:, n:], gz[n:], x=x, g=g, lam_x=lam_x, lam_g=lam_g,
                              lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg,
                              min_lam=self.front["min_lam"])
        self._sens_cache = (key, sens)
        return sens


@final
class _Described:
    """``names[i]`` followed by ``describe(i)``, computed only for the entry an error
    message asks for (final)."""

    def __init__(self, names, describe):
        self.names, self.describe = names, describe

    def __getitem__(self, i):
        return f"{self.names[i]} ({self.describe(int(i))})"
