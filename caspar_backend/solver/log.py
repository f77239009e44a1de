"""IPOPT-format output: the iteration table and the final summary block."""

from __future__ import annotations

import math

HEADER = ("iter    objective    inf_pr   inf_du lg(mu)  ||d||  lg(rg) alpha_du "
          "alpha_pr  ls")


def _lg(v):
    return f"{math.log10(v):5.1f}" if v > 0 else "   - "


class IterationLog:
    """Final.  Writes one line per iteration to ``stream``, the header every 10 lines;
    with ``every`` = k (print_frequency_iter) only iterations whose number k divides,
    as IPOPT's OrigIterationOutput."""

    def __init__(self, stream, every=1):
        self.stream = stream
        self.lines = 0
        self.every = every

    def write(self, text=""):
        self.stream.write(text + "\n")

    def iteration(self, r):
        if r.iter % self.every:
            return
        if self.lines % 10 == 0:
            self.write(HEADER)
        self.lines += 1
        tag = r.step_type if r.step_type.strip() else " "
        self.write(f"{r.iter:4d}{'r' if r.restoration else ' '}{r.objective:14.7e} "
                   f"{r.inf_pr:8.2e} {r.inf_du:8.2e} {_lg(r.mu)} {r.d_norm:8.2e} "
                   f"{_lg(r.regularization) if r.regularization > 0 else '   - '} "
                   f"{r.alpha_du:8.2e} {r.alpha_pr:8.2e}{tag}{r.ls:3d}")


def user_options(stream, opts):
    """IPOPT's "List of user-set options" block, when ``print_user_options`` asks for it."""
    if opts.print_user_options and opts.user:
        stream.write("List of user-set options:\n")
        for k, v in opts.user.items():
            stream.write(f"  {k:<40s} = {v!r}\n")


def bound_violation(x, lbx, ubx) -> float:
    """IPOPT's "Variable bound violation": how far ``x`` lies outside the user's bounds
    (max-norm; the iterates keep within the bounds relaxed by bound_relax_factor, so
    this is at most that relaxation unless honor_original_bounds projects x)."""
    import numpy as np

    x = np.asarray(x, float)
    if not x.size:
        return 0.0
    with np.errstate(invalid="ignore"):
        v = np.maximum(np.asarray(lbx, float) - x, x - np.asarray(ubx, float))
    return float(max(0.0, np.nanmax(v)))


def row_kinds(lbg, ubg) -> tuple[int, int]:
    """``(equalities, inequalities)``: rows with ``lbg == ubg`` and the others."""
    import numpy as np

    n_eq = int(np.count_nonzero(np.asarray(lbg) == np.asarray(ubg)))
    return n_eq, len(lbg) - n_eq


def scaling_evaluations(opts, m: int) -> dict:
    """The evaluations the gradient-based NLP scaling makes at x0 -- one objective
    gradient, one constraint Jacobian when there are constraints -- by kind.  IPOPT's
    GradientScaling calls the NLP directly, outside the counters its summary prints
    (OrigIpoptNLP's), so :func:`summary` leaves them out; the counts a solve returns
    (``SolveResult.counts``, CasADi's ``n_call_nlp_*``) keep them, as every call."""
    if opts.nlp_scaling_method != "gradient-based":
        return {}
    return {"grad": 1, "jac": 1 if m else 0}


def summary(stream, res, scaled, unscaled, counts, timings, exit_message, print_timing,
            rows=None, scaling=None):
    """IPOPT's closing block (iteration count, scaled/unscaled errors, counts, timing,
    EXIT line).  ``rows`` = :func:`row_kinds`: as IPOPT, which evaluates its equality
    and inequality constraints apart, a kind the problem has none of counts no
    evaluations (None: both counted).  ``scaling``: :func:`scaling_evaluations`, left
    out of the printed counts as IPOPT does."""
    w = stream.write
    w(f"\nNumber of Iterations....: {res.iterations}\n\n")
    w("                                   (scaled)                 (unscaled)\n")
    for label, key in (("Objective...............", "obj"),
                       ("Dual infeasibility......", "dual"),
                       ("Constraint violation....", "constr"),
                       ("Variable bound violation", "bound"),
                       ("Complementarity.........", "compl"),
                       ("Overall NLP error.......", "E0")):
        w(f"{label}:  {scaled.get(key, 0.0): .16e}   {unscaled.get(key, 0.0): .16e}\n")
    w("\n\n")
    n_eq, n_in = rows if rows is not None else (1, 1)
    for label, key, has in (("objective function evaluations            ", "obj", True),
                            ("objective gradient evaluations            ", "grad", True),
                            ("equality constraint evaluations           ", "cons", n_eq),
                            ("inequality constraint evaluations         ", "cons", n_in),
                            ("equality constraint Jacobian evaluations  ", "jac", n_eq),
                            ("inequality constraint Jacobian evaluations", "jac", n_in),
                            ("Lagrangian Hessian evaluations            ", "hess", True)):
        n = counts.get(key, 0) - (scaling or {}).get(key, 0)
        w(f"Number of {label} = {n if has else 0}\n")
    w(f"Total seconds in caspar (IPOPT algorithm)         = {timings['total']:.3f}\n")
    if print_timing:
        w("\nTiming statistics:\n")
        for k in ("setup", "function_evaluations", "kkt_factorization", "kkt_solve",
                  "other"):
            w(f"  {k:<28s} = {timings[k]:10.3f} s\n")
    w(f"\nEXIT: {exit_message}\n")


