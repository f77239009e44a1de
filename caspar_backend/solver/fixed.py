"""IPOPT's treatment of fixed variables (``lbx == ubx``), option ``fixed_variable_treatment``.

* ``make_parameter`` (the default) and ``make_parameter_nodual``: the variable leaves the
  problem, its value is its bound (:class:`~.nlp.SlackNLP`; its multiplier is minus its
  reduced gradient, or 0 with ``_nodual``).
* ``relax_bounds``: the variable stays, its bounds relaxed so that the interior is not
  empty.  IPOPT's TNLPAdapter::GetBoundsInformation relaxes by ``r max(1, |b|)``, ``r =
  max(1e-8, bound_relax_factor)``, and every bound is then relaxed as any other
  (:mod:`.relaxation`).  IPOPT's loop runs over the first ``n_fixed`` indices rather
  than over the fixed variables (``x_l[i]``, not ``x_l[x_fixed_map_[i]]``), so a fixed
  variable beyond them gets the ordinary relaxation alone; kept here, for IPOPT's
  iterates.
* IPOPT switches ``make_parameter`` to ``relax_bounds`` when removing the fixed
  variables leaves fewer free variables than equality constraints (``0 < n_x < n_c``),
  with a warning in its log; a problem of fixed variables only keeps ``make_parameter``
  (its constraints are checked at the bounds).

``make_constraint`` is not implemented (a warning; ``make_parameter`` instead).
"""

from __future__ import annotations

import numpy as np


def fixed_variables(lbx, ubx, lbg, ubg, opts, stream=None):
    """``(lbx, ubx, keep_fixed)``: the variable bounds the solve uses and whether the
    fixed variables stay in the problem (module doc; the arrays are new where changed).
    ``stream``: the log, which gets IPOPT's warning of a switch."""
    fixed = lbx == ubx
    n_fixed = int(np.count_nonzero(fixed))
    n_var = len(lbx) - n_fixed
    if n_fixed == 0 or n_var == 0:
        return lbx, ubx, False
    relax = opts.fixed_variable_treatment == "relax_bounds"
    if not relax:
        n_c = int(np.count_nonzero(lbg == ubg))
        if n_var >= n_c:
            return lbx, ubx, False
        if stream is not None:
            stream.write(f"Too few degrees of freedom (n_x = {n_var}, n_c = {n_c}).\n"
                         "  Trying fixed_variable_treatment = RELAX_BOUNDS\n\n")
    r = max(1e-8, opts.bound_relax_factor)
    head = fixed.copy()
    head[n_fixed:] = False               # IPOPT's loop over indices 0 .. n_fixed - 1
    lbx, ubx = lbx.copy(), ubx.copy()
    lbx[head] -= r * np.maximum(1.0, np.abs(lbx[head]))
    ubx[head] += r * np.maximum(1.0, np.abs(ubx[head]))
    return lbx, ubx, True
