"""``solve_nlp``: validate, choose the device, build the slack problem, run the
interior-point method, map the solution back to the user's space, print IPOPT's output.

Devices (option ``device``):

* ``'cpu'``: NumPy evaluator, qdldl;
* ``'cuda'``: CUDA evaluator (CuPy arrays), cuDSS through nvmath-python; every iterate
  stays in device memory.  Not usable -> :class:`~caspar_backend.errors.DeviceError`
  saying what is missing and how to install it;
* ``'auto'``: ``'cuda'`` when usable and ``n + m >= AUTO_MIN_SIZE``, else ``'cpu'``
  (:func:`caspar_backend.device.resolve_device`).

When the option is not given, the solve runs where the evaluator lives
(``evaluator.device``).  The result has the same form on every device: host NumPy
arrays; ``result.extra`` records ``device``, ``linear_solver``, ``kkt_system`` (the KKT
system of the main phase; restoration phases run on the same kind) and cuDSS's
one-time analysis seconds.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from .. import device as devices
from ..errors import DeviceError
from ..model import as_vector
from ..arrays import host
from .compat import linear_solver_for, open_output, run_derivative_test, \
    warn_substitutions
from .evalcounter import EvalCounter, timed_phases
from .fixed import fixed_variables
from .initial import warm_start_pushes
from .interrupt import sigint_as_stop
from .ipm import InteriorPoint, Shared
from .log import (IterationLog, bound_violation, problem_statistics, row_kinds,
                  scaling_evaluations, summary, user_options)
from .nlp import SlackNLP
from .resume import FreshStart, HandBack
from .options import infinite_bounds, resolve_options
from .result import SolveResult
from .status import STATUSES, SolverStop
from .user_scaling import user_scaling as resolve_user_scaling


def _vec(a, n, name, fill):
    return as_vector(name, a, n, fill)


def _evaluator_on(evaluator, device):
    if getattr(evaluator, "device", "cpu") == device:
        return evaluator
    problem = getattr(evaluator, "problem", None)
    if problem is None:
        raise DeviceError(f"device={device!r} needs an evaluator on that device; this "
                          f"{type(evaluator).__name__} runs on "
                          f"{getattr(evaluator, 'device', 'cpu')!r}")
    # an evaluator of its own, with this solve's parameters (thread safety)
    return problem.evaluator(device, p=evaluator.parameters())


def _warm_multipliers(nlp, ipm, opts, lam_g0, lam_x0):
    """(y0, zL0, zU0) in the solver's scaled space from CasADi-convention multipliers,
    as IPOPT's WarmStartIterateInitializer: y clipped to +-warm_start_mult_init_max;
    bound multipliers of x from lam_x0 (negative part for lower bounds, positive for
    upper), those of inequality slacks from y (s >= gL: -y; s <= gU: y), capped at
    warm_start_mult_init_max, then raised to at least warm_start_mult_bound_push (in
    that order: IPOPT's).  A cap <= 0 caps nothing (IPOPT).  Missing vectors count as
    zeros.  Host work, once per solve."""
    m, n = nlp.m, nlp.n_full
    cap, push = opts.warm_start_mult_init_max, opts.warm_start_mult_bound_push
    if cap <= 0.0:
        cap = np.inf
    y = np.clip(_vec(lam_g0, m, "lam_g0", 0.0) * nlp.df / nlp.dc, -cap, cap)
    lx = _vec(lam_x0, n, "lam_x0", 0.0)
    if nlp.dx is not None:
        # IPOPT's OrigIpoptNLP::GetStartingPoint multiplies the given bound multipliers
        # by dx (apply_vector_scaling_x_LU), as it does x; kept for the same iterates
        lx = lx * nlp.dx
    lx = lx[nlp.free] * nlp.df
    zw = np.concatenate([lx, y[nlp.slack_rows]])  # dL/dw_i of the bound terms: zU - zL
    iL, iU = host(ipm.calc.iL), host(ipm.calc.iU)
    zL = np.maximum(np.minimum(-zw[iL], cap), push)
    zU = np.maximum(np.minimum(zw[iU], cap), push)
    xp = ipm.xp
    return xp.asarray(y), xp.asarray(zL), xp.asarray(zU)


def solve_nlp(evaluator, lbx, ubx, lbg, ubg, x0, *, lam_g0=None, lam_x0=None,
              var_names=None, con_names=None, options=None, started=None,
              resume=None, hand_back=False, user_scaling=None):
    """Solve ``min f(x) s.t. lbg <= g(x) <= ubg, lbx <= x <= ubx`` with the evaluator's
    functions (see :mod:`caspar_backend.evaluators.base`); returns a
    :class:`SolveResult` in CasADi's multiplier sign convention.  Options are IPOPT's
    (:mod:`.options`); an unknown option raises OptionError.  ``started``: the caller's
    ``(time.perf_counter(), time.process_time())`` when the solve began before this call
    (a compiled attempt that handed over, ``Problem.solve``): ``max_wall_time``,
    ``max_cpu_time`` and the total time count from there.  ``resume``: a
    :class:`~.resume.ResumePoint` of this very solve (the compiled attempt's state where
    it handed over, :mod:`caspar_backend.compiled.resume`): the run continues there
    instead of starting at ``x0`` (which still sets the scaling), with its log lines
    and evaluation counts so far; or :data:`~.resume.FRESH_START`: a run from ``x0``
    that may hand back.  ``hand_back`` (with ``resume``, and no output_file): the run
    returns its own :class:`~.resume.ResumePoint` instead of a result at the first
    iteration after the resumed one (after iteration 0 from a fresh start) where the
    kernels can go on (:func:`~.resume.kernel_can_go_on`; the caller hands it to them),
    its printed log to be continued by the next turn.  ``user_scaling``: the factors
    of nlp_scaling_method 'user-scaling', ``(obj, x, g)`` -- a float, a vector (n,) or
    None, a vector (m,) or None; an entry <= 0 means 1 -- or a
    :class:`~.user_scaling.UserScaling` (:mod:`.user_scaling`); read only with that
    method (None there: no scaling)."""
    t0 = time.perf_counter() if started is None else started[0]
    opts = resolve_options(options)
    scaling = resolve_user_scaling(user_scaling, evaluator.n, evaluator.m)
    back_after = None
    if isinstance(resume, FreshStart):
        resume, back_after = None, 0 if hand_back else None
    elif hand_back and resume is not None:
        back_after = resume.iteration
    if "device" in opts.user:
        evaluator = _evaluator_on(evaluator, devices.resolve_device(
            opts.device, size=evaluator.n + evaluator.m, solver=True))
    device = getattr(evaluator, "device", "cpu")
    if device == "cpu":
        from ..compiled.dispatch import general_cpu_evaluator

        evaluator = general_cpu_evaluator(evaluator, opts.cpu_evaluator)
    why = devices.gpu_problem() if device == "cuda" else None
    if why is not None:
        raise DeviceError(f"a CUDA evaluator was given but {why}; or use device='cpu'")
    linear_solver = linear_solver_for(opts, device)
    warn_substitutions(opts, linear_solver)
    stream, out_file = open_output(opts, opts.stream if opts.stream is not None
                                   else sys.stdout)
    try:
        return _solve(evaluator, lbx, ubx, lbg, ubg, x0, lam_g0, lam_x0, opts, t0,
                      device, linear_solver, stream,
                      cpu0=None if started is None else started[1], resume=resume,
                      hand_back_after=back_after, user_scaling=scaling)
    finally:
        if out_file is not None:
            out_file.close()


#: the EXIT line of IPOPT when every variable is fixed and the constraints are violated
ALL_FIXED_INFEASIBLE = "Problem has only fixed variables and constraints are infeasible."


def _all_fixed(evaluator, x, lbg, ubg, tol, stream, t0) -> SolveResult:
    """IPOPT's rule when every variable is fixed (``lbx == ubx``; its TNLPAdapter with
    no free variable): no iteration; with g the constraints at the fixed point x and
    v = max(0, max_i(g_i - ubg_i), max_i(lbg_i - g_i)), the status is Solve_Succeeded
    if v <= tol, else Infeasible_Problem_Detected; f and g at x, every multiplier 0."""
    xp = getattr(evaluator, "xp", np)
    m = evaluator.m
    with np.errstate(all="ignore"):
        xd = xp.asarray(x)
        f = float(evaluator.obj(xd))
        g = host(evaluator.cons(xd, xp.zeros(m))).astype(float) if m else np.zeros(0)
        viol = float(np.max(np.concatenate(([0.0], g - ubg, lbg - g))))
    ok = viol <= tol       # (NaN: infeasible)
    status = "Solve_Succeeded" if ok else "Infeasible_Problem_Detected"
    message = STATUSES[status].exit_message if ok else ALL_FIXED_INFEASIBLE
    if stream is not None:
        verdict = ("is below tolerance {:e}. Declaring success." if ok else
                   "is above tolerance {:e}. Declaring that problem is infeasible.")
        stream.write(f"All variables are fixed and constraint violation {viol:e}\n   "
                     + verdict.format(tol) + f"\n\nEXIT: {message}\n")
    return SolveResult(x=np.array(x, float), f=f, g=g, lam_g=np.zeros(m),
                       lam_x=np.zeros(evaluator.n), status=status, iterations=0,
                       message=message, timings=dict(total=time.perf_counter() - t0),
                       counts={})


def _solve(evaluator, lbx, ubx, lbg, ubg, x0, lam_g0, lam_x0, opts, t0, device,
           linear_solver, stream, cpu0=None, resume=None, hand_back_after=None,
           user_scaling=None):
    """:func:`solve_nlp` after the options: ``stream`` None prints nothing; ``cpu0`` the
    process time max_cpu_time counts from (None: from the interior point's start);
    ``resume`` as there (a point, or None); ``hand_back_after``: the iteration after
    which the run may hand back (None: it does not); ``user_scaling`` a checked
    :class:`~.user_scaling.UserScaling` or None."""
    n, m = evaluator.n, evaluator.m
    lbx, ubx = _vec(lbx, n, "lbx", -np.inf), _vec(ubx, n, "ubx", np.inf)
    lbg, ubg = _vec(lbg, m, "lbg", -np.inf), _vec(ubg, m, "ubg", np.inf)
    lbx, ubx, lbg, ubg = infinite_bounds(opts.nlp_lower_bound_inf, opts.nlp_upper_bound_inf,
                                         lbx, ubx, lbg, ubg)
    x0 = _vec(x0, n, "x0", 0.0)
    # a log an earlier turn of this solve started (a resumed, handed-back solve) goes on
    continued = resume is not None and resume.log is not None
    if stream is not None and not continued:
        user_options(stream, opts)
        # evaluators with parts run elsewhere say so (caspar_backend.opaque: one line
        # per function evaluated on the host)
        for line in getattr(evaluator, "log_lines", lambda: [])():
            stream.write(line + "\n")
    counter = EvalCounter(getattr(evaluator, "xp", np), sync=timed_phases(opts))

    def early(status, msg):
        x = np.clip(x0, lbx, ubx)
        return SolveResult(x=x, f=float("nan"), g=np.full(m, np.nan), lam_g=np.zeros(m),
                           lam_x=np.zeros(n), status=status, iterations=0, message=msg,
                           timings=dict(total=time.perf_counter() - t0), counts={})

    bad = [nm for nm, a in (("lbx", lbx), ("ubx", ubx), ("lbg", lbg), ("ubg", ubg))
           if np.isnan(a).any()]
    if bad or (lbx > ubx).any() or (lbg > ubg).any():
        return early("Invalid_Problem_Definition",
                     "NaN bounds or lower bound above upper bound"
                     + (f" in {bad}" if bad else ""))
    if not np.all(np.isfinite(x0)):
        return early("Invalid_Problem_Definition", "x0 contains NaN or Inf")
    run_derivative_test(evaluator, np.clip(x0, lbx, ubx), opts, stream)
    user_lbx, user_ubx = lbx, ubx
    lbx, ubx, keep_fixed = fixed_variables(lbx, ubx, lbg, ubg, opts, stream)
    nlp = SlackNLP(evaluator, lbx, ubx, lbg, ubg, x0, opts, counter, keep_fixed=keep_fixed,
                   user_scaling=user_scaling)
    if nlp.nx == 0:
        return _all_fixed(evaluator, np.clip(x0, lbx, ubx), lbg, ubg, opts.tol, stream, t0)
    n_eq = int(np.count_nonzero(nlp.eq))
    if n_eq > nlp.nx:
        return early("Not_Enough_Degrees_Of_Freedom",
                     f"{n_eq} equality constraints but only {nlp.nx} free variables")
    if stream is not None and not continued:
        stream.write(problem_statistics(
            opts.print_level, linear_solver,
            (host(evaluator.jac_rows), host(evaluator.jac_cols)),
            (host(evaluator.hess_rows), host(evaluator.hess_cols)), lbx, ubx, lbg, ubg))
    if continued:
        log = resume.log
    else:
        log = IterationLog(stream, opts.print_frequency_iter) if stream is not None else None
    sh = Shared(opts, counter, log, t0, cpu0)
    sh.linear_solver = linear_solver
    sh.iter_hook = opts.iteration_callback
    # (an output file is opened per turn: its log is not split across turns)
    back = hand_back_after is not None and not (opts.output_file and opts.file_print_level)
    ipm = InteriorPoint(nlp, sh, hand_back_after=hand_back_after if back else None)
    # one-time structural work (scaling, barrier problem, KKT pattern, device arrays,
    # solver handles), less the function evaluations and linear algebra done in it
    t_setup = time.perf_counter() - t0 - counter.seconds - sh.timers.linear_algebra
    xp = ipm.xp
    message = ""
    try:
        # NumPy's floating-point warnings off for the whole iteration, once: the method
        # meets inf - inf on free sides, log of a rejected trial's slack, ... and tests
        # what it uses for finiteness itself (an errstate per formula costs more than a
        # small problem's vector operations).  Ctrl-C: User_Requested_Stop after the
        # current iteration
        with np.errstate(all="ignore"), sigint_as_stop(sh):
            if resume is not None:
                # the compiled attempt's iterations: their counts and log lines, then
                # the run from the start of the iteration it handed over in
                counter.counts.update(resume.counts)
                if log is not None:
                    for rec in resume.history[resume.logged:]:
                        log.iteration(rec)
                ipm.resume(resume)
            elif opts.warm_start_init_point:
                # IPOPT's WarmStartIterateInitializer: s = d(x0) at the user's x0, then
                # x and s pushed with the warm_start_* options
                ipm.initialize_warm(x0, *_warm_multipliers(nlp, ipm, opts, lam_g0, lam_x0),
                                    bound_push=warm_start_pushes(opts))
            else:
                # IPOPT's DefaultIterateInitializer (given multipliers are ignored
                # unless warm_start_init_point = yes)
                ipm.initialize_default(x0)
            status = ipm.run()
    except HandBack as back:
        return back.point
    except SolverStop as stop:
        status, message = stop.status, stop.message
        if status == "Invalid_Number_Detected":
            # "NaN or Inf in a derivative evaluation at iteration 7: constraint c[7]: ..."
            head, sep, tail = message.partition(":")
            message = f"{head} at iteration {sh.iter}{sep}{tail}"
    except KeyboardInterrupt:
        # raised inside an iteration (a second Ctrl-C, or by a callback or another
        # handler): the iteration is abandoned; the iterate is returned as it stands
        status, message = "User_Requested_Stop", "(interrupted inside an iteration)"
    finally:
        # no linear solve follows: the factorization object goes back to the compiled
        # problem's symbolic analysis for the next solve (also when the run raised)
        ipm.release()
    exit_msg = STATUSES[status].exit_message
    message = exit_msg + (f" {message}" if message else "")
    it = ipm.it
    x, lam_g, lam_x = nlp.unscale(it.w, it.y, it.zL, it.zU, ipm.calc.iL, ipm.calc.iU)
    if opts.honor_original_bounds:
        # IPOPT's honor_original_bounds: the iterates satisfy the bounds relaxed by
        # bound_relax_factor; the returned x is projected onto the user's bounds
        x = np.clip(x, user_lbx, user_ubx)
    if opts.fixed_variable_treatment == "make_parameter_nodual":
        lam_x[nlp.fixed] = 0.0        # IPOPT: no multipliers for fixed variables
    with np.errstate(all="ignore"):
        try:
            xd = xp.asarray(x)
            f = float(evaluator.obj(xd))
            g = host(evaluator.cons(xd, xp.zeros(m))).astype(float) if m else np.zeros(0)
        except Exception:
            f, g = float("nan"), np.full(m, np.nan)
    total = time.perf_counter() - t0
    t_fun = counter.seconds
    tm = sh.timers
    t_lin = tm.linear_algebra
    timings = dict(function_evaluations=t_fun, kkt_assembly=tm.build,
                   kkt_factorization=tm.factor, kkt_solve=tm.solve, setup=t_setup,
                   total=total, other=max(0.0, total - t_setup - t_fun - t_lin))
    extra = dict(device=device, linear_solver=linear_solver, kkt_system=ipm.kkt.name,
                 analysis_seconds=float(getattr(ipm.kkt.solver, "plan_seconds", 0.0)))
    if resume is not None:
        extra["resumed_at"] = resume.iteration    # the compiled path's iterations before
    fe = {}
    if ipm.final_errors is not None:
        e, ue = ipm.final_errors
        bound = bound_violation(x, lbx, ubx)
        # (with scaled variables IPOPT measures the scaled bound violation on dx x)
        sbound = bound if nlp.dx is None else bound_violation(
            x * nlp.dx, lbx * nlp.dx, ubx * nlp.dx)
        fe = dict(scaled=dict(obj=it.f, dual=e["dual"], constr=e["nlp_constr"],
                              bound=sbound, compl=e["compl"], E0=e["E0"]),
                  unscaled=dict(obj=f, dual=ue["dual"], constr=ue["constr"], bound=bound,
                                compl=ue["compl"],
                                E0=max(ue["dual"], ue["constr"], ue["compl"])))
    res = SolveResult(x=x, f=f, g=g, lam_g=lam_g, lam_x=lam_x, status=status,
                      iterations=sh.iter, message=message, timings=timings,
                      counts=dict(counter.counts), history=sh.history, final_errors=fe,
                      eval_seconds={k: tuple(v) for k, v in counter.by_kind.items()},
                      extra=extra)
    if stream is not None:
        summary(stream, res, fe.get("scaled", {}), fe.get("unscaled", {}), counter.counts,
                timings, exit_msg, opts.print_timing_statistics, rows=row_kinds(lbg, ubg),
                scaling=scaling_evaluations(opts, len(lbg)))
    return res
