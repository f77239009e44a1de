"""Values the model exports to the solver through Pyomo ``Suffix`` components: the
warm-start multipliers (top-level ``dual``, ``ipopt_zL_in``, ``ipopt_zU_in``) and the
``scaling_factor`` of IPOPT's ``nlp_scaling_method = 'user-scaling'``.

``scaling_factor`` is read as Pyomo's NL writer collects it for IPOPT (with
``scale_model`` off, as Pyomo's ``ipopt`` shell solver writes its NL file): every
active EXPORT Suffix of that name on an active block of the model, a higher block's
value overriding a lower one's; a value keyed by an indexed Var, Constraint or
Objective applies to each of its members without a value of their own.  IPOPT's AMPL
interface (AmplTNLP::get_scaling_parameters) then takes

* the objective's factor: the active objective's value where it has one, else 1.0 (as
  written by the user: a maximization's sign is not part of it);
* the variables' factors (n,), in ``mapping.x_vars`` order, when any variable of x has
  a value, else none: a value <= 0 or missing means 1.0;
* the constraints' factors (m,), in ``mapping.constraints`` row order, likewise.
"""

from __future__ import annotations

import numpy as np
from pyomo.core.base import Block, Suffix
from pyomo.common.collections import ComponentMap

from caspar_backend.errors import NonFiniteError


def suffix_values(model, name, objs, direction_test):
    """Values of the top-level Suffix ``name`` for ``objs`` (0 where missing), or
    None when the model has no such Suffix with the wanted direction."""
    suf = model.component(name)
    if not isinstance(suf, Suffix) or not suf.active or not direction_test(suf):
        return None
    vals = np.array([suf.get(o, 0.0) for o in objs], dtype=float)
    if not np.all(np.isfinite(vals)):
        raise NonFiniteError(f"Suffix {suf.name} has a non-finite warm-start value")
    return vals


def exported_values(model, name) -> ComponentMap:
    """Component data -> value of the active EXPORT Suffixes ``name`` of the model's
    active blocks (module doc: higher blocks override lower ones, indexed keys expand to
    their members)."""
    given = ComponentMap()
    blocks = list(model.block_data_objects(active=True, descend_into=Block, sort=True))
    for block in reversed(blocks):           # the model last: its values win
        for suf in block.component_objects(Suffix, active=True, descend_into=False):
            if suf.local_name == name and suf.export_enabled():
                given.update(suf)
    values = ComponentMap()
    for obj, val in given.items():
        if getattr(obj, "is_indexed", lambda: False)():
            for member in obj.values():
                if member not in given:
                    values[member] = val
        else:
            values[obj] = val
    return values


def _factors(values, objs):
    """The factors of ``objs`` (float64 vector), or None when none of them has a value;
    a value that is not positive, or missing, is 1.0."""
    if not any(o in values for o in objs):
        return None
    v = np.array([float(values.get(o, 1.0)) for o in objs], dtype=float)
    if not np.all(np.isfinite(v)):
        raise NonFiniteError("Suffix scaling_factor has a non-finite value")
    return np.where(v > 0.0, v, 1.0)


def scaling_factors(model, mapping):
    """``(obj, x, g)`` of solve_nlp's ``user_scaling`` from the model's scaling_factor
    Suffixes (module doc), or None when the model gives no factor at all."""
    values = exported_values(model, "scaling_factor")
    if not len(values):
        return None
    obj = 1.0
    if mapping.objective is not None and mapping.objective in values:
        obj = float(values[mapping.objective])
    x = _factors(values, mapping.x_vars)
    g = _factors(values, mapping.constraints)
    if obj == 1.0 and x is None and g is None:
        return None
    return obj, x, g
