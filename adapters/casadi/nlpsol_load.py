"""Loading saved nlpsol Functions: the user's entry to caspar's CasADi front-end.

``caspar_backend.casadi``'s ``nlpsol``, ``NlpsolFunction``, ``NlpsolFailure``, ``load``
and ``deserialize`` come from this module, so importing any of them installs caspar's
reader in casadi (:mod:`.casadi_loader`; built once per machine): from then on
``casadi.Function.load`` / ``deserialize`` read Functions holding caspar's solver, as
they read ones holding ipopt's.

:func:`restore` is what the reader calls for each solver node it meets: the record
(:mod:`.nlpsol_serial`) gives the problem and options, ``NlpsolCore`` compiles them
(once per record ``uid`` in a process), and the node -- the solver, a mapped solver, or
one of the solver's derivatives -- is made again exactly as ``nlpsol`` made it.
"""

from __future__ import annotations

import casadi as ca

from caspar_backend.errors import ModelError

from . import casadi_loader
from .frontend import NlpsolCore, NlpsolFailure, NlpsolFunction, nlpsol
from .nlpsol_io import NLPSOL_IN
from .nlpsol_serial import FORMAT, options_of, problem_of, remember, saved_cores

__all__ = ["NlpsolFailure", "NlpsolFunction", "deserialize", "load", "nlpsol", "restore"]

#: the nlpsol Functions (one instance each) rebuilt by loads in this process, oldest first
RESTORED: list = []


def restore(payload: str, node_name: str = ""):
    """The casadi Callback of the node stored in ``payload`` (casadi's string
    serialization of a node's record): the solver, a mapped solver or a derivative, of
    the problem compiled again (or found by its ``uid``).  A one-instance solver's
    user-facing Function goes to :data:`RESTORED`."""
    rec = ca.StringDeserializer(payload).unpack()
    if not isinstance(rec, dict) or rec.get("format") != FORMAT:
        got = rec.get("format") if isinstance(rec, dict) else type(rec).__name__
        raise ModelError(f"'{node_name}': a caspar nlpsol record of format {got!r}, this "
                         f"caspar reads format {FORMAT}")
    core = saved_cores().get(rec["uid"])
    if core is None:
        name = rec["name"]
        core = NlpsolCore(name, problem_of(rec), options_of(rec, name))
        # saved again, the rebuilt problem keeps its record (and uid)
        core._saved_form = {k: v for k, v in rec.items() if k not in ("batch", "derivative")}
        remember(core)
    batch = int(rec.get("batch", 1))
    fn = core.function(register=True, size=batch)
    if "derivative" in rec:
        kind, k, name, inames, onames = rec["derivative"]
        make = fn._callback.get_forward if kind == "fwd" else fn._callback.get_reverse
        return make(int(k), name, list(inames), list(onames), {})
    if batch == 1:
        RESTORED.append(fn)
    return fn._callback


def install() -> None:
    """Install caspar's reader in casadi now (building it if needed); raises
    :class:`~.casadi_loader.LoaderError` when it cannot be built."""
    casadi_loader.install(restore)


def load(path):
    """``casadi.Function.load(path)`` with caspar's reader installed.  A file holding an
    nlpsol Function itself gives back an :class:`~.nlpsol_function.NlpsolFunction`
    (``stats()``, ``problem``, batched ``map``) -- what ``nlpsol`` returned before
    saving; any other Function (e.g. one calling the solver) is returned as casadi
    loads it."""
    return _loaded(lambda: ca.Function.load(str(path)))


def deserialize(data: str):
    """:func:`load` for the string of ``Function.serialize()``."""
    return _loaded(lambda: ca.Function.deserialize(data))


def _loaded(read):
    install()
    before = len(RESTORED)
    fn = read()
    new = RESTORED[before:]
    if (len(new) == 1 and fn.is_a("MXFunction") and fn.name() == new[0].name()
            and tuple(fn.name_in()) == NLPSOL_IN):
        solver = new[0]
        return NlpsolFunction(fn, solver._callback, solver._core)
    return fn


casadi_loader.try_install(restore)