def problem_statistics(print_level, linear_solver, jac, hess, lbx, ubx, lbg, ubg) -> str:
    """IPOPT's block before the iteration table (IpoptAlg's problem statistics), as text:
    at ``print_level`` >= 5 the version line and the nonzeros of the equality and the
    inequality constraint Jacobian and of the Lagrangian Hessian's lower triangle, at
    >= 3 the variables and constraints counted by their finite bounds; '' below 3.

    ``jac`` = (rows, cols) the duplicate-free Jacobian COO, ``hess`` = (rows, cols) the
    lower-triangle Hessian COO (a duplicate counted once), int64; the bounds float64
    with infinite sides as +-inf.  As IPOPT's default
    ``fixed_variable_treatment`` (make_parameter), a variable with ``lbx == ubx`` is not
    a variable: left out of the counts and of the nonzeros; a row with ``lbg == ubg`` is
    an equality."""
    import numpy as np

    from ..version import __version__

    if print_level < 3:
        return ""
    lbx, ubx, lbg, ubg = (np.asarray(v, float) for v in (lbx, ubx, lbg, ubg))
    fixed = lbx == ubx
    eq = lbg == ubg

    def distinct(rows, cols, keep):
        # pairs counted once, by one sort (NumPy's unique on 10^7 keys is ~50x slower)
        k = np.sort(rows[keep] * (len(lbx) + 1) + cols[keep])
        return int(k.size and 1 + np.count_nonzero(k[1:] != k[:-1]))

    def sides(lo, hi):
        lo, hi = np.isfinite(lo), np.isfinite(hi)
        return int(np.sum(lo & ~hi)), int(np.sum(lo & hi)), int(np.sum(~lo & hi))

    out = []
    if print_level >= 5:
        jr, jc = (np.asarray(a, np.int64) for a in jac)
        hr, hc = (np.asarray(a, np.int64) for a in hess)
        jfree = ~fixed[jc]
        hfree = ~fixed[hr] & ~fixed[hc]
        # (the Jacobian's COO has no duplicates, the evaluators' contract; the
        # Hessian's may, summed by the consumer)
        out += [f"This is caspar version {__version__}, running with linear solver "
                f"{linear_solver}.", "",
                f"Number of nonzeros in equality constraint Jacobian...: "
                f"{int(np.count_nonzero(jfree & eq[jr])):8d}",
                f"Number of nonzeros in inequality constraint Jacobian.: "
                f"{int(np.count_nonzero(jfree & ~eq[jr])):8d}",
                f"Number of nonzeros in Lagrangian Hessian.............: "
                f"{distinct(hr, hc, hfree):8d}", ""]
    free = ~fixed
    vl, vb, vu = sides(lbx[free], ubx[free])
    cl, cb, cu = sides(lbg[~eq], ubg[~eq])
    out += [f"Total number of variables............................: {int(free.sum()):8d}",
            f"                     variables with only lower bounds: {vl:8d}",
            f"                variables with lower and upper bounds: {vb:8d}",
            f"                     variables with only upper bounds: {vu:8d}",
            f"Total number of equality constraints.................: {int(eq.sum()):8d}",
            f"Total number of inequality constraints...............: {int((~eq).sum()):8d}",
            f"        inequality constraints with only lower bounds: {cl:8d}",
            f"   inequality constraints with lower and upper bounds: {cb:8d}",
            f"        inequality constraints with only upper bounds: {cu:8d}", ""]
    return "\n".join(out) + "\n"


def iteration_record(ipm, e, ue):
    """The :class:`~.result.IterationRecord` of ``ipm``'s current iterate (an
    :class:`~.ipm.InteriorPoint`; errors ``e``, unscaled ``ue``): during restoration
    IPOPT's log shows the original problem's objective and constraint violation and the
    restoration problem's dual infeasibility."""
    from .result import IterationRecord

    info, nlp, it = ipm.info, ipm.nlp, ipm.it
    obj = it.f / nlp.df
    constr = ue["constr"]
    if ipm.resto:
        obj = nlp.original_objective(it.w)
        constr = nlp.original_constr_viol(it.w, it.h)
    return IterationRecord(ipm.sh.iter, obj, constr, e["dual"], ipm.barrier.mu,
                           info.d_norm, info.delta_w, info.alpha_du, info.alpha_pr,
                           info.ls, info.tag, ipm.resto)
