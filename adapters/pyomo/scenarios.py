"""One model, many values of its mutable Params, one batched solve: the engine side of
``solve_scenarios`` (both Pyomo interfaces; results in :mod:`.scenario_results`).

A *scenario* is a mapping ``{key: value}`` -- a ``ComponentMap`` (Pyomo's scalar
Params and ParamData are not hashable, so a dict cannot hold them), a dict keyed by
names, or a list of ``(key, value)`` pairs; a key is

* a ``ParamData`` of a mutable Param (``m.q[2]``) or a scalar mutable Param (``m.p``),
  the value a real number;
* an indexed mutable Param (``m.q``), the value a mapping ``{index: number}``;
* a ``pyomo.kernel`` parameter, the value a real number;
* a string, the name of one of the above (``model.find_component``; a kernel block's
  attribute).

Scenario b is the model with those Params at those values and every other Param as
the model has it, solved from the model's current variable values (and, with
``warm_start_init_point``, its multiplier Suffixes) with the options of the call: the
answer ``solve`` gives after setting those Params.  All B scenarios are one :meth:`Problem.solve_batch <caspar_backend.problem.Problem.solve_batch>` call on
the compiled problem (kept symbolic in the Params: new values need no recompilation).

The Params' values enter as follows.  In the objective and constraint bodies they are
the parameter vector p of the compiled problem (``PyomoMapping.p_objs``): column k of
the (B, n_p) array is ``p_objs[k]``'s value in each scenario.  In variable bounds and
constraint bounds they are read by :meth:`PyomoMapping.refresh`, which reads the model:
for a scenario that sets such a Param, the Params are set, the bounds read, and the old
values put back (the raw stored values, so an unset Param stays unset) before the call
returns.  Nothing else of the model is written: variable values, Param values, stale
flags and Suffixes are as before the call, until a scenario is loaded.

Errors name the scenario and the component: a key that is not a Param, an immutable
Param (its value was built into the expressions), a Param the model's active objective,
constraints and bounds do not use, a value that is not a finite real or is outside the
Param's domain; and then, as in ``solve``, inconsistent bounds.  A scenario whose
constant rows (no free variable) are violated is infeasible without solving, as in
``solve``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import final

import numpy as np

from caspar_backend.errors import ModelError, NonFiniteError

from .engine import _check_consistent, _TeeWriter, _trivial_rows, split_options
from .results import PyomoSolution, pyomo_status
from .scenario_results import ScenarioFlavour, ScenarioResult, ScenarioResults


@final
@dataclass(eq=False)
class ScenarioOutcome:
    """Scenario ``index`` after the batch (final): its assignments ``[(ParamData,
    value)]``, the status row (:class:`~.results.PyomoStatus`), the solution (None
    without an iterate), the IPOPT status name, message, iterations, ``path``/``reason``
    (:class:`~caspar_backend.batch.result.BatchResult`), and ``infeasible``: the
    message when a constant row decided it without solving, else None."""

    index: int
    assignments: list
    row: object
    solution: PyomoSolution | None
    status: str
    message: str
    iterations: int
    path: str
    reason: str
    infeasible: str | None


@final
@dataclass(eq=False)
class ScenarioBatch:
    """Everything :func:`solve_scenarios` found (final): the outcomes in scenario
    order, the mapping, the BatchResult of the solved ones (None when none was
    solved), the solver log and the wall-clock seconds of the solve."""

    outcomes: list
    mapping: object
    batch: object
    log: str
    seconds: float
    t_extract: float


def run_scenarios(engine, flavour: ScenarioFlavour, model, scenarios, options,
                  time_limit=None, *, legacy=False, tee_streams=(), load=None, client=None
                  ) -> ScenarioResults:
    """``solve_scenarios`` of a Pyomo interface: :func:`solve_scenarios`, the results in
    the interface's terms (``flavour``), and scenario ``load`` (an int, or None: the
    model is not written) loaded into the model.  ``client``: a
    ``dask.distributed.Client`` whose workers solve the scenarios in chunks."""
    scenarios = list(scenarios)
    if load is not None and (isinstance(load, bool) or not isinstance(load, int)
                             or not -len(scenarios) <= load < len(scenarios)):
        raise ValueError(f"load={load!r}: expected None or the index of one of the "
                         f"{len(scenarios)} scenarios")
    sb = solve_scenarios(engine, model, scenarios, options, time_limit, legacy=legacy,
                         tee_streams=tee_streams, client=client)
    items = [ScenarioResult(o, model, sb.mapping, flavour) for o in sb.outcomes]
    results = ScenarioResults(items, sb.batch, sb.log, sb.seconds, sb.t_extract)
    if load is not None:
        results.load(load)
    return results


def solve_scenarios(engine, model, scenarios, options, time_limit=None, *, legacy=False,
                    tee_streams=(), client=None) -> ScenarioBatch:
    """Validate, compile (or reuse), build the (B, k) inputs and run one batched solve
    (see the module doc), on the workers of ``client`` when one is given
    (:mod:`caspar_backend.batch.distributed`: each worker resolves the ``device``
    option for itself; the log of the instances that leave the batch stays on the
    workers).  Raises before anything is solved -- and without touching the model --
    for bad scenarios, options or models."""
    scenarios = list(scenarios)
    prep = engine.prepare(model, options, time_limit, legacy=legacy)
    if prep.compiled is None:
        raise ModelError(f"model {model.name} has no free variable in its active "
                         "objective or constraints: there is nothing to solve")
    mapping = prep.compiled.mapping
    assignments = resolve(model, mapping, scenarios)
    rows, infeasible = scenario_data(mapping, assignments)
    t0 = time.perf_counter()
    solved = [b for b, why in enumerate(infeasible) if why is None]
    writer = _TeeWriter(tee_streams)
    batch = None
    if solved:
        opts = dict(prep.options)
        opts.update(stream=writer, device=prep.device)
        if client is not None:
            opts.update(client=client, device=_device_option(options, time_limit, legacy))
        stack = {k: _stacked([rows[b][k] for b in solved]) for k in
                 ("p", "lbx", "ubx", "lbg", "ubg", "x0")}
        batch = prep.compiled.problem.solve_batch(
            stack["x0"], stack["p"], prep.lam_g0, prep.lam_x0, lbx=stack["lbx"],
            ubx=stack["ubx"], lbg=stack["lbg"], ubg=stack["ubg"], **opts)
    writer.flush()
    outcomes, at = [], {b: i for i, b in enumerate(solved)}
    for b, why in enumerate(infeasible):
        if why is not None:
            outcomes.append(ScenarioOutcome(b, assignments[b],
                                            pyomo_status("Infeasible_Problem_Detected"),
                                            None, "Infeasible_Problem_Detected", why, 0,
                                            "", "", why))
            continue
        outcomes.append(_outcome(mapping, batch, at[b], b, assignments[b], rows[b]))
    return ScenarioBatch(outcomes, mapping, batch, writer.getvalue(),
                         time.perf_counter() - t0, prep.t_extract)


def _device_option(options, time_limit, legacy) -> str:
    """The ``device`` option as given ('cpu' by default): on a cluster each worker
    resolves it (``'auto'``: the worker's GPU, else its CPU)."""
    return split_options(options, time_limit, strip_of_prefix=legacy)[0].get("device", "cpu")


def _outcome(mapping, batch, i, b, assignments, data) -> ScenarioOutcome:
    """Instance i of ``batch`` (scenario b) in Pyomo's terms.  ``batch.f`` is the
    user's objective (``Problem.solve``'s sign); PyomoSolution takes the minimization
    form ``sense * F``, as the single solve's ``solve_nlp`` result has it."""
    res = batch[i]
    row = pyomo_status(res.status)
    solution = None
    if row.has_iterate:
        res = dataclasses.replace(res, f=mapping.sense * res.f)
        solution = PyomoSolution.from_result(mapping, res, data["lbx"], data["ubx"])
        # a constant row constrains nothing: its dual is exactly 0 (as in solve)
        solution.dual[mapping.trivial_rows] = 0.0
    return ScenarioOutcome(b, assignments, row, solution, res.status, res.message,
                           int(res.iterations), batch.path[i], batch.reason[i], None)


def _stacked(rows: list) -> np.ndarray:
    """One vector when every scenario has the same one (the model's own bounds, say),
    else the (B, k) array."""
    first = rows[0]
    if all(r is first for r in rows):
        return first
    return np.stack(rows)


# ================================================================= the scenarios
def resolve(model, mapping, scenarios) -> list:
    """Each scenario as ``[(ParamData, float)]`` (see the module doc for the keys),
    checked; ModelError naming the scenario and the component otherwise."""
    used = _used_params(mapping)
    out = []
    for b, scen in enumerate(scenarios):
        assigned = {}
        for key, value in _pairs(scen, b):
            for pd, v in _entries(model, key, value, b):
                if id(pd) not in used:
                    raise ModelError(
                        f"scenario {b}: parameter {pd.name} does not appear in the "
                        f"active objective, constraints or variable bounds of model "
                        f"{model.name}: setting it changes nothing")
                assigned[id(pd)] = (pd, _number(pd, v, b))
        out.append(list(assigned.values()))
    return out


def _pairs(scen, b) -> list:
    """The ``(key, value)`` pairs of one scenario: a mapping's items, or the
    pairs of a list."""
    # a Pyomo component has items() too (its index -> data): not a scenario
    if hasattr(scen, "items") and not hasattr(scen, "ctype"):
        return list(scen.items())
    try:
        pairs = None if hasattr(scen, "ctype") else [tuple(kv) for kv in scen]
    except TypeError:
        pairs = None
    if pairs is None or any(len(kv) != 2 for kv in pairs):
        raise ModelError(f"scenario {b}: expected a ComponentMap {{Param: value}}, a dict "
                         f"keyed by names or a list of (Param, value) pairs, got "
                         f"{type(scen).__name__}")
    return pairs


def _entries(model, key, value, b):
    """``[(ParamData, value)]`` of one scenario entry."""
    comp = _by_name(model, key) if isinstance(key, str) else key
    if comp is None:
        raise ModelError(f"scenario {b}: model {model.name} has no component named {key!r}")
    name = getattr(comp, "name", repr(comp))
    from pyomo.core.base.param import Param
    from pyomo.core.kernel.parameter import IParameter

    # an indexed Param container is no "parameter type" itself, its entries are; a
    # pyomo.kernel parameter is not one either (always mutable)
    if not (getattr(comp, "ctype", None) in (Param, IParameter)
            or getattr(comp, "is_parameter_type", lambda: False)()):
        kind = ("a variable" if getattr(comp, "is_variable_type", lambda: False)()
                else f"of type {type(comp).__name__}")
        raise ModelError(f"scenario {b}: {name} is {kind}, not a mutable Param")
    parent = comp.parent_component() if hasattr(comp, "parent_component") else comp
    if not getattr(parent, "mutable", True):
        raise ModelError(f"scenario {b}: parameter {name} is not mutable: its value was "
                         "built into the model's expressions when they were created "
                         "(declare it Param(..., mutable=True))")
    if comp is parent and getattr(comp, "is_indexed", lambda: False)():
        if not hasattr(value, "items"):
            raise ModelError(f"scenario {b}: parameter {name} is indexed: give its "
                             f"values as {{index: value}} or key them by {name}[index]")
        pairs = []
        for idx, v in value.items():
            if idx not in comp:
                raise ModelError(f"scenario {b}: parameter {name} has no index {idx!r}")
            pairs.append((comp[idx], v))
        return pairs
    return [(comp, value)]


def _by_name(model, name):
    """The component named ``name`` (relative to ``model``), or None; pyomo.kernel
    blocks have no ``find_component``: their children are attributes."""
    if hasattr(model, "find_component"):
        return model.find_component(name)
    return getattr(model, name, None)


def _number(pd, v, b) -> float:
    """The value as a float: a finite real within the Param's domain."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ModelError(f"scenario {b}: parameter {pd.name} needs a real number, got "
                         f"{v!r}")
    x = float(v)
    if not math.isfinite(x):
        raise NonFiniteError(f"scenario {b}: parameter {pd.name} has the non-finite "
                             f"value {x!r}")
    parent = pd.parent_component() if hasattr(pd, "parent_component") else pd
    domain = getattr(parent, "domain", None)
    if domain is not None and v not in domain:
        raise ModelError(f"scenario {b}: value {v!r} of parameter {pd.name} is not in "
                         f"its domain {domain.name if hasattr(domain, 'name') else domain}")
    return x


def _used_params(mapping) -> dict:
    """``{id: ParamData}`` of the Params the NLP reads: p, plus those in variable
    bounds and in constraint bounds (:func:`_bound_params`)."""
    used = {id(o): o for o in mapping.p_objs if not o.is_variable_type()}
    used.update(_bound_params(mapping))
    return used


def _bound_params(mapping) -> dict:
    """``{id: ParamData}`` of the mutable Params in variable bounds and in the
    constraint bounds that are expressions."""
    from pyomo.core.expr.visitor import identify_mutable_parameters

    out = {}
    exprs = [e for j, lo, hi in mapping.bound_exprs for e in (lo, hi) if e is not None]
    for v in mapping.x_vars:
        for e in (v.lower, v.upper):
            if e is not None and not isinstance(e, numbers.Number):
                exprs.append(e)
    for e in exprs:
        for pd in identify_mutable_parameters(e):
            out[id(pd)] = pd
    return out


# ================================================================= the numbers
def scenario_data(mapping, assignments) -> tuple[list, list]:
    """``(rows, infeasible)``: per scenario a dict of its ``p``, ``lbx``, ``ubx``,
    ``lbg``, ``ubg``, ``x0`` vectors (the model's own array objects where the
    scenario does not change them), and the message of a violated constant row or
    None.  Bounds inconsistent in a scenario raise, naming it and the component."""
    base = mapping.refresh()
    column = {id(o): k for k, o in enumerate(mapping.p_objs)}
    in_bounds = _bound_params(mapping)
    base_rows = None
    rows, infeasible = [], []
    for b, pairs in enumerate(assignments):
        p = base.p.copy()
        for pd, v in pairs:
            k = column.get(id(pd))
            if k is not None:
                p[k] = v
        if any(id(pd) in in_bounds for pd, _ in pairs):
            with _values_set(pairs):
                data = mapping.refresh()
            data = dataclasses.replace(data, p=p)
            try:
                _check_consistent(mapping, data)
            except ModelError as exc:
                raise type(exc)(f"scenario {b}: {exc}") from None
            data, why = _trivial_rows(mapping, data)
            row = dict(p=p, lbx=data.lbx, ubx=data.ubx, lbg=data.lbg, ubg=data.ubg,
                       x0=data.x0)
        else:
            if base_rows is None:
                # the model's own bounds, constant rows opened as solve opens them
                opened = _opened(mapping, base)
                base_rows = dict(lbx=base.lbx, ubx=base.ubx, lbg=opened.lbg,
                                 ubg=opened.ubg, x0=base.x0)
            data = dataclasses.replace(base, p=p)
            why = _violation(mapping, data)
            row = dict(base_rows, p=p)
        rows.append(row)
        infeasible.append(why)
    return rows, infeasible


def _violation(mapping, data):
    """The message of a violated constant row at ``data``'s p, or None."""
    if not mapping.trivial_rows.size:
        return None
    return _trivial_rows(mapping, data)[1]


def _opened(mapping, data):
    """``data`` with the constant rows' bounds opened to (-inf, inf), as
    :func:`_trivial_rows` opens them when they hold (here for every scenario that keeps
    the model's bounds; whether they hold is :func:`_violation`'s question)."""
    rows = mapping.trivial_rows
    if not rows.size:
        return data
    lbg, ubg = data.lbg.copy(), data.ubg.copy()
    lbg[rows], ubg[rows] = -math.inf, math.inf
    return dataclasses.replace(data, lbg=lbg, ubg=ubg)


@contextmanager
def _values_set(pairs):
    """The Params at the scenario's values inside the block; their stored values
    (``_value``, so that a Param without a value stays without one) restored after."""
    saved = [(pd, pd._value) for pd, _ in pairs]
    try:
        for pd, v in pairs:
            pd.value = v
        yield
    finally:
        for pd, old in reversed(saved):
            pd._value = old
