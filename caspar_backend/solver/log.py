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


def summary(stream, res, scaled, unscaled, counts, timings, exit_message, print_timing):
    """IPOPT's closing block (iteration count, scaled/unscaled errors, counts, timing,
    EXIT line)."""
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
    for label, key in (("objective function evaluations            ", "obj"),
                       ("objective gradient evaluations            ", "grad"),
                       ("equality constraint evaluations           ", "cons"),
                       ("inequality constraint evaluations         ", "cons"),
                       ("equality constraint Jacobian evaluations  ", "jac"),
                       ("inequality constraint Jacobian evaluations", "jac"),
                       ("Lagrangian Hessian evaluations            ", "hess")):
        w(f"Number of {label}  = {counts.get(key, 0)}\n")
    w(f"Total seconds in caspar (IPOPT algorithm)         = {timings['total']:.3f}\n")
    if print_timing:
        w("\nTiming statistics:\n")
        for k in ("setup", "function_evaluations", "kkt_factorization", "kkt_solve",
                  "other"):
            w(f"  {k:<28s} = {timings[k]:10.3f} s\n")
    w(f"\nEXIT: {exit_message}\n")
