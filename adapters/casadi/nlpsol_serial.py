"""What a serialized caspar nlpsol holds, and how it is rebuilt when loaded.

A solver built by ``nlpsol(name, 'caspar', nlp, opts)`` is determined by three things:
the problem ``nlp = {x, p, f, g}``, ``opts``, and ``name``.  Its solver Callback keeps
them as one record (:func:`record`) in the Function option ``jit_options`` under
``'caspar_nlpsol'``, which casadi writes with the Callback whenever it serializes it (the
why and the reading side: :mod:`.casadi_loader`):

* ``nlp``: ``Function('nlp', [x, p], [f, g])`` (the keys present; SX or MX as given) --
  a casadi Function serializes with casadi's own format, so the problem is stored as
  exactly as IPOPT's nlpsol stores its oracle;
* ``options``: ``opts`` as JSON, with every casadi Function in it (``grad_f``,
  ``jac_g``, ``hess_lag``, ``iteration_callback``) replaced by a reference into
  ``functions``; numpy values as lists and floats;
* ``format``: :data:`FORMAT`; ``uid``: a random id of the compiled problem;
* in the node of a mapped Function (``S.map(B)``) also ``batch``: B; in a derivative
  node (a graph holding ``jacobian(S(...)['x'], p)``, say) ``derivative``:
  ``[kind, k, name, inames, onames]`` (kind ``'fwd'`` or ``'rev'``, k directions).

Nodes with one ``uid`` share one compiled problem when loaded (the solver node of a graph
and its derivative nodes, or a Function loaded twice): the first one compiles it, in
the process that saved it no one does (the original is still there).

:func:`.nlpsol_load.restore` reverses it: the problem's expressions are rebuilt by calling ``nlp`` on
its own input symbols (inlined, so an MX problem keeps its calls and maps), and
``NlpsolCore(name, nlp, opts)`` compiles the problem as ``nlpsol`` did.  The solve is
therefore the one a fresh ``nlpsol`` call gives: same iterates, same answer.

Options that cannot be stored (Python objects other than casadi Functions) are listed in
the record; loading then raises naming them -- except ``client`` (a Dask client, which
changes where a batch runs, not its results), which is dropped with a warning.  A user's
``casadi.Callback`` passed as an option is stored by casadi as any Callback is and cannot
be loaded (casadi's own limit, also with IPOPT).
"""

from __future__ import annotations

import json
import uuid
import warnings
import weakref

import numpy as np

import casadi as ca

from caspar_backend.errors import ModelError

#: the record's layout version
FORMAT = 1
#: the key of the record in the solver Callback's ``jit_options``
KEY = "caspar_nlpsol"
#: options dropped (with a warning) rather than refused when they cannot be stored
DROPPABLE = ("client",)
_FUNCTION = "__casadi_function__"

#: uid -> NlpsolCore, for every core saved or loaded in this process
_CORES: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


def record(name: str, nlp: dict, opts: dict, fn=None) -> dict:
    """The record stored in the solver Callback (module doc), with a new ``uid``;
    ``fn`` the problem's Function ``(x, p) -> (f, g)`` when built already (an SX
    problem's :func:`~.nlp.problem_function`)."""
    if fn is None:
        ins = [k for k in ("x", "p") if nlp.get(k) is not None]
        outs = [k for k in ("f", "g") if nlp.get(k) is not None]
        fn = ca.Function("nlp", [nlp[k] for k in ins], [nlp[k] for k in outs], ins, outs,
                         {"allow_free": True})
    functions: dict = {}
    unsaved: list = []
    options = _encode(opts, "", functions, unsaved)
    return {"format": FORMAT, "uid": uuid.uuid4().hex, "name": name, "nlp": fn,
            "options": json.dumps({"options": options, "unsaved": unsaved}),
            "functions": functions}


def _encode(v, path, functions, unsaved):
    if isinstance(v, ca.Function):
        functions[path] = v
        return {_FUNCTION: path}
    if isinstance(v, dict):
        return {str(k): _encode(x, f"{path}.{k}" if path else str(k), functions, unsaved)
                for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_encode(x, f"{path}[{i}]", functions, unsaved) for i, x in enumerate(v)]
    if isinstance(v, ca.DM):
        return np.array(v).tolist()
    if isinstance(v, (np.ndarray, np.generic)):
        return v.tolist()
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    unsaved.append(path)
    return None


def _decode(v, functions):
    if isinstance(v, dict):
        if set(v) == {_FUNCTION}:
            return functions[v[_FUNCTION]]
        return {k: _decode(x, functions) for k, x in v.items()}
    if isinstance(v, list):
        return [_decode(x, functions) for x in v]
    return v


def problem_of(rec: dict) -> dict:
    """The nlpsol problem dict ``{x, p, f, g}`` of a record."""
    fn = rec["nlp"]
    sx = fn.is_a("SXFunction")
    syms = fn.sx_in() if sx else fn.mx_in()
    outs = fn.call(syms, True, False)
    nlp = dict(zip(fn.name_in(), syms))
    nlp.update(zip(fn.name_out(), outs))
    return nlp


def options_of(rec: dict, name: str) -> dict:
    """The nlpsol options of a record; raises a ModelError for options that were not
    stored (module doc)."""
    data = json.loads(rec["options"])
    opts = _decode(data["options"], rec["functions"])
    refused = [k for k in data["unsaved"] if k not in DROPPABLE]
    if refused:
        raise ModelError(f"nlpsol '{name}' was saved with options that cannot be stored "
                         f"(Python objects): {', '.join(refused)}; build it again with "
                         "nlpsol(...) instead of loading it")
    for k in data["unsaved"]:
        opts.pop(k, None)
        warnings.warn(f"nlpsol '{name}': option {k!r} was not saved and is dropped "
                      "(the solves give the same results without it)", stacklevel=2)
    return opts


def saved_form(core) -> dict:
    """The record of ``core``'s problem (an ``NlpsolCore``), made once."""
    if core._saved_form is None:
        core._saved_form = record(core.name, core.nlp, core.opts, core.nlp_function)
        remember(core)
    return core._saved_form


def remember(core) -> None:
    """Make ``core`` the one that loads of its record use in this process."""
    _CORES[saved_form(core)["uid"]] = core


def node_record(core, **extra) -> dict:
    """The record of a node of ``core``: its problem's plus ``extra`` (``batch``,
    ``derivative``)."""
    return dict(saved_form(core), **extra)


def saved_cores():
    """uid -> NlpsolCore of the problems saved or loaded in this process."""
    return _CORES
