"""Levenberg-Marquardt in the manner of Ceres' ``TrustRegionMinimizer``.

The problem (:mod:`caspar_backend.lsq.problem`): ``min 1/2 sum_b rho(|r_b(x)|^2)`` over
the free variables, ``lbx <= x <= ubx``.  One iteration, with J and r the corrected
Jacobian and residuals (:class:`~caspar_backend.lsq.losses.Corrector`) at x:

1. **Jacobi scaling** (once, at the starting point): ``S = diag(1 / (1 + |J_col|))``;
   the minimizer works with ``J S``.
2. **Step**: ``d = sqrt(clamp(diag((JS)^T JS), min_lm_diagonal, max_lm_diagonal) /
   radius)`` (the diagonal is recomputed only after a successful step), and
   ``y`` solves ``((JS)^T JS + diag(d)^2) y = -(JS)^T r`` (:mod:`~caspar_backend.lsq.
   linear_solvers`, :mod:`~caspar_backend.lsq.schur`); the model decrease is
   ``m = -(JS y)^T (r + JS y / 2)``.  A failed solve or ``m <= 0`` is an *invalid*
   step: the radius shrinks; ``max_num_consecutive_invalid_steps`` of them is FAILURE.
3. **Candidate** ``x+ = P(x + S y)`` (P: projection onto the bounds).
   CONVERGENCE when ``|x+ - x| <= parameter_tolerance (|x| + parameter_tolerance)``
   or ``|F(x) - F(x+)| <= function_tolerance F(x)`` (x is kept, as Ceres does).
4. **Ratio** ``rho = (F(x) - F(x+)) / m``.  ``rho > min_relative_decrease``: accept,
   ``radius = min(max_radius, radius / max(1/3, 1 - (2 rho - 1)^3))``, the factor
   back to 2; else ``radius /= factor``, ``factor *= 2``.
   An iteration that ends the solve by a tolerance (or a FAILURE) is not recorded in
   ``Summary.iterations``, as in Ceres, so iteration counts compare one to one.
5. After an accepted step, CONVERGENCE when ``|x - P(x - g)|_inf <=
   gradient_tolerance`` (g = J^T r), or when the radius falls below
   ``min_trust_region_radius``; NO_CONVERGENCE after ``max_num_iterations``.

Bounds: Ceres projects bounded steps and then runs a line search along them.  caspar
projects, and holds the variables that sit on a bound with the gradient pointing
outward out of the step (an active set, by a huge damping term in D), so that the
other variables' step is not bent toward a bound that cuts it.
"""

from __future__ import annotations

import dataclasses
import time
from functools import partial

import numpy as np

from ..errors import ModelError
from . import summary as S
from .jacobian import SparseJacobian
from .options import DENSE_SCHUR_LIMIT, DENSE_SCHUR_MAX, solver_options
from .step_solvers import (make_device_step_solver, make_step_solver, step_solver_pool,
                           structures_key)


#: damping of variables held at an active bound for one step (their step ~ g / d^2 ~ 0)
ACTIVE_BOUND_DAMPING = 1e12


def solve_structures(problem, ev, lbx, ubx, ordering=None, xp=np):
    """``(pattern, jac, schur structure or None)`` of a solve with these fixed variables
    and this ``linear_solver_ordering`` (None: the structure detected from the pattern):
    pure index structures, kept in the compiled evaluator's structure cache (a re-solve
    with new data, start or bound values builds none of them again).  On the GPU
    (``xp`` CuPy) ``pattern`` and ``jac`` are one
    :class:`~caspar_backend.lsq.device_pattern.DevicePattern`, and with an ordering the
    structure is built on the device too."""
    from .ordering import structure_from_ordering
    from .structure import detect_schur_structure, reduced_block_density

    fixed = np.asarray(lbx) == np.asarray(ubx)

    def build():
        if xp is np:
            pattern = problem.reduced_pattern(lbx, ubx, ev)
            jac = SparseJacobian(pattern)
            csr = (jac.indptr, jac.indices)
        else:
            from .device_pattern import DevicePattern

            pattern = jac = DevicePattern(ev, lbx, ubx, problem.m, xp)
        if ordering is not None:
            st = structure_from_ordering(pattern, ordering, problem.n, xp)
        elif xp is not np:
            host = pattern.host()
            h = SparseJacobian(host)
            st = detect_schur_structure(host, csr=(h.indptr, h.indices))
        else:
            st = detect_schur_structure(pattern, csr=csr)
        if xp is np and st is not None and DENSE_SCHUR_MAX < st.n_f <= DENSE_SCHUR_LIMIT:
            # the automatic choice's measure, kept with the structure
            st = dataclasses.replace(st, density=reduced_block_density(pattern, st))
        return pattern, jac, st

    cache = ev.structure_cache
    return build() if cache is None else cache.get(structures_key(fixed, ordering, xp), build)


