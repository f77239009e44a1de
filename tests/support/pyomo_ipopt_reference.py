"""IPOPT as the reference for Pyomo models, without the ``ipopt`` executable.

The model goes through Pyomo's own NL writer (``model.write(..., format='nl')``,
the file ``SolverFactory('ipopt')`` would hand to the executable) and is solved
by the IPOPT 3.14 that the ``casadi`` wheel bundles
(``casadi.NlpBuilder().import_nl`` + :func:`tests.support.ipopt.solve`).
Variables and constraints are mapped back through the ``.col`` / ``.row`` label
files (``symbolic_solver_labels``) and the writer's symbol map (``v<i>``/``c<j>`` -> component, checked against the labels).

Signs: CasADi's NL importer minimizes ``f = s F`` (it negates a maximized
objective; ``s = -1``) and returns ``lam_g``, ``lam_x`` for
``L = f + lam_g' g + lam_x' x``.  The Pyomo-convention values computed here are
the derivatives of the optimal *user* objective ``F*`` with respect to the
right-hand side / bound (what IPOPT's AMPL driver writes into the ``.sol`` file):

    dual = -s lam_g,    rc = -s lam_x,
    ipopt_zL_out = s max(-lam_x, 0),    ipopt_zU_out = -s max(lam_x, 0)

(verified against finite differences of ``F*`` in ``test_pyomo_frontend.py``).
The comment lines that symbolic labels add to the NL file are stripped before
CasADi reads it (its reader does not accept them).
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from dataclasses import dataclass, field

import casadi
import numpy as np
import pyomo.environ as pyo
from pyomo.common.collections import ComponentMap

from tests.support import ipopt

_COMMENT = re.compile(r"\s*#.*$")


@dataclass(frozen=True)
class IpoptReference:
    """IPOPT's answer for a Pyomo model, keyed by the model's components.

    ``status`` is IPOPT's return status (``Solve_Succeeded``, ...);
    ``objective`` is the user's objective value ``F`` (``None`` without an
    objective); ``x``/``rc``/``zl``/``zu`` map VarData, ``dual`` maps
    ConstraintData, all in Pyomo's sign convention (module docstring)."""

    status: str
    success: bool
    iterations: int
    objective: float | None
    sense: int
    x: ComponentMap = field(default_factory=ComponentMap)
    dual: ComponentMap = field(default_factory=ComponentMap)
    rc: ComponentMap = field(default_factory=ComponentMap)
    zl: ComponentMap = field(default_factory=ComponentMap)
    zu: ComponentMap = field(default_factory=ComponentMap)


def _read_labels(path) -> list[str]:
    with open(path) as fh:
        return [ln.rstrip("\n") for ln in fh if ln.strip()]


def _start(var) -> float:
    """The NL file's start: the current value, else 0 projected into the bounds
    (what IPOPT's AMPL driver does for a variable without a start)."""
    if var.value is not None:
        return float(var.value)
    lb, ub = var.bounds
    x = 0.0 if lb is None else max(0.0, lb)
    return x if ub is None else min(x, ub)


def solve_reference(model, options: dict | None = None) -> IpoptReference:
    """Solve ``model`` (unchanged: nothing is loaded into it) with IPOPT."""
    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    sense = -1 if objs and objs[0].sense == pyo.maximize else 1
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "model")
        _, smap_id = model.write(base + ".nl", format="nl",
                                 io_options={"symbolic_solver_labels": True})
        smap = model.solutions.symbol_map[smap_id]
        model.solutions.delete_symbol_map(smap_id)   # leave the model as it was
        with open(base + ".nl") as fh:
            lines = fh.read().splitlines()
        with open(base + "_plain.nl", "w") as fh:
            fh.write("\n".join([lines[0]] + [_COMMENT.sub("", ln) for ln in lines[1:]]))
            fh.write("\n")
        cols = _read_labels(base + ".col")
        rows = _read_labels(base + ".row")
        nl = casadi.NlpBuilder()
        nl.import_nl(base + "_plain.nl", {"verbose": False})

    # the writer's symbol map knows the NL indices (v<i>, c<j>); the label files
    # name them -- both must agree
    variables = [smap.bySymbol[f"v{i}"] for i in range(len(nl.x))]
    constraints = [smap.bySymbol[f"c{j}"] for j in range(len(nl.g))]
    for comp, label in zip(variables + constraints, cols + rows):
        assert comp.name == label, (comp.name, label)
    nlp = {"x": casadi.vertcat(*nl.x), "f": nl.f, "g": casadi.vertcat(*nl.g)}
    run = ipopt.solve(nlp, dict(x0=[_start(v) for v in variables], lbx=nl.x_lb,
                                ubx=nl.x_ub, lbg=nl.g_lb, ubg=nl.g_ub), options)
    x, lam_g, lam_x = run.x, run.lam_g, run.lam_x
    lbx, ubx = np.array(nl.x_lb, dtype=float), np.array(nl.x_ub, dtype=float)
    zl = np.where(np.isfinite(lbx), np.maximum(-lam_x, 0.0), 0.0)
    zu = np.where(np.isfinite(ubx), np.maximum(lam_x, 0.0), 0.0)
    f = run.f
    return IpoptReference(
        status=run.status, success=run.success, iterations=run.iterations,
        objective=(sense * f) if objs else None, sense=sense,
        x=ComponentMap(zip(variables, x.tolist())),
        dual=ComponentMap(zip(constraints, (-sense * lam_g).tolist())),
        rc=ComponentMap(zip(variables, (-sense * lam_x).tolist())),
        zl=ComponentMap(zip(variables, (sense * zl).tolist())),
        zu=ComponentMap(zip(variables, (-sense * zu).tolist())))


def objective_value(model) -> float:
    """The active objective's value at the model's current values."""
    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    return float(pyo.value(objs[0])) if objs else math.nan
