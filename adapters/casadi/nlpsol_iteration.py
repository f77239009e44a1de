"""``iteration_callback``: the user's casadi Function, called at the iterates as casadi's
IPOPT interface calls it.

What casadi does (``Nlpsol::init``, ``IpoptInterface::intermediate_callback``, casadi 3.8
with IPOPT 3.14):

* the Function takes nlpsol's outputs ``x, f, g, lam_x, lam_g, lam_p`` as its inputs --
  an input of empty sparsity is not used, any other must have the output's sparsity --
  and returns one scalar; checked when the solver is built;
* IPOPT calls it at iteration k, restoration iterations included, when ``k %
  iteration_callback_step == 0``: after the iteration's log line, before the
  convergence test, so a converged solve of K iterations calls it K + 1 times (steps
  0..K).  It sees the iterate in the user's space: ``x``, the unscaled objective,
  ``g(x)``, ``lam_x = z_U - z_L`` and ``lam_g`` (unscaled, CasADi's signs); ``lam_p``
  is not given (zeros);
* a return value that is non-zero after truncation to an integer stops the solve:
  ``User_Requested_Stop`` at that iterate, which is the result;
* an exception in it is a warning ("intermediate_callback: ...") and stops the solve,
  unless ``iteration_callback_ignore_errors`` (then the solve goes on); an interrupt
  (KeyboardInterrupt) always stops.

caspar does the same through the solver's per-iteration hook (the core option
``iteration_callback``, called at the start of each iteration of the interior-point
loop, restoration runs included, with the :class:`~caspar_backend.solver.ipm.
InteriorPoint`): the hook evaluates the user's Function and a stop sets the flag that the
loop reads after logging the iteration (``Shared.interrupted``, the Ctrl-C path of
:mod:`caspar_backend.solver.interrupt`), so the iteration is logged and the solve ends
there with ``User_Requested_Stop`` -- the order IPOPT keeps.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import Callable, final

import numpy as np

import casadi as ca

from caspar_backend.arrays import host

from .interrupts import is_interrupt
from .nlpsol_io import NLPSOL_OUT
from .nlpsol_options import NlpsolOptionError


def solver_iterate(ipm) -> dict:
    """The current iterate of ``ipm`` in the user's space of the problem the solver
    solves: ``x``, ``f``, ``g``, ``lam_x``, ``lam_g`` (host float64; ``f`` a float), as
    IPOPT's ``get_curr_iterate`` gives them.  In a restoration run: the original
    problem's part of the iterate, its objective and constraints there, and the
    restoration's multipliers of those constraints and bounds."""
    nlp, it = ipm.nlp, ipm.it
    iL, iU = host(ipm.calc.iL), host(ipm.calc.iU)
    zL, zU = host(it.zL), host(it.zU)
    if ipm.resto:
        orig = nlp.orig
        w, h = nlp.original_point(it.w, it.h)
        # the bounds of the original variables come first in v; the rest are p and n's
        kl, ku = iL < orig.nw, iU < orig.nw
        iL, zL, iU, zU = iL[kl], zL[kl], iU[ku], zU[ku]
        f = orig.f(w) / orig.df
    else:
        orig, w, h = nlp, it.w, it.h
        f = it.f / nlp.df
    g = host(orig.user_g(w, h)).astype(float)
    x, lam_g, lam_x = orig.unscale(w, it.y, zL, zU, iL, iU)
    return dict(x=x, f=float(f), g=g, lam_x=lam_x, lam_g=lam_g)


@final
class IterationCallback:
    """The user's ``iteration_callback`` with its step and error handling (final).

    ``sparsity``: the sparsity of each nlpsol output, in :data:`NLPSOL_OUT` order (the
    solver's; casadi checks the Function's inputs against them)."""

    def __init__(self, fn: ca.Function, step: int, ignore_errors: bool, sparsity: list):
        # casadi's checks and messages (Nlpsol::init)
        if fn.n_out() != 1 or fn.numel_out(0) != 1:
            raise NlpsolOptionError("Callback function must return a scalar.")
        if fn.n_in() != len(NLPSOL_OUT):
            raise NlpsolOptionError("Callback input signature must match the NLP solver "
                                    "output signature")
        for i, name in enumerate(NLPSOL_OUT):
            sp = fn.sparsity_in(i)
            if sp.is_empty():
                continue
            if sp != sparsity[i]:
                raise NlpsolOptionError(
                    f"Callback function input size mismatch. For argument '{name}', "
                    f"callback has shape {sp.dim()} while NLP has {sparsity[i].dim()}.")
        self.fn, self.step, self.ignore_errors = fn, step, ignore_errors
        self.sparsity = sparsity

    def hook(self, iterate: Callable) -> Callable:
        """The solver hook: ``hook(ipm)`` calls the Function with ``iterate(ipm)`` (a
        dict of the nlpsol outputs but ``lam_p``, numeric) at the iterations the step
        selects and asks the solver to stop as the module doc says.  Its attribute
        ``tally``: ``[calls, wall seconds, process seconds]`` of the Function's calls."""

        tally = [0, 0.0, 0.0]      # calls, wall and process seconds (casadi's stats)

        def call(ipm) -> None:
            if ipm.sh.iter % self.step:
                return
            values = iterate(ipm)
            t, p = time.perf_counter(), time.process_time()
            try:
                stop = self.stops(values)
            finally:
                tally[0] += 1
                tally[1] += time.perf_counter() - t
                tally[2] += time.process_time() - p
            if stop:
                ipm.sh.interrupted = True

        call.tally = tally
        return call

    def solver_hook(self, inner, sense, simple, merged, p) -> Callable:
        """The solver hook of this callback after the solver option's own hook
        ``inner`` (None: none): :meth:`hook` on the iterate in the user's space --
        objective times ``sense``, rows split back by ``simple`` (the detected simple
        bounds, with their ``merged`` inputs and parameters ``p``) when given."""

        def iterate(ipm) -> dict:
            v = solver_iterate(ipm)
            v["f"] *= sense
            if merged is not None:
                g, lam_x, lam_g = simple.split(
                    merged, *(a[None, :] for a in (v["x"], p, v["g"], v["lam_x"],
                                                   v["lam_g"])))
                v.update(g=g[0], lam_x=lam_x[0], lam_g=lam_g[0])
            return v

        user = self.hook(iterate)
        if inner is None:
            return user

        def both(ipm):
            inner(ipm)
            user(ipm)

        both.tally = user.tally
        return both

    def stops(self, values: dict) -> bool:
        """Evaluate the Function at ``values``; whether the solve should stop."""
        args = []
        for i, name in enumerate(NLPSOL_OUT):
            sp = self.fn.sparsity_in(i)
            if sp.is_empty():
                args.append(ca.DM(sp))
                continue
            v = values.get(name)
            v = np.zeros(sp.nnz()) if v is None else np.atleast_1d(np.asarray(v, float))
            args.append(ca.DM(sp, v))
        try:
            ret = float(self.fn.call(args)[0])
        except (KeyboardInterrupt, Exception) as exc:
            if is_interrupt(exc):
                return True
            warnings.warn(f"intermediate_callback: {exc}", RuntimeWarning, stacklevel=2)
            return not self.ignore_errors
        # casadi truncates the value to an integer (static_cast<casadi_int>)
        return not math.isfinite(ret) or int(ret) != 0