class _Evaluation:
    """Residuals, cost and (optionally) Jacobian values at one point (internal)."""

    __slots__ = ("r", "cost", "vals", "raw")


def minimize(problem, x0=None, p=None, lbx=None, ubx=None, options=None, **kw):
    """Solve ``problem`` (a :class:`~caspar_backend.lsq.problem.LeastSquaresProblem`);
    see the module docstring.  Returns a :class:`~caspar_backend.lsq.summary.Summary`.
    BLAS runs single-threaded meanwhile (:func:`~caspar_backend.linsolve.blas_threads.
    single_threaded_blas`)."""
    from ..compiled.dispatch import record_solve
    from ..linsolve.blas_threads import single_threaded_blas

    try:
        with single_threaded_blas():
            return _minimize(problem, x0, p, lbx, ubx, options, **kw)
    finally:
        record_solve()      # a later solve may load the tape evaluator (cpu_evaluator)


def _minimize(problem, x0, p, lbx, ubx, options, **kw):
    from ..model import as_vector, check_bounds

    t_start = time.perf_counter()
    opts = solver_options(options, **kw)
    n = problem.n
    lbx = problem.lbx if lbx is None else as_vector("lbx", lbx, n)
    ubx = problem.ubx if ubx is None else as_vector("ubx", ubx, n)
    names = problem.model.var_names
    check_bounds(lbx, ubx, names, "variable", ("lbx", "ubx"))
    x = as_vector("x0", problem.x0 if x0 is None else x0, n)
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise ModelError(f"variable {names[bad[0]]} has a non-finite initial value "
                         f"{float(x[bad[0]])!r} (x0[{bad[0]}])")
    np.clip(x, lbx, ubx, out=x)
    from ..device import resolve_device

    resolve_device(opts.device)           # a DeviceError when no usable GPU
    ev = problem.evaluator(opts.device, p=None if p is None else np.asarray(p, dtype=float))
    if ev.xp is np:
        from ..compiled.dispatch import general_cpu_evaluator

        ev = general_cpu_evaluator(ev, opts.cpu_evaluator)
    xp = ev.xp
    pattern, jac, structure = solve_structures(problem, ev, lbx, ubx,
                                               opts.linear_solver_ordering, xp)
    free, keep, rows, cols = pattern.free, pattern.keep, pattern.rows, pattern.cols
    J = jac
    pool = None
    if xp is np:
        lo, hi = lbx[free], ubx[free]
        pool = step_solver_pool(ev, lbx, ubx, opts)
        build = partial(make_step_solver, opts.linear_solver_type, jac, pattern, structure,
                        opts)
        solver, structure = kept = build() if pool is None else pool.take(build)
    else:
        lo, hi = xp.asarray(lbx)[free], xp.asarray(ubx)[free]
        solver, structure = make_device_step_solver(opts.linear_solver_type, jac, structure, xp,
                                                    opts)
        x = xp.asarray(x)
    bounded = bool(xp.any(xp.isfinite(lo)) or xp.any(xp.isfinite(hi)))
    loss, block, nb = problem.loss, problem.residual_block_of_row, problem.num_residual_blocks
    pairs = None
    if loss is not None:
        # the correction runs where the residuals are (a GPU solve: on the device)
        block = xp.asarray(block)
        if loss.positive_curvature:
            from .losses import block_column_pairs

            _check_uniform_blocks(pattern, block, xp)
            pairs = block_column_pairs(block, rows, cols, pattern.n)
    m = problem.m
    r_buf = xp.empty(m)
    jac_buf = xp.empty(ev.nnz_jac)
    timing = dict(res=0.0, jac=0.0, lin=0.0, n_res=0, n_jac=0)

    def evaluate(xv, with_jacobian: bool, raw=None):
        """Cost, corrected residuals and (optionally) Jacobian at ``xv``; ``raw``: the
        residuals at ``xv`` when known (an accepted trial point's)."""
        t0 = time.perf_counter()
        e = _Evaluation()
        r = xp.array(ev.cons(xv, r_buf), dtype=float, copy=True) if raw is None else raw.copy()
        e.raw = r.copy() if with_jacobian is False else None
        corr = None
        if loss is None:
            e.cost = 0.5 * float(r @ r)
        else:
            from .losses import Corrector

            corr = Corrector(loss, r, block, nb)
            e.cost = corr.cost
        if not np.isfinite(e.cost):
            e.cost = np.inf
        e.vals = None
        if with_jacobian:
            vals = xp.asarray(ev.jac_values(xv, jac_buf))[keep]
            if corr is not None:
                vals = corr.jacobian(vals, rows, cols, pattern.n, pairs)
                r = corr.residuals(r)
            e.vals = vals
            timing["jac"] += time.perf_counter() - t0
            timing["n_jac"] += 1
        else:
            timing["res"] += time.perf_counter() - t0
            timing["n_res"] += 1
        e.r = r
        return e

    def projected_gradient_norm(xf, g):
        step = xf - xp.clip(xf - g, lo, hi) if bounded else g
        return float(xp.max(xp.abs(step))) if step.size else 0.0

    t_pre = time.perf_counter() - t_start
    t_min0 = time.perf_counter()
    iterations = []
    cur = evaluate(x, True)
    if not (np.isfinite(cur.cost) and bool(xp.all(xp.isfinite(cur.vals)))):
        out = _summary(problem, x, cur.cost, cur.cost, S.FAILURE,
                       "Residual and Jacobian evaluation failed (non-finite value at x0).",
                       1, 0, pattern, solver, structure, iterations, timing, t_start, t_pre,
                       t_min0)
        if pool is not None:
            pool.give(kept)
        return out
    initial_cost = cur.cost
    grad = J.rmatvec(cur.vals, cur.r)
    scale = (1.0 / (1.0 + xp.sqrt(J.column_norms_sq(cur.vals))) if opts.jacobi_scaling
             else xp.ones(pattern.n))
    vals_s = cur.vals * scale[cols]
    radius, factor, reuse_diag, diag = opts.initial_trust_region_radius, 2.0, False, None
    info = S.IterationSummary(0, cur.cost, gradient_max_norm=projected_gradient_norm(
        x[free], grad), trust_region_radius=radius)
    n_ok, n_bad, n_invalid = 0, 0, 0
    it_t0 = time.perf_counter()
    status, message = S.NO_CONVERGENCE, ""
    while True:
        # ---- finalize the last iteration, then the stopping tests Ceres makes there
        if info.step_is_successful:
            n_ok += 1
        else:
            n_bad += 1
        info.trust_region_radius = radius
        now = time.perf_counter()
        info.iteration_time_in_seconds = now - it_t0
        info.cumulative_time_in_seconds = now - t_start
        iterations.append(info)
        if opts.minimizer_progress_to_stdout:
            if info.iteration == 0:
                print(S.IterationSummary.HEADER)
            print(info.line(), flush=True)
        if now - t_start >= opts.max_solver_time_in_seconds:
            message = (f"Maximum solver time reached. Total solver time: {now - t_start:e} >= "
                       f"{opts.max_solver_time_in_seconds:e}.")
            break
        if info.iteration >= opts.max_num_iterations:
            message = f"Maximum number of iterations reached. Number of iterations: {info.iteration}."
            break
        if info.step_is_successful and info.gradient_max_norm <= opts.gradient_tolerance:
            status = S.CONVERGENCE
            message = (f"Gradient tolerance reached. Gradient max norm: "
                       f"{info.gradient_max_norm:e} <= {opts.gradient_tolerance:e}")
            break
        if radius <= opts.min_trust_region_radius:
            status = S.CONVERGENCE
            message = (f"Minimum trust region radius reached. Trust region radius: {radius:e} "
                       f"<= {opts.min_trust_region_radius:e}")
            break

        it_t0 = time.perf_counter()
        last = info
        info = S.IterationSummary(last.iteration + 1, cur.cost, step_is_valid=False,
                                  step_is_successful=False,
                                  gradient_max_norm=last.gradient_max_norm)
        # ---- the trust-region step
        if not reuse_diag:
            diag = xp.clip(J.column_norms_sq(vals_s), opts.min_lm_diagonal,
                           opts.max_lm_diagonal)
        d = xp.sqrt(diag / radius)
        if bounded:
            # variables on a bound that the gradient pushes outward sit out this step
            # (a huge damping term): the projection would cut their step to zero anyway,
            # and leaving them in would bend the others' step toward the bound
            xf = x[free]
            out = ((xf <= lo) & (grad > 0)) | ((xf >= hi) & (grad < 0))
            if bool(out.any()):
                d = d.copy()
                d[out] = ACTIVE_BOUND_DAMPING * max(1.0, float(d.max()))
        t0 = time.perf_counter()
        y = solver.solve(vals_s, cur.r, d)
        timing["lin"] += time.perf_counter() - t0
        reuse_diag = True
        model_change = 0.0
        if y is not None:
            jy = J.matvec(vals_s, y)
            model_change = -float(jy @ (cur.r + 0.5 * jy))
            info.step_is_valid = model_change > 0.0
        if not info.step_is_valid:
            n_invalid += 1
            if n_invalid >= opts.max_num_consecutive_invalid_steps:
                status = S.FAILURE
                message = ("Number of consecutive invalid steps more than "
                           "max_num_consecutive_invalid_steps: "
                           f"{opts.max_num_consecutive_invalid_steps}")
                break
            radius, factor = radius / factor, factor * 2.0
            continue
        n_invalid = 0
        xf = x[free]
        cand_f = xf + y * scale
        if bounded:
            xp.clip(cand_f, lo, hi, out=cand_f)
        info.step_norm = float(xp.linalg.norm(cand_f - xf))
        x_norm = float(xp.linalg.norm(x))
        if info.step_norm <= opts.parameter_tolerance * (x_norm + opts.parameter_tolerance):
            status = S.CONVERGENCE
            message = (f"Parameter tolerance reached. Relative step_norm: "
                       f"{info.step_norm / (x_norm + opts.parameter_tolerance):e} <= "
                       f"{opts.parameter_tolerance:e}.")
            break
        cand = x.copy()
        cand[free] = cand_f
        trial = evaluate(cand, False)
        info.cost_change = cur.cost - trial.cost
        if abs(info.cost_change) <= opts.function_tolerance * cur.cost:
            status = S.CONVERGENCE
            message = (f"Function tolerance reached. |cost_change|/cost: "
                       f"{abs(info.cost_change) / cur.cost if cur.cost else 0.0:e} <= "
                       f"{opts.function_tolerance:e}")
            break
        info.relative_decrease = info.cost_change / model_change
        if info.relative_decrease > opts.min_relative_decrease:
            x = cand
            new = evaluate(x, True, raw=trial.raw)
            if not bool(xp.all(xp.isfinite(new.vals))):
                status, message = S.FAILURE, "Residual and Jacobian evaluation failed."
                iterations.append(info)
                break
            cur = new
            vals_s = cur.vals * scale[cols]
            grad = J.rmatvec(cur.vals, cur.r)
            info.cost = cur.cost
            info.gradient_max_norm = projected_gradient_norm(x[free], grad)
            info.step_is_successful = True
            q = info.relative_decrease
            radius = min(opts.max_trust_region_radius,
                         radius / max(1.0 / 3.0, 1.0 - (2.0 * q - 1.0) ** 3))
            factor, reuse_diag = 2.0, False
        else:
            radius, factor = radius / factor, factor * 2.0
            reuse_diag = True
    out = _summary(problem, x, initial_cost, cur.cost, status, message, n_ok, n_bad, pattern,
                   solver, structure, iterations, timing, t_start, t_pre, t_min0)
    if pool is not None:
        pool.give(kept)     # (not after an exception: a solver left mid-solve is dropped)
    return out


