"""``caspar stub[.nl] [-AMPL] [option=value ...]``: solve an NL file, write ``stub.sol``.

What IPOPT's AMPL executable does, so that Pyomo's ASL interface
(``SolverFactory('asl:caspar')``, and ``SolverFactory('caspar')`` in a process that has
not imported caspar_backend: Pyomo then runs the ``caspar`` executable it finds on the
PATH) and other writers of text NL files (JuMP's AmplNLWriter; AMPL with text output --
its default binary format is not read) reach caspar:

* options: ``key=value`` (or ``key value``) words from the environment variable
  ``caspar_options`` and then the command line (a later one wins), IPOPT's names
  (caspar's option table validates them; an unknown one is an error naming it),
  AMPL's ``outlev`` and ``maxit`` as IPOPT's driver maps them (``print_level``,
  ``max_iter``);
* the log on standard output, as IPOPT's;
* ``stub.sol``: the message ``caspar <version>: <IPOPT's AMPL message>``, the duals
  (AMPL's sign), the primal values, IPOPT's ``solve_result_num``
  (adapters/pyomo/results.py, ``STATUS_MAP``) and IPOPT's ``ipopt_zL_out`` /
  ``ipopt_zU_out`` suffixes (:mod:`.sol_file`).  Where IPOPT writes no ``.sol``
  (an invalid problem, an invalid option) none is written and the exit status is 1;
  a model caspar cannot read or solve is reported on standard error, status 1.

With ``warm_start_init_point=yes`` the NL file's initial duals (its ``d`` segment)
start the constraint multipliers, as IPOPT's driver does.
"""

from __future__ import annotations

import os
import sys

#: AMPL's option names IPOPT's driver maps to its own
AMPL_ALIASES = {"outlev": "print_level", "maxit": "max_iter"}


def _value(text: str):
    """An option value as IPOPT's driver reads it: an int, a float, else the string."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_options(words) -> dict:
    """``key=value`` and ``key value`` words -> {IPOPT name: value} (later wins)."""
    opts, words, k = {}, list(words), 0
    while k < len(words):
        w = words[k]
        if "=" in w:
            key, val = w.split("=", 1)
            k += 1
        else:
            if k + 1 >= len(words):
                from ..errors import OptionError

                raise OptionError(f"option {w!r} has no value (write {w}=value)")
            key, val = w, words[k + 1]
            k += 2
        key = AMPL_ALIASES.get(key, key)
        opts[key] = _value(val.strip('"').strip("'"))
    return opts


def is_ampl_call(argv) -> bool:
    """Whether ``caspar argv`` is an AMPL solver call: ``-AMPL`` given, or a first
    word naming an NL file (``stub.nl`` or ``stub`` with ``stub.nl`` present)."""
    if "-AMPL" in argv:
        return True
    first = argv[0] if argv else ""
    return first.endswith(".nl") or (bool(first) and not first.startswith("-")
                                      and os.path.isfile(first + ".nl"))


def _paths(stub: str) -> tuple:
    """``(nl file, sol file)`` of ``stub`` (with or without ``.nl``)."""
    base = stub[:-3] if stub.endswith(".nl") else stub
    return base + ".nl", base + ".sol"


def main(argv) -> int:
    from ..adapters.pyomo.results import STATUS_MAP, ipopt_bound_multipliers, pyomo_duals
    from ..errors import CasparError
    from ..problem import Problem
    from ..version import __version__
    from .nl_reader import read_nl
    from .sol_file import write_sol

    args = [a for a in argv if a != "-AMPL"]
    if not args:
        print("caspar: usage: caspar stub[.nl] [-AMPL] [option=value ...]", file=sys.stderr)
        return 2
    nl_path, sol_path = _paths(args[0])
    try:
        opts = parse_options(os.environ.get("caspar_options", "").split())
        opts.update(parse_options(args[1:]))
        nl = read_nl(nl_path)
        lam_g0 = None
        if str(opts.get("warm_start_init_point", "no")) == "yes" and nl.duals0 is not None:
            lam_g0 = -float(nl.sense) * nl.duals0
        res = Problem(nl.model).solve(lam_g0=lam_g0, **opts)
    except (CasparError, OSError) as e:
        print(f"caspar: {e}", file=sys.stderr)
        return 1
    row = STATUS_MAP.get(res.status)
    if row is None or row.ampl_code is None:
        print(f"caspar: {res.status}: no solution file written", file=sys.stderr)
        return 1
    zl, zu = ipopt_bound_multipliers(res.lam_x, nl.sense, nl.model.lbx, nl.model.ubx)
    write_sol(sol_path, f"caspar {__version__}: {row.message}",
              pyomo_duals(res.lam_g, nl.sense) + 0.0, res.x, row.ampl_code,
              [("ipopt_zU_out", zu), ("ipopt_zL_out", zl)])
    return 0
