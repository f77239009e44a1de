"""Write an AMPL ``.sol`` file (text), as ASL's ``write_sol`` does for IPOPT's driver.

Layout (what AMPL and Pyomo's reader, ``pyomo/opt/plugins/sol.py``, read)::

    <message lines>
    <empty line>
    Options
    3            # number of ASL options that follow
    1            #   (ASL's option words: 1, 1, 0)
    1
    0
    m            # constraints, duals written
    m
    n            # variables, primals written
    n
    <m dual values>
    <n primal values>
    objno 0 <solve_result_num>
    suffix 4 <count> <len(name) + 1> 0 0      # real-valued variable suffix
    <name>
    <index value>  (count lines)

Duals are AMPL's: ``dF*/d rhs`` of the user's objective F; the suffixes are IPOPT's
``ipopt_zL_out`` / ``ipopt_zU_out`` (signs in adapters/pyomo/results.py).  Numbers are
written with ``repr`` (17 significant digits: the solver's doubles exactly).
"""

from __future__ import annotations

import numpy as np


def _values(a) -> str:
    return "".join(f"{float(v)!r}\n" for v in np.asarray(a, dtype=float).ravel())


def sol_text(message: str, duals, x, solve_result_num: int, var_suffixes=()) -> str:
    """The ``.sol`` file's text: ``duals`` (m), ``x`` (n), the AMPL code and
    ``var_suffixes``: ``(name, values)`` pairs of real-valued variable suffixes, only
    the nonzero entries written."""
    m, n = len(duals), len(x)
    out = [message.rstrip("\n") + "\n\n",
           f"Options\n3\n1\n1\n0\n{m}\n{m}\n{n}\n{n}\n",
           _values(duals), _values(x), f"objno 0 {int(solve_result_num)}\n"]
    for name, values in var_suffixes:
        values = np.asarray(values, dtype=float)
        nz = np.flatnonzero(values)
        out.append(f"suffix 4 {len(nz)} {len(name) + 1} 0 0\n{name}\n")
        out.append("".join(f"{i} {float(values[i])!r}\n" for i in nz.tolist()))
    return "".join(out)


def write_sol(path: str, message: str, duals, x, solve_result_num: int,
              var_suffixes=()) -> None:
    """Write :func:`sol_text` to ``path``."""
    with open(path, "w") as f:
        f.write(sol_text(message, duals, x, solve_result_num, var_suffixes))