def _summary(problem, x, initial_cost, final_cost, status, message, n_ok, n_bad, pattern,
             solver, structure, iterations, timing, t_start, t_pre, t_min0):
    from ..arrays.xp import host

    x = host(x)                             # a GPU solve's answer, to the host
    now = time.perf_counter()
    return S.Summary(
        x=x, initial_cost=initial_cost, final_cost=final_cost, termination_type=status,
        message=message, num_successful_steps=n_ok, num_unsuccessful_steps=n_bad,
        num_residuals=problem.m, num_parameters=problem.n, num_effective_parameters=pattern.n,
        linear_solver_type=solver.name,
        num_eliminated_blocks=0 if structure is None else structure.n_e_blocks,
        num_eliminated_parameters=0 if structure is None else structure.n_e,
        preprocessor_time_in_seconds=t_pre, minimizer_time_in_seconds=now - t_min0,
        total_time_in_seconds=now - t_start,
        residual_evaluation_time_in_seconds=timing["res"],
        jacobian_evaluation_time_in_seconds=timing["jac"],
        linear_solver_time_in_seconds=timing["lin"], iterations=iterations,
        num_residual_evaluations=timing["n_res"], num_jacobian_evaluations=timing["n_jac"],
        loss="TRIVIAL" if problem.loss is None else repr(problem.loss))


def _check_uniform_blocks(pattern, block, xp) -> None:
    """The rank-one loss correction keeps J's pattern only when every row of a residual
    block has the block's columns: check it (ModelError otherwise).  ``block`` and the
    pattern's arrays in ``xp``."""
    blk = block[pattern.rows]
    per_row = xp.bincount(pattern.rows, minlength=pattern.m)
    pairs = xp.unique(blk * max(pattern.n, 1) + pattern.cols)
    per_block = xp.bincount(pairs // max(pattern.n, 1), minlength=int(block.max()) + 1)
    if bool(xp.any(per_row != per_block[block])):
        raise ModelError("a loss with positive curvature needs every row of a residual block "
                         "to depend on the same variables")
