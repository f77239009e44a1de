"""IPOPT options caspar accepts without having IPOPT's machinery behind them.

Rule: a script written for IPOPT never fails on an option IPOPT knows.  Where caspar
does something else, :func:`warn_substitutions` says so through :func:`warnings.warn`
(naming the option and what caspar does instead, at the user's line:
:mod:`caspar_backend.user_warnings`) and the solve goes on:

* ``linear_solver`` with one of IPOPT's names caspar does not have (ma27, mumps, ...),
  or 'pardisomkl' where Intel MKL is not installed: caspar's own solver of the device
  (qdldl on the CPU, cudss on CUDA) -- without a warning for 'mumps', IPOPT's default
  (a script that names it asks for what an unset option gives);
* ``fixed_variable_treatment`` 'make_constraint': make_parameter.

Also here: the output tee for ``output_file`` (:func:`open_output`) and the
``derivative_test`` run before the solve (:func:`run_derivative_test`).
"""

from __future__ import annotations

import numpy as np

from ..user_warnings import warn
from .linear_solver_names import CASPAR_LINEAR_SOLVERS, IPOPT_LINEAR_SOLVERS


def substituted(name) -> bool:
    """Whether the user's ``linear_solver`` is an IPOPT name caspar cannot run here (the
    device's own solver runs in its place: :func:`linear_solver_for`)."""
    if name == "pardisomkl":
        from ..linsolve.pardiso_mkl import pardiso_available

        return not pardiso_available()
    return name in IPOPT_LINEAR_SOLVERS and name not in CASPAR_LINEAR_SOLVERS


def linear_solver_for(opts, device: str) -> str:
    """The linear solver a solve uses: the user's name where caspar has it, else the
    device's own (an IPOPT name caspar cannot run counts as unset)."""
    name = opts.linear_solver if "linear_solver" in opts.user else None
    if substituted(name):
        name = None
    return name or ("cudss" if device == "cuda" else "qdldl")


def warn_substitutions(opts, linear_solver: str) -> None:
    """One warning per IPOPT option value caspar replaces by its own behaviour."""
    name = opts.user.get("linear_solver")
    # (not for 'mumps': IPOPT's default, which a script that sets it explicitly asks
    # for no more than one that leaves it unset -- caspar's solver runs for both)
    if substituted(name) and name != "mumps":
        why = ("needs Intel MKL (pip install 'caspar-backend[mkl]')"
               if name == "pardisomkl" else "is not available in caspar")
        warn(f"linear_solver={name!r} {why}; using caspar's {linear_solver!r}")
    fvt = opts.fixed_variable_treatment
    if fvt == "make_constraint":
        warn(f"fixed_variable_treatment={fvt!r} is not implemented in caspar; "
             f"fixed variables are treated as 'make_parameter'")


class _Tee:
    """Final.  A write-only stream copying every write to each of its streams."""

    def __init__(self, streams):
        self.streams = [s for s in streams if s is not None]

    def write(self, text):
        for s in self.streams:
            s.write(text)
        return len(text)

    def flush(self):
        for s in self.streams:
            if hasattr(s, "flush"):
                s.flush()


def open_output(opts, stream):
    """``(stream, file)``: the stream the solve writes to (None: nothing is printed)
    and the ``output_file`` handle to close afterwards (None when none).  As IPOPT,
    the console gets output at print_level > 0 and the file at file_print_level > 0;
    caspar's levels are on/off (>= 1 summary and iteration log)."""
    console = stream if opts.print_level > 0 else None
    fh = None
    if opts.output_file and opts.file_print_level > 0:
        fh = open(opts.output_file, "a" if opts.file_append else "w", encoding="utf-8")
    if fh is None:
        return console, None
    return (_Tee([console, fh]) if console is not None else fh), fh


def run_derivative_test(evaluator, x0, opts, stream):
    """IPOPT's derivative_test at the starting point (projected into the bounds by the
    caller): the finite-difference check of :mod:`caspar_backend.derivative_check`,
    printed to ``stream``; returns the report (None when not run).  Host evaluators
    only: on CUDA it is skipped with a warning."""
    mode = opts.derivative_test
    if mode == "none":
        return None
    if getattr(evaluator, "device", "cpu") != "cpu":
        warn(f"derivative_test={mode!r} runs on host evaluators only; skipped on "
             f"{evaluator.device!r}")
        return None
    from ..derivative_check import check_derivatives

    rep = check_derivatives(evaluator, np.asarray(x0, dtype=float),
                            tol=opts.derivative_test_tol,
                            step=opts.derivative_test_perturbation,
                            hessian=mode != "first-order",
                            keep_all=opts.derivative_test_print_all)
    if mode == "only-second-order":
        rep.errors = [e for e in rep.errors if e[0] == "hess"]
        rep.entries = [e for e in rep.entries if e[0] == "hess"]
    if stream is not None:
        stream.write(f"Starting derivative checker ({mode}).\n\n")
        # IPOPT's lines: '*' marks an entry above derivative_test_tol; with
        # derivative_test_print_all every entry compared is listed
        shown = rep.entries if opts.derivative_test_print_all else rep.errors
        for kind, row, col, a, f, rel in shown:
            bad = rel > opts.derivative_test_tol or not np.isfinite(a)     # (errors' rule)
            stream.write(f"{'*' if bad else ' '} {kind}[{row},{col}] = {a: .16e} v  ~ "
                         f"{f: .16e}  [{rel: .3e}]\n")
        stream.write("\nNo errors detected by derivative checker.\n\n" if rep.ok else
                     f"\nDerivative checker detected {len(rep.errors)} error(s).\n\n")
    return rep
