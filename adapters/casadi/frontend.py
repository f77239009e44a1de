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
system at the solution).  (A plain numeric call of the Function from Python skips
casadi's call machinery and solves at once, with the same result: :mod:`.nlpsol_direct`.)
Two things a bare Callback cannot do are added around it:

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

**Lifetime.** casadi keeps a raw pointer to the Python callback object and does not own it;
if the Python object is collected while any casadi Function still calls it, evaluation fails
with "Callback object has been deleted". Because a solver embedded in a user's graph may
outlive every Python reference to :class:`NlpsolFunction`, every callback made by
:func:`nlpsol` is kept in the module-level :data:`_ALIVE` list for the life of the process
(a deliberate, bounded leak: one compiled problem per ``nlpsol`` call, plus one per mapped
Function or per column count of a symbolic B-column call). Derivative callbacks are kept
alive by their parent.

**Batches.**  A call with B columns (casadi's npar rule) and the Functions of
``S.map(B)`` solve their B instances in one :meth:`Problem.solve_batch
<caspar_backend.problem.Problem.solve_batch>` call (:mod:`.nlpsol_batch`), with the
shapes casadi's own evaluation gives; ``stats()`` then describes the batch
(:mod:`.nlpsol_stats`).  With the option ``'client'`` (a ``dask.distributed.Client``)
that batch is solved in chunks on the cluster's workers
(:mod:`caspar_backend.batch.distributed`), with the same results.

``S.save``/``serialize`` and ``casadi.Function.load`` work as for ipopt (:mod:`.nlpsol_load`).
Not available (yet): second derivatives through the solver (the derivative callbacks
are not differentiable; casadi's ipopt path builds them as MX graphs), code generation
(a Python callback has no C code), and parallel evaluation of separate solves: a lock
serializes them (``casadi.Function.map(S, n, 'thread')`` runs its solves one at a time;
caspar's ``S.map(n, 'thread')`` is one batched solve).  The solve runs on the device
chosen at construction (``'caspar': {'device': 'cpu' | 'cuda' | 'auto'}``); lam_p,
calc_lam_x and the sensitivities are evaluated on the CPU.  An MX ``attachAssert`` is
checked at every point a solve evaluates (:mod:`.assertions`).

Options (top level, like casadi's ``Nlpsol`` options; an unknown name raises like casadi:
"Unknown option: ..." with suggestions): see :mod:`.nlpsol_options`. Solver options go under
``'caspar'`` as IPOPT's go under ``'ipopt'`` and use IPOPT's names
(:mod:`caspar_backend.solver.options`); ``'caspar.tol'`` at top level is the same as
``{'caspar': {'tol': ...}}``. Errors in them are raised when the Function is built. casadi's
options that change what a solve does: ``iteration_callback`` (:mod:`.nlpsol_iteration`),
``detect_simple_bounds`` (:mod:`.simple_bounds`: the solver solves the problem less its
simple rows, ``self.oracle``; inputs and outputs are mapped per call), IPOPT's
``grad_f``/``jac_g``/``hess_lag`` (compared once with caspar's own derivatives,
:mod:`.nlpsol_derivatives`), the ``calc_*`` family (:mod:`.nlpsol_post`). With a user
``iteration_callback`` a call of B instances is B single solves, as casadi evaluates it.
"""

from __future__ import annotations

import functools
import threading
import time
from typing import final

import numpy as np

import casadi as ca

from caspar_backend.compiled.dispatch import may_take
from caspar_backend.errors import CasparError

from .assertions import AssertionCheck
from .interrupts import keyboard_interrupts
from .nlp import nlp_dict
from .nlpsol_batch import BatchCallback
from .nlpsol_checks import InputChecks, check_discrete, check_shapes
from .nlpsol_derivatives import UserDerivatives
from .nlpsol_direct import DirectCalls
from .nlpsol_function import NlpsolFunction, SolverCallback
from .nlpsol_io import DEFAULT_IN, NLPSOL_IN, NLPSOL_OUT, widened
from .nlpsol_iteration import IterationCallback
from .nlpsol_oracle import OracleFunctions
from .nlpsol_options import JIT_OPTIONS, check_consistency, validate_options
from .nlpsol_post import LagrangianGradients, finish_rows
from .nlpsol_stats import (UNIFIED_RETURN_STATUS, LastStats, batch_stats, print_batch_time,
                           print_time, solve_stats)
from .oracle_dumps import OracleDumps
from .parametric import Parametric
from .simple_bounds import SimpleBounds, mark_infeasible

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
    with keyboard_interrupts():         # Ctrl-C while casadi builds the Function
        return NlpsolCore(name, nlp, opts or {}).function(register=True)


# ====================================================================== the core
@final
class NlpsolCore:
    """The compiled problem, the options and the last solve's statistics (final).

    Plain Python: :class:`SolverCallback` and :class:`NlpsolFunction` hold one and
    delegate to it, so the solve logic is testable without casadi's call machinery.
    """

    def __init__(self, name: str, nlp, opts: dict):
        from .nlp import from_casadi, problem_function

        self.name = name
        #: the options as given, and the record a saved Function stores (.nlpsol_serial)
        self.opts, self._saved_form = dict(opts), None
        self.front, solver, self.warm_start = validate_options(opts)
        self.solver_options = solver
        if self.front["client"] is not None:
            from caspar_backend.batch.distributed import check_client

            check_client(self.front["client"])
        self.nlp = nlp_dict(nlp)
        check_shapes(self.nlp)
        t0 = time.perf_counter()
        #: detect_simple_bounds (simple_bounds): the rows that become bounds, or None
        self.simple = (SimpleBounds.detect(self.nlp) if self.front["detect_simple_bounds"]
                       else None)
        #: the problem the solver solves (casadi's oracle): the nlp less its simple rows
        self.oracle = self.nlp if self.simple is None else self.simple.reduced(self.nlp)
        #: get_function's Functions of the oracle, as IPOPT's nlpsol names them
        self.oracle_functions = OracleFunctions(self.oracle, self.front["oracle_records"])
        #: an SX problem's (x, p) -> (f, g): read here, stored by save; None for MX
        self.nlp_function = problem_function(self.nlp)
        self.problem = from_casadi(self.oracle, expand=True, function=self.nlp_function
                                   if self.simple is None else None)
        sites = self.problem.model.meta.get("assertions")
        #: the NLP's MX assertions, checked at every point solves evaluate (.assertions)
        self.assertions = AssertionCheck(self.nlp, sites) if sites else None
        #: casadi's records of its oracle Functions' calls, made at each evaluation
        self.records = OracleDumps.of(self.oracle_functions, self.front["oracle_records"])
        #: the wrappers of every solve's evaluator (host work at each point: the general path)
        self.wraps = [w for w in (self.assertions, self.records) if w is not None]
        if self.simple is not None:
            # the solver's messages name the user's rows
            self.problem.model.con_names = [f"g[{i}]" for i in self.simple.kept]
        # 'auto' weighs the size once (resolve_device)
        self.device = self.problem.resolve_device(self.solver_options.get("device", "cpu"))
        #: the user's derivative Functions (nlpsol_derivatives)
        self.derivatives = UserDerivatives(
            {k: self.front[k] for k in ("grad_f", "jac_g", "hess_lag")},
            self.problem.n, self.problem.m, self.problem.n_params,
            exact_hessian=self.solver_options.get("hessian_approximation",
                                                  "exact") == "exact")
        #: with opaque calls and the user's hess_lag: f, g and first derivatives by casadi's
        #: functions, as IPOPT evaluates them (.nlp_evaluator); None: the compiled problem's
        self.casadi_evaluator = None
        if self.uses_hess_lag() and self.problem.extended is not None:
            from .nlp_evaluator import CasadiNlpEvaluator

            self.casadi_evaluator = CasadiNlpEvaluator(
                self.oracle, {k: v for k, v in self.opts.items() if k in JIT_OPTIONS})
        # one solve at a time: casadi may call from threads (map(..., 'thread')) and stats()
        # and the sensitivity caches record the last call (each solve's evaluator is its own)
        self._lock = threading.Lock()
        self.n, self.q = self.problem.n, self.problem.n_params
        self.m = self.problem.m if self.simple is None else self.simple.m
        check_consistency(self.front, self.q, self.m)
        check_discrete(self.front["discrete"], self.problem.var_names)
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
        #: lam_p and the sensitivity blocks, from the problem over (x, p)
        self.parametric = Parametric(self.nlp, self.n, self.m, self.front["min_lam"])
        #: (x, p, lam_g) -> gradients of the Lagrangian, for B points (batched calls):
        #: of the user's problem and of the solver's
        self.lagrangian_gradients = LagrangianGradients(self.nlp)
        self.oracle_gradients = (self.lagrangian_gradients if self.simple is None
                                 else LagrangianGradients(self.oracle))
        #: the user's iteration_callback (nlpsol_iteration)
        fn = self.front["iteration_callback"]
        self.iteration = None if fn is None else IterationCallback(
            fn, self.front["iteration_callback_step"],
            self.front["iteration_callback_ignore_errors"],
            [self.sparsity_out(i) for i in range(len(NLPSOL_OUT))])
        if self.casadi_evaluator is None and not (
                self.kernels_may_solve() and may_take(self.problem, self.solver_options)):
            # the evaluator (generated code) is compiling's: t_wall_total is the solve's (the
            # kernels do not use it; where the general path solves, it builds it)
            self.problem.evaluator(self.device)
        self.compile_time = time.perf_counter() - t0
        self._last = LastStats()
        #: optional ``i -> text`` describing variable / constraint ``i`` where it was
        #: declared, appended to error messages (Opti sets them from its g_describe)
        self.describe = {"variable": None, "constraint": None}
        self.checks = InputChecks(
            self.problem.var_names,
            self.problem.con_names if self.simple is None else
            [f"g[{i}]" for i in range(self.m)], self.problem.param_names, self.describe)
        #: numeric one-instance calls without casadi's call machinery, where the
        #: outcome is the same (.nlpsol_direct); None: every call goes through casadi
        self.direct_calls = (
            DirectCalls([self.sparsity_in(i) for i in range(len(NLPSOL_IN))],
                        [self.sparsity_out(i) for i in range(len(NLPSOL_OUT))])
            if (not self.front["error_on_fail"] and self.iteration is None
                and not self.derivatives.functions and not self.front["function_records"]
                and all(self.sparsity_in(i).is_dense() for i in range(len(NLPSOL_IN))))
            else None)

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
                              {"default_in": list(DEFAULT_IN), **self.front["function_records"]})
        return NlpsolFunction(wrapper, cb, self, size=size, sink=sink,
                              plain=not (reduce_in or reduce_out))

    # ---------------------------------------------------------------- checks
    def check_inputs(self, x0, p, lbx, ubx, lbg, ubg) -> None:
        """Raise a ModelError naming the first bad component (:mod:`.nlpsol_checks`)."""
        self.checks.check(x0, p, lbx, ubx, lbg, ubg)

    def check_rows(self, x0, p, lbx, ubx, lbg, ubg) -> None:
        """:meth:`check_inputs` for (B, k) arrays (:mod:`.nlpsol_checks`)."""
        self.checks.check_rows(x0, p, lbx, ubx, lbg, ubg)

    # ---------------------------------------------------------------- solve
    def solve(self, x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0, record=None,
              checked: bool = False) -> dict:
        """One solve from numeric inputs (float64 vectors of the nonzeros); returns the
        outputs as vectors (``f`` a float) and hands ``record`` the statistics' builder
        (``() -> dict``; default: :meth:`record`, what :meth:`stats` returns).
        ``checked``: the caller has passed the inputs through :meth:`check_inputs`
        already."""
        with self._lock:
            return self._solve(x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0, record, checked)

    def _solve(self, x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0, record=None,
               checked=False) -> dict:
        from caspar_backend.solver import solve_nlp

        t_wall, t_proc = time.perf_counter(), time.process_time()
        if not checked:
            self.check_inputs(x0, p, lbx, ubx, lbg, ubg)
        pr = self.problem
        pr.p = p
        # the solver's bounds and warm start: the user's, or merged with the simple rows
        merged = None
        bounds = (lbx, ubx, lbg, ubg, lam_x0, lam_g0)
        if self.simple is not None:
            merged = self.simple.merge(*(np.asarray(a, float)[None, :] for a in
                                         (x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0)))
            bounds = tuple(a[0] for a in (merged.lbx, merged.ubx, merged.lbg, merged.ubg,
                                          merged.lam_x0, merged.lam_g0))
        s_lbx, s_ubx, s_lbg, s_ubg, s_lx0, s_lg0 = bounds
        opts = dict(self.solver_options)
        opts.pop("device", None)
        if self.derivatives.functions:
            self.derivatives.check_once(self.host_evaluator(p), x0, p)
        if self.front["calc_lam_p"] and self.q:
            # lam_p's Function is built before iterating (as IPOPT's nlpsol builds its
            # gradient at construction), not after: a Ctrl-C's answer does not wait for it
            self.parametric.prepare_lam_p()
        # IPOPT iterates with a given hess_lag (nlpsol_derivatives); the compiled path
        # evaluates the generated Hessian, so such a solve takes the general path
        user_hessian = self.uses_hess_lag()
        evaluators = []
        tallies = []        # the iteration callback's calls and seconds

        def general(resume=None, started=None):
            if self.iteration is not None:
                opts["iteration_callback"] = self.iteration.solver_hook(
                    opts.get("iteration_callback"), pr.model.sense, self.simple, merged, p)
                tallies.append(opts["iteration_callback"].tally)
            if not evaluators:
                ev = (pr.evaluator(self.device, p=p) if self.casadi_evaluator is None
                      else self.host_evaluator(p))
                ev = self.derivatives.hessian(ev) if user_hessian else ev
                for w in self.wraps:
                    ev = w.wrap(ev)
                evaluators.append(ev)
            return solve_nlp(evaluators[0], s_lbx, s_ubx, s_lbg, s_ubg, x0,
                             lam_g0=s_lg0 if self.warm_start else None,
                             lam_x0=s_lx0 if self.warm_start else None,
                             var_names=pr.var_names, con_names=pr.con_names, options=opts,
                             started=started, resume=resume, hand_back=True)

        if self.kernels_may_solve():
            # small problems: the compiled interior point (the same iterates; the
            # general path where the kernels hand over -- caspar_backend.compiled.dispatch)
            from caspar_backend.compiled.dispatch import solve as dispatched

            res = dispatched(pr, np.asarray(x0, float), np.asarray(p, float),
                             [s_lbx, s_ubx, s_lbg, s_ubg], opts, general,
                             (s_lg0, s_lx0) if self.warm_start else None)
        else:
            res = general()
        if self.records is not None:
            self.records.solution(self.front, self.q, self.m, res, p)
        if merged is not None and merged.infeasible[0]:
            res = mark_infeasible(res, merged.infeasible)
        f = float(res.f) * pr.model.sense
        out = self._finish(res, p, (s_lbx, s_ubx, s_lbg, s_ubg), merged)
        wall, proc = time.perf_counter() - t_wall, time.process_time() - t_proc
        (record or self.record)(functools.partial(
            solve_stats, res, wall, proc, self.compile_time, self.device,
            tuple(tallies[-1]) if tallies else None))
        if self.front["print_time"]:
            print_time(self.name, res, wall, proc)
        if self.front["error_on_fail"] and not res.success:
            raise NlpsolFailure(f"nlpsol process failed: {res.status} ({res.message}). "
                                "Set 'error_on_fail' option to false to ignore this error.")
        return dict(out, f=f)

    def host_evaluator(self, p):
        """A CPU evaluator of the solved problem with parameters ``p`` bound: casadi's
        functions (:attr:`casadi_evaluator`) or the compiled problem's."""
        if self.casadi_evaluator is None:
            return self.problem.evaluator("cpu", p=p)
        self.casadi_evaluator.set_params(p)
        return self.casadi_evaluator

    def kernels_may_solve(self) -> bool:
        """Whether solves go to the compiled interior point's dispatch (:meth:`_solve`)."""
        return (self.device == "cpu" and self.iteration is None and not self.uses_hess_lag()
                and not self.wraps)

    def uses_hess_lag(self) -> bool:
        """Solves iterate with the user's ``hess_lag`` (IPOPT's use of it): given, with
        the exact-Hessian option, on the user's own x and g (no simple-bound rows taken
        out) of a minimization."""
        return ("hess_lag" in self.derivatives.functions and self.simple is None
                and self.problem.model.sense == 1)

    def _finish(self, res, p, bounds, merged) -> dict:
        """``x, g, lam_x, lam_g, lam_p`` of one solution as the options ask
        (:func:`~.nlpsol_post.finish_rows`, with the gradients from caspar's evaluators
        on the CPU, whatever the solve ran on)."""
        pr = self.problem

        def grad_x(X, P, LG):
            cpu = self.host_evaluator(P[0])
            x = X[0]
            return (np.asarray(cpu.grad(x), float)
                    + (cpu.jac(x).T @ LG[0] if pr.m else 0.0))[None, :]

        def grad_p(X, P, LG):
            return -self.parametric.lam_p(X[0], P[0], LG[0])[None, :]

        rows = finish_rows(self, *(np.asarray(a, float)[None, :] for a in
                                   (res.x, res.g, res.lam_x, res.lam_g, p, *bounds)),
                           merged=merged, grad_x=grad_x, grad_p=grad_p)
        return {k: v[0] for k, v in rows.items()}

    def solve_batch(self, x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0, record) -> dict:
        """B solves in one :meth:`Problem.solve_batch
        <caspar_backend.problem.Problem.solve_batch>` call.  Inputs: float64 (B, k)
        arrays, row b the nonzeros of instance b's input.  Returns the outputs as
        (B, k) arrays (``f``: (B,)), each row what :meth:`solve` returns for that row;
        hands ``record`` the builder of the batch's statistics
        (:func:`~.nlpsol_stats.batch_stats`) before ``error_on_fail`` may raise (for the
        first failed instance)."""
        if (self.iteration is not None or self.problem.extended is not None
                or self.uses_hess_lag() or self.wraps):
            # the callback sees one solve at a time: casadi's own column-by-column
            # evaluation (each solve records its statistics; the last one's remain);
            # so are models with opaque Functions (no batched evaluator: .opaque),
            # solves with the user's hess_lag or assertions (host Functions per instance)
            return self._solve_one_by_one(x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0, record)
        with self._lock:
            t_wall, t_proc = time.perf_counter(), time.process_time()
            self.check_rows(x0, p, lbx, ubx, lbg, ubg)
            if self.front["calc_lam_p"] and self.q:
                self.lagrangian_gradients.prepare()     # before iterating, as in solve
            opts = dict(self.solver_options)
            client = self.front["client"]
            # on a cluster each worker resolves the device option for itself
            opts["device"] = opts.get("device", "cpu") if client is not None else self.device
            merged = None
            if self.simple is not None:
                merged = self.simple.merge(x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0)
                lbx, ubx, lbg, ubg = merged.lbx, merged.ubx, merged.lbg, merged.ubg
                lam_x0, lam_g0 = merged.lam_x0, merged.lam_g0
            res = self.problem.solve_batch(x0, p, lam_g0 if self.warm_start else None,
                                           lam_x0 if self.warm_start else None, lbx=lbx,
                                           ubx=ubx, lbg=lbg, ubg=ubg, client=client, **opts)
            if merged is not None and merged.infeasible.any():
                res = mark_infeasible(res, merged.infeasible)
            # casadi's post-processing of all B solutions at once (nlpsol_post)
            out = finish_rows(self, res.x, res.g, res.lam_x, res.lam_g, p, lbx, ubx, lbg,
                              ubg, merged=merged)
            out["f"] = np.asarray(res.f, float)
            wall, proc = time.perf_counter() - t_wall, time.process_time() - t_proc
            record(functools.partial(batch_stats, res, wall, proc, self.compile_time,
                                     self.device))
            if self.front["print_time"]:
                print_batch_time(self.name, res, wall, proc)
        failed = np.flatnonzero(~res.success)
        if self.front["error_on_fail"] and failed.size:
            b = int(failed[0])
            raise NlpsolFailure(f"nlpsol process failed: {res.status[b]} ({res.message[b]}) "
                                f"in instance {b} of {len(res)} ({failed.size} failed). "
                                "Set 'error_on_fail' option to false to ignore this error.")
        return out

    def _solve_one_by_one(self, x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0, record) -> dict:
        """:meth:`solve_batch` as B single solves (with the user's iteration_callback);
        ``record`` gets the last solve's statistics."""
        rows = [self.solve(*(a[b] for a in (x0, p, lbx, ubx, lbg, ubg, lam_x0, lam_g0)),
                           record=record) for b in range(x0.shape[0])]
        return {k: np.array([r[k] for r in rows], dtype=float) for k in NLPSOL_OUT}

    def record(self, build) -> None:
        """Keep ``build`` (``() -> dict``) as the last call's statistics (what
        :meth:`stats` returns, built on first read: :class:`~.nlpsol_stats.LastStats`)."""
        self._last.record(build)

    def stats(self) -> dict:
        stats = self._last.get()
        if stats is None:
            raise RuntimeError(f"No stats available: Function '{self.name}' not set up. To "
                               "get statistics, first evaluate it numerically.")
        return dict(stats)
