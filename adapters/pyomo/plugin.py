"""``SolverFactory('caspar')``: caspar in Pyomo's two solver interfaces.

* :class:`CasparSolver` -- ``pyomo.contrib.solver`` (``SolverBase``):
  ``solve(model, tee=..., load_solutions=..., raise_exception_on_nonoptimal_result=...,
  time_limit=..., solver_options=...) -> Results``, as ``contrib``'s ipopt;
* :class:`LegacyCasparSolver` -- ``pyomo.environ.SolverFactory('caspar')`` (an
  ``OptSolver``): ``solve(model, tee=..., load_solutions=..., options=...,
  timelimit=...) -> SolverResults`` with the status pairs, suffixes and loading
  behaviour of ``SolverFactory('ipopt')``.

Both run the same :class:`_Engine`:

    Pyomo model --pyomo_to_model--> NLPModel --Problem--> compiled problem   (cached)
         ^                               refresh(): p, bounds, x0 from the model
         |                                              |
         +---- values, Suffixes <-- PyomoSolution <-- solve_nlp (IPOPT's algorithm)

The compiled problem is kept between solves of the same model and reused as
long as the model's structure is unchanged (same active objective and
constraint objects with the same expression objects, same named Expressions,
no Var fixed, unfixed or made discrete); mutable Params, fixed-Var values and
bounds are re-read every solve, so changing them costs no recompilation.

Everything is validated before the model is touched: a bad model, a bad option
or inconsistent bounds raise an error naming the component and leave values and
stale flags exactly as they were.

Options are IPOPT's names (:mod:`caspar_backend.solver.options`); the front-end
consumes a few more that Pyomo users set for IPOPT (:data:`FRONTEND_OPTIONS`).
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import logging
import math
import re
import sys
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import final

import numpy as np
from pyomo.common.collections import Bunch, ComponentMap
from pyomo.common.config import ADVANCED_OPTION, ConfigList, ConfigValue
from pyomo.common.timing import HierarchicalTimer
from pyomo.contrib.solver.common.base import Availability, SolverBase
from pyomo.contrib.solver.common.config import SolverConfig
from pyomo.contrib.solver.common.results import (Results, SolutionStatus,
                                                 TerminationCondition)
from pyomo.contrib.solver.common.solution_loader import SolutionLoader
from pyomo.contrib.solver.common.util import NoOptimalSolutionError, NoSolutionError
from pyomo.core.base import Constraint, Expression, Objective
from pyomo.core.base.block import BlockData
from pyomo.core.base.constraint import ConstraintData
from pyomo.core.base.suffix import Suffix, active_import_suffix_generator
from pyomo.core.staleflag import StaleFlagManager
from pyomo.opt.base.solvers import OptSolver

from caspar_backend import __version__
from caspar_backend.errors import ModelError, NonFiniteError, OptionError

from .results import (STATUS_MAP, PyomoSolution, contrib_message, enum_member,
                      legacy_results, pyomo_status, warm_start_multipliers)

logger = logging.getLogger(__name__)

#: solver version as Pyomo reports it (contrib: 3 ints; legacy ``version()``: 4)
VERSION = tuple(int(p) for p in __version__.split(".")[:3])
SOLVER_NAME = "caspar"

#: IPOPT option names the front-end handles itself (not in the solver's table)
FRONTEND_OPTIONS = MappingProxyType({
    "max_cpu_time": "Alias of max_wall_time (caspar measures wall-clock time).",
    "warm_start_init_point": "'yes': start the multipliers from the model's 'dual' and "
                             "'ipopt_zL_in'/'ipopt_zU_in' export Suffixes (IPOPT's "
                             "AMPL driver does the same).",
    "warm_start_bound_push": "With warm_start_init_point=yes: bound_push (IPOPT's "
                             "default 1e-3 then).",
    "warm_start_bound_frac": "With warm_start_init_point=yes: bound_frac (default 1e-3).",
    "warm_start_slack_bound_push": "With warm_start_init_point=yes: slack_bound_push "
                                   "(default 1e-3).",
    "warm_start_slack_bound_frac": "With warm_start_init_point=yes: slack_bound_frac "
                                   "(default 1e-3).",
    "warm_start_mult_bound_push": "Accepted for IPOPT recipes; caspar floors warm-start "
                                  "bound multipliers at 1e-2 * bound_mult_init_val.",
})

_WARM_ALIASES = {"warm_start_bound_push": "bound_push",
                 "warm_start_bound_frac": "bound_frac",
                 "warm_start_slack_bound_push": "slack_bound_push",
                 "warm_start_slack_bound_frac": "slack_bound_frac"}
#: IPOPT's defaults of the warm_start_* push options (WarmStartIterateInitializer)
_WARM_DEFAULTS: dict = {}

#: options a user may not set through the front-end, with the reason
REFUSED_OPTIONS = MappingProxyType({
    "stream": "the front-end owns the output stream; use tee=... and the solver log",
    "option_file_name": "pass every option through the options dict",
    "wantsol": "the front-end always reads the solution",
})

#: import Suffix names the front-end fills
IMPORT_SUFFIXES = ("dual", "rc", "ipopt_zL_out", "ipopt_zU_out")


# ===================================================================== options
def split_options(options, time_limit=None, *, strip_of_prefix=False):
    """``(solver_options, warm)``: the options for the solver's table and whether
    the multipliers start from the model's Suffixes.

    ``time_limit`` (seconds) overrides ``max_wall_time``/``max_cpu_time``;
    ``strip_of_prefix`` drops the ``OF_`` prefix the legacy IPOPT plugin used for
    options-file options.  Raises :class:`OptionError` for a refused option; the
    solver's table rejects unknown names.
    """
    out, warm_opts, warm = {}, dict(_WARM_DEFAULTS), False
    for key, val in dict(options or {}).items():
        key = str(key)
        if strip_of_prefix and key.startswith("OF_"):
            key = key[3:]
        if key in REFUSED_OPTIONS:
            raise OptionError(f"option {key!r} cannot be set through the Pyomo "
                              f"front-end: {REFUSED_OPTIONS[key]}")
        if key == "warm_start_init_point":
            if not (isinstance(val, str) and val.lower() in ("yes", "no")) and \
                    not isinstance(val, bool):
                raise OptionError(f"option 'warm_start_init_point' expects 'yes' or "
                                  f"'no', got {val!r}")
            warm = val is True or (isinstance(val, str) and val.lower() == "yes")
        elif key in _WARM_ALIASES or key == "warm_start_mult_bound_push":
            warm_opts[key] = val                   # the solver's table has them
        elif key == "max_cpu_time":
            out["max_wall_time"] = val
        else:
            out[key] = val
    if warm:
        # the solver applies IPOPT's warm start (warm_start_* pushes, multipliers from
        # the Suffixes); without it the warm_start_* values are ignored, as in IPOPT
        out.update(warm_opts)
        out["warm_start_init_point"] = True
    if time_limit is not None:
        out["max_wall_time"] = float(time_limit)
    return out, warm


# ====================================================================== output
@final
class _TeeWriter(io.TextIOBase):
    """Writes the solver's output to a buffer (the solver log) and to each tee
    stream as it comes, so ``tee=True`` shows the iteration log live."""

    def __init__(self, streams):
        super().__init__()
        self._buf = io.StringIO()
        self._streams = [s for s in streams if s is not None]

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        self._buf.write(text)
        for s in self._streams:
            s.write(text)
        return len(text)

    def flush(self) -> None:
        for s in self._streams:
            if hasattr(s, "flush"):
                s.flush()

    def getvalue(self) -> str:
        return self._buf.getvalue()


# ====================================================================== engine
@final
@dataclass(eq=False)
class _Compiled:
    """A compiled problem and the model structure it was compiled from.

    ``structure`` holds the components *and* their expression objects (not their
    ids: holding them keeps a replaced expression alive, so a new one can never
    reuse its id)."""

    model: object
    problem: object
    mapping: object
    structure: tuple


@final
@dataclass(eq=False)
class _Prepared:
    """Everything a solve needs, validated; the model is still untouched."""

    model: object
    compiled: _Compiled | None      # None: no variables (empty model)
    data: object
    options: dict
    device: str
    lam_g0: np.ndarray | None
    lam_x0: np.ndarray | None
    t_extract: float
    #: why the problem is infeasible without solving (a trivial row violated), or None
    infeasible: str | None = None


@final
@dataclass(eq=False)
class _Outcome:
    """One finished solve (``result`` None: decided without running the solver)."""

    mapping: object
    result: object
    row: object
    solution: PyomoSolution | None
    log: str
    seconds: float


def _con_token(c):
    """What the compiled rows of ``c`` were built from, as one object compared by
    identity (a new object: recompile).

    * AML ``ConstraintData`` stores its relational expression (``c.expr``), which
      ``set_value`` replaces;
    * ``MatrixConstraint`` rows (pyomo.repn.beta.matrix) store no expression and
      build a new ``body`` on every access, but cannot be changed after
      compilation (``set_value`` raises): the row itself is the token;
    * pyomo.kernel constraints store body and bounds separately (``c.expr`` is
      rebuilt on every access), so the token is ``(lower, body, upper)``; a kernel
      ``linear_constraint`` rebuilds its body too, and its stored terms stand in.
    """
    if isinstance(c, ConstraintData):
        try:
            return c.expr
        except AttributeError:                  # MatrixConstraint row (immutable)
            return c
    body = c.body
    if body is not c.body:                      # rebuilt per access (linear_constraint)
        body = tuple(x for term in c.terms for x in term) if hasattr(c, "terms") else object()
    return (c.lower, body, c.upper)


def _same_token(a, b) -> bool:
    """Identity for Pyomo objects; numbers by value (kernel matrix rows hand out
    fresh NumPy scalars on every access, and an equal coefficient or bound
    compiles to the same problem); tuples element by element."""
    if a is b:
        return True
    from pyomo.common.numeric_types import native_numeric_types

    if a.__class__ in native_numeric_types and b.__class__ in native_numeric_types:
        return a == b
    return (type(a) is tuple and type(b) is tuple and len(a) == len(b)
            and all(_same_token(x, y) for x, y in zip(a, b)))


def _structure(model) -> tuple:
    objs = tuple((o, o.expr, int(o.sense)) for o in
                 model.component_data_objects(Objective, active=True, descend_into=True))
    cons = tuple((c, _con_token(c)) for c in
                 model.component_data_objects(Constraint, active=True, descend_into=True))
    named = tuple((e, e.expr) for e in
                  model.component_data_objects(Expression, descend_into=True))
    return objs, cons, named


def _same_structure(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    for part_a, part_b in zip(a, b):
        if len(part_a) != len(part_b):
            return False
        for ra, rb in zip(part_a, part_b):
            if any(not _same_token(x, y) for x, y in zip(ra[:2], rb[:2])) or ra[2:] != rb[2:]:
                return False
    return True


def _vars_unchanged(mapping) -> bool:
    """No Var of x fixed or made discrete, no fixed Var of p unfixed."""
    try:
        mapping.check_structure()
    except ModelError:
        return False
    return all(v.is_continuous() for v in mapping.x_vars)


def _check_consistent(mapping, data) -> None:
    """lb > ub and non-finite starting values are errors naming the component
    (the solver would only say Invalid_Problem_Definition)."""
    bad = np.flatnonzero(data.lbx > data.ubx)
    if bad.size:
        v = mapping.x_vars[bad[0]]
        raise ModelError(f"variable {v.name} has lower bound {data.lbx[bad[0]]!r} "
                         f"above its upper bound {data.ubx[bad[0]]!r}")
    bad = np.flatnonzero(data.lbg > data.ubg)
    if bad.size:
        j = bad[0]
        c = mapping.constraints[j]
        raise ModelError(f"constraint {c.name} has lower bound "
                         f"{data.lbg[j] + mapping.shift[j]!r} above its upper bound "
                         f"{data.ubg[j] + mapping.shift[j]!r}")
    bad = np.flatnonzero(~np.isfinite(data.x0))
    if bad.size:
        v = mapping.x_vars[bad[0]]
        raise NonFiniteError(f"variable {v.name} has the non-finite value "
                             f"{data.x0[bad[0]]!r}")


def _suffix_values(model, name, objs, direction_test):
    """Values of the top-level Suffix ``name`` for ``objs`` (0 where missing), or
    None when the model has no such Suffix with the wanted direction."""
    suf = model.component(name)
    if not isinstance(suf, Suffix) or not suf.active or not direction_test(suf):
        return None
    vals = np.array([suf.get(o, 0.0) for o in objs], dtype=float)
    if not np.all(np.isfinite(vals)):
        raise NonFiniteError(f"Suffix {suf.name} has a non-finite warm-start value")
    return vals


@final
class _Engine:
    """Compile (or reuse), validate, solve: shared by both Pyomo interfaces."""

    def __init__(self):
        self.compiled: _Compiled | None = None
        self.compilations = 0

    def reset(self) -> None:
        self.compiled = None

    def _compiled_for(self, model) -> _Compiled:
        from caspar_backend.adapters.pyomo import pyomo_to_model
        from caspar_backend.problem import Problem

        structure = _structure(model)
        c = self.compiled
        if (c is not None and c.model is model and _same_structure(c.structure, structure)
                and _vars_unchanged(c.mapping)):
            return c
        nlp = pyomo_to_model(model)            # raises, naming the component
        self.compiled = None                   # never keep a stale problem
        c = _Compiled(model, Problem(nlp), nlp.meta["pyomo"], structure)
        self.compiled = c
        self.compilations += 1
        return c

    def prepare(self, model, options, time_limit=None, *, legacy=False) -> _Prepared:
        """Validate options and model; compile or reuse; read the data.  Raises
        (OptionError, ModelError, ...) without modifying the model."""
        from caspar_backend.solver.options import resolve_options

        if not hasattr(model, "component_data_objects"):
            raise ModelError(f"the caspar Pyomo solver expects a Pyomo model or Block, "
                             f"got {type(model).__name__}")
        if hasattr(model, "is_constructed") and not model.is_constructed():
            raise ModelError(f"model {model.name} is not constructed (create an "
                             "instance first)")
        t0 = time.perf_counter()
        opts, warm = split_options(options, time_limit, strip_of_prefix=legacy)
        resolve_options(opts)                  # unknown/invalid options fail here
        compiled = self._compiled_for(model)
        mapping = compiled.mapping
        data = mapping.refresh()
        _check_consistent(mapping, data)
        data, infeasible = _trivial_rows(mapping, data)
        # the evaluator's device, chosen as Problem.solve does ('auto' weighs the
        # size); an unusable GPU is a DeviceError here, before the model is touched
        device = _choose_device(opts.pop("device", "cpu"), mapping.n, mapping.m)
        if mapping.n == 0:
            compiled = None
        lam_g0 = lam_x0 = None
        if warm and compiled is not None:
            lam_g0, lam_x0 = self._warm_multipliers(model, mapping)
        return _Prepared(model, compiled, data, opts, device, lam_g0, lam_x0,
                         time.perf_counter() - t0, infeasible)

    @staticmethod
    def _warm_multipliers(model, mapping):
        exported = lambda s: s.export_enabled()  # noqa: E731
        dual = _suffix_values(model, "dual", mapping.constraints, exported)
        zl = _suffix_values(model, "ipopt_zL_in", mapping.x_vars, exported)
        zu = _suffix_values(model, "ipopt_zU_in", mapping.x_vars, exported)
        return warm_start_multipliers(mapping.sense, dual, zl, zu)

    def solve(self, prep: _Prepared, tee_streams=()) -> _Outcome:
        """Run the interior-point method on a prepared problem."""
        from caspar_backend.solver import solve_nlp

        t0 = time.perf_counter()
        c = prep.compiled
        mapping = c.mapping
        data = prep.data
        problem = c.problem
        writer = _TeeWriter(tee_streams)
        problem.p = data.p
        ev = problem.evaluator(prep.device)
        opts = dict(prep.options)
        opts["stream"] = writer
        # solve_nlp, not Problem.solve: the bounds just re-read from the model
        # (refresh) must be used, and f stays in the minimization form s*F
        result = solve_nlp(ev, data.lbx, data.ubx, data.lbg, data.ubg, data.x0,
                           lam_g0=prep.lam_g0, lam_x0=prep.lam_x0,
                           var_names=problem.var_names, con_names=problem.con_names,
                           options=opts)
        writer.flush()
        row = pyomo_status(result.status)
        solution = None
        if row.has_iterate:
            solution = PyomoSolution.from_result(mapping, result, data.lbx, data.ubx)
            # a constant row constrains nothing: its dual is exactly 0
            solution.dual[mapping.trivial_rows] = 0.0
        return _Outcome(mapping, result, row, solution, writer.getvalue(),
                        time.perf_counter() - t0)


def _trivial_rows(mapping, data):
    """``(data, message)``: the NL writer's treatment of rows with no free variable.

    Pyomo's NL writer leaves such rows out of the problem and raises
    ``InfeasibleConstraintException`` when one is outside its bounds by more than
    its ``TOL`` (absolute), so ipopt reports infeasibility without running.  The
    compiled problem keeps the rows (which rows are constant is structural, but
    whether they hold depends on Param and fixed-Var values, re-read every
    solve), so here: a violated one gives the message naming it; otherwise their
    bounds are opened to (-inf, inf) for this solve, so a row with no Jacobian
    entries neither makes the KKT system singular (an equality) nor enters the
    barrier (an inequality).
    """
    rows = mapping.trivial_rows
    if not rows.size:
        return data, None
    from pyomo.repn.ampl import TOL      # the NL writer's tolerance for trivial rows

    hit = mapping.trivial_violation(data, TOL)
    if hit is not None:
        j, val = hit
        c = mapping.constraints[j]
        lo = float(data.lbg[j] + mapping.shift[j])
        hi = float(data.ubg[j] + mapping.shift[j])
        return data, (f"constraint {c.name} is trivially infeasible: its body depends on "
                      f"no free variable and has the value {val!r} outside its bounds "
                      f"[{lo!r}, {hi!r}]")
    lbg, ubg = data.lbg.copy(), data.ubg.copy()
    lbg[rows], ubg[rows] = -math.inf, math.inf
    return dataclasses.replace(data, lbg=lbg, ubg=ubg), None


def _choose_device(device: str, n: int, m: int) -> str:
    try:
        from caspar_backend.solver.driver import choose_device
    except ImportError:                        # a core without device selection
        return device
    return choose_device(device, n, m)


def _tee_streams(tee) -> list:
    """Legacy ``tee``: True -> the current ``sys.stdout``; a stream -> itself."""
    if tee is True:
        return [sys.stdout]
    if not tee:
        return []
    if isinstance(tee, (list, tuple)):
        return list(tee)
    return [tee]


def _message(text: str) -> str:
    return f"{SOLVER_NAME} {__version__}: {text}"


# ===================================================== contrib (SolverBase) API
@final
class CasparSolutionLoader(SolutionLoader):
    """``pyomo.contrib.solver`` solution loader over a :class:`PyomoSolution`.

    ``load_vars`` writes ``x`` into the problem's variables only (fixed and
    unused variables are not touched); ``load_import_suffixes`` fills the model's
    import Suffixes ``dual``, ``rc``, ``ipopt_zL_out`` and ``ipopt_zU_out`` (signs:
    :mod:`.results`).  ``solution`` None: the solve produced no iterate.
    """

    def __init__(self, model, solution: PyomoSolution | None):
        self._pyomo_model = model
        self._solution = solution

    def get_number_of_solutions(self) -> int:
        return 0 if self._solution is None else 1

    def _require(self) -> PyomoSolution:
        if self._solution is None:
            raise NoSolutionError()
        return self._solution

    def get_vars(self, vars_to_load=None):
        sol = self._require()
        full = ComponentMap(zip(sol.variables, sol.x.tolist()))
        if vars_to_load is None:
            return full
        out = ComponentMap()
        for v in vars_to_load:
            if v not in full:
                raise ValueError(f"variable {v.name} is not part of the problem caspar "
                                 "solved (fixed, or in no active constraint or objective)")
            out[v] = full[v]
        return out

    #: the name of the appsi-era interface
    get_primals = get_vars

    def load_vars(self, vars_to_load=None) -> None:
        for v, val in self.get_vars(vars_to_load).items():
            v.set_value(val, skip_validation=True)
        StaleFlagManager.mark_all_as_stale(delayed=True)

    def get_duals(self, cons_to_load=None):
        sol = self._require()
        pairs = zip(sol.constraints, sol.dual.tolist())
        if cons_to_load is None:
            return dict(pairs)
        wanted = set(cons_to_load)
        return {c: d for c, d in pairs if c in wanted}

    def get_reduced_costs(self, vars_to_load=None):
        sol = self._require()
        pairs = zip(sol.variables, sol.rc_ipopt_style().tolist())
        if vars_to_load is None:
            return ComponentMap(pairs)
        wanted = {id(v) for v in vars_to_load}
        return ComponentMap((v, r) for v, r in pairs if id(v) in wanted)

    def load_import_suffixes(self) -> None:
        suffixes = self._collect_and_clear_import_suffixes()
        if self._solution is None:
            return
        sol = self._solution
        if "dual" in suffixes:
            suffixes["dual"].update(self.get_duals())
        if "rc" in suffixes:
            suffixes["rc"].update(self.get_reduced_costs())
        for name, vals in (("ipopt_zL_out", sol.zl), ("ipopt_zU_out", sol.zu)):
            if name in suffixes:
                suffixes[name].update(zip(sol.variables, vals.tolist()))


@final
class CasparConfig(SolverConfig):
    """``SolverConfig``: tee, load_solutions, raise_exception_on_nonoptimal_result,
    time_limit (-> ``max_wall_time``), solver_options (IPOPT's option names,
    :mod:`caspar_backend.solver.options` plus :data:`FRONTEND_OPTIONS`).
    ``working_dir`` and ``symbolic_solver_labels`` are accepted and unused (no
    files are written)."""


@final
class CasparResults(Results):
    """contrib ``Results`` with ``iteration_count`` (also in ``extra_info``, where
    Pyomo 6.10's ipopt puts it)."""

    def __init__(self, *args, **kwds):
        super().__init__(*args, **kwds)
        if "iteration_count" not in self:
            self.iteration_count = self.declare(
                "iteration_count",
                ConfigValue(default=None, description="Interior-point iterations."))


@final
class CasparSolver(SolverBase):
    """caspar's interior-point NLP solver as a ``pyomo.contrib.solver`` interface.

    ``solve(model, **config)`` mirrors ``pyomo.contrib.solver``'s ipopt: the
    termination condition and solution status of :data:`STATUS_MAP`;
    ``raise_exception_on_nonoptimal_result`` (default True) raises
    ``NoOptimalSolutionError`` unless the solution status is optimal;
    ``load_solutions`` raises ``NoSolutionError`` when there is no iterate;
    ``incumbent_objective`` at an optimal point; ``objective_bound`` = -inf
    (minimize) / +inf (maximize), since a local solver proves no bound;
    ``solver_log``; ``timing_info`` (``wall_time``, ``timer``, phases);
    ``extra_info`` (``iteration_count``, ``solver_message``, final unscaled
    errors, ``iteration_log``).
    """

    CONFIG = CasparConfig()

    def __init__(self, **kwds):
        super().__init__(**kwds)
        self._engine = _Engine()

    def available(self):
        return Availability.FullLicense

    def version(self):
        return VERSION

    def is_persistent(self) -> bool:
        return False

    @property
    def compiled_problem(self):
        """The compiled :class:`~caspar_backend.problem.Problem` of the last solve."""
        return None if self._engine.compiled is None else self._engine.compiled.problem

    @property
    def compilations(self) -> int:
        """How many times a model was extracted and compiled by this solver."""
        return self._engine.compilations

    def reset(self) -> None:
        """Forget the compiled problem (the next solve recompiles)."""
        self._engine.reset()

    def solve(self, model, **kwds):
        start = time.perf_counter()
        results = CasparResults()
        results.timing_info.start_timestamp = datetime.datetime.now(datetime.timezone.utc)
        results.solver_name = self.name
        results.solver_version = VERSION
        config = self.config(value=kwds, preserve_implicit=True)
        timer = config.timer
        if timer is None:
            timer = config.timer = HierarchicalTimer()
        if config.threads and config.threads != 1:
            logger.warning("The `threads=%s` option was specified, but this is not used "
                           "by caspar.", config.threads)
        timer.start("prepare")
        try:
            prep = self._engine.prepare(model, config.solver_options.value(),
                                        config.time_limit)
        finally:
            timer.stop("prepare")
        # as contrib's ipopt: every Var is stale until a solution is loaded (only
        # now: a rejected model keeps its stale flags)
        StaleFlagManager.mark_all_as_stale()
        solution = None
        if prep.compiled is None:
            results.termination_condition = TerminationCondition.emptyModel
            results.solution_status = SolutionStatus.noSolution
            results.extra_info.iteration_count = results.iteration_count = 0
        elif prep.infeasible is not None:
            # as contrib's ipopt when the NL writer finds a trivially infeasible row
            results.termination_condition = TerminationCondition.provenInfeasible
            results.solution_status = SolutionStatus.noSolution
            results.extra_info.iteration_count = results.iteration_count = 0
            results.extra_info.solver_message = prep.infeasible
            results.solver_log = prep.infeasible + "\n"
        else:
            timer.start("solve")
            try:
                out = self._engine.solve(prep, config.tee)
            finally:
                timer.stop("solve")
            solution = out.solution
            self._fill(results, prep, out)
        results.solution_loader = CasparSolutionLoader(model, solution)

        if (config.raise_exception_on_nonoptimal_result
                and results.solution_status != SolutionStatus.optimal):
            raise NoOptimalSolutionError()
        if config.load_solutions:
            if results.solution_status == SolutionStatus.noSolution:
                raise NoSolutionError()
            timer.start("load")
            results.solution_loader.load_solution()
            timer.stop("load")
        if (results.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
                and solution is not None and solution.objective is not None):
            results.incumbent_objective = solution.objective
        mapping = self._engine.compiled.mapping if self._engine.compiled else None
        if mapping is not None and mapping.objective is not None:
            results.objective_bound = math.inf if mapping.sense < 0 else -math.inf
        results.solver_config = config
        results.timing_info.timer = timer
        results.timing_info.wall_time = time.perf_counter() - start
        return results

    @staticmethod
    def _fill(results, prep, out) -> None:
        row, res = out.row, out.result
        results.termination_condition = enum_member(TerminationCondition,
                                                    row.contrib_termination)
        results.solution_status = enum_member(SolutionStatus, row.contrib_solution)
        results.solver_log = out.log
        results.iteration_count = res.iterations
        extra = results.extra_info
        extra.iteration_count = res.iterations
        extra.solver_message = contrib_message(_message(row.message), row.ampl_code)
        extra.return_status = res.status
        unscaled = res.final_errors.get("unscaled", {})
        for key, name in (("dual", "dual_infeasibility"), ("constr", "constraint_violation"),
                          ("compl", "complementarity_error"), ("E0", "overall_nlp_error")):
            if key in unscaled:
                extra[name] = float(unscaled[key])
        extra.add("iteration_log", ConfigList([_record_dict(r) for r in res.history],
                                              visibility=ADVANCED_OPTION))
        timing = results.timing_info
        timing.extract_and_compile = prep.t_extract
        timing.solver = out.seconds
        for k, v in res.timings.items():
            timing[f"solver_{k}"] = float(v)


def _record_dict(r) -> dict:
    """One iteration of the log, with the keys contrib's ipopt parses from its log."""
    return dict(iter=r.iter, objective=r.objective, inf_pr=r.inf_pr, inf_du=r.inf_du,
                lg_mu=math.log10(r.mu) if r.mu > 0 else None, d_norm=r.d_norm,
                lg_rg=math.log10(r.regularization) if r.regularization > 0 else None,
                alpha_du=r.alpha_du, alpha_pr=r.alpha_pr, ls=r.ls,
                restoration=r.restoration, step_acceptance=r.step_type.strip() or None)


# ==================================================== legacy (OptSolver) API
#: legacy solve() keywords that are accepted and have nothing to do here
_LEGACY_IGNORED = ("keepfiles", "symbolic_solver_labels", "solnfile", "warmstart",
                   "available", "solver_io", "select")


@final
class LegacyCasparSolver(OptSolver):
    """caspar as ``pyomo.environ.SolverFactory('caspar')`` (the legacy interface).

    ``solve(model, tee=False, load_solutions=True, options=None, options_string='',
    timelimit=None, logfile=None, report_timing=False, suffixes=None, warmstart=...,
    keepfiles=..., symbolic_solver_labels=...)`` returns a ``SolverResults`` laid
    out as ``SolverFactory('ipopt')``'s: the status pairs of :data:`STATUS_MAP`,
    ``solver.id`` = IPOPT's AMPL code, ``solver.message``, ``solver.time``, the
    iteration count in ``solver.statistics.black_box.number_of_iterations``, and
    the objective value as the finite side of ``problem.lower_bound`` /
    ``upper_bound``.  The solver log text is ``results.solver_log`` (a plain
    attribute: a results entry would break ``results.write()``'s YAML) and
    ``opt._log``.

    Loading goes through ``model.solutions.load_from`` as for every legacy
    solver: ok statuses load silently, warning statuses (infeasible, limits) load
    the last iterate with Pyomo's warning, error statuses raise ``ValueError``
    with ``load_solutions=True``.  A pyomo.kernel block is loaded as
    ``OptSolver.solve`` loads one: ``model.load_solution(results.solution(0))``
    with the symbol map on the solution (kept there with ``load_solutions=False``
    for a later ``load_solution``), kernel import suffixes filled.  The primal start is always the model's current
    values (IPOPT's start from the NL file), hence ``warmstart`` is accepted;
    ``keepfiles`` and ``symbolic_solver_labels`` are accepted and unused.
    """

    def __init__(self, **kwds):
        kwds["type"] = SOLVER_NAME
        kwds.setdefault("doc", "caspar interior-point NLP solver (IPOPT's algorithm)")
        super().__init__(**kwds)
        self._engine = _Engine()
        self._log = ""
        self._capabilities = Bunch(linear=True, integer=False, quadratic_objective=True,
                                   quadratic_constraint=True, sos1=False, sos2=False)

    def available(self, exception_flag=True) -> bool:
        return True

    def license_is_valid(self) -> bool:
        return True

    def warm_start_capable(self) -> bool:
        return True

    def _get_version(self):
        return VERSION + (0,)

    @property
    def compiled_problem(self):
        """The compiled :class:`~caspar_backend.problem.Problem` of the last solve."""
        return None if self._engine.compiled is None else self._engine.compiled.problem

    @property
    def compilations(self) -> int:
        """How many times a model was extracted and compiled by this solver."""
        return self._engine.compilations

    def reset(self) -> None:
        """Forget the compiled problem (the next solve recompiles)."""
        self._engine.reset()

    def solve(self, *args, **kwds):
        from pyomo.core.kernel.block import IBlock

        if len(args) != 1 or not isinstance(args[0], (BlockData, IBlock)):
            raise ValueError("SolverFactory('caspar').solve expects one Pyomo model "
                             f"(a ConcreteModel, Block or pyomo.kernel block), got {args!r}")
        model = args[0]
        kernel = isinstance(model, IBlock)
        options = dict(self.options)
        options.update(kwds.pop("options", None) or {})
        options.update(self._options_string_to_dict(kwds.pop("options_string", "")))
        tee = kwds.pop("tee", False)
        load_solutions = kwds.pop("load_solutions", True)
        timelimit = kwds.pop("timelimit", None)
        logfile = kwds.pop("logfile", None)
        report_timing = kwds.pop("report_timing", False)
        wanted = list(kwds.pop("suffixes", None) or [])
        for key in _LEGACY_IGNORED:
            kwds.pop(key, None)
        if kwds:
            raise ValueError(f"Solver={SOLVER_NAME} passed unrecognized keywords: \n\t"
                             + "\n\t".join(f"{k} = {v}" for k, v in kwds.items()))

        prep = self._engine.prepare(model, options, timelimit, legacy=True)
        if prep.compiled is None:
            raise ValueError(f"No variables appear in the active constraints or objective "
                             f"of model {model.name}; there is nothing for caspar to solve")
        if prep.infeasible is not None:
            # IPOPT, given the violated constant row (the legacy NL route keeps
            # trivial rows), ends with Infeasible_Problem_Detected: that status
            # pair, reported without solving, so there is no iterate to load
            out = _Outcome(prep.compiled.mapping, None,
                           pyomo_status("Infeasible_Problem_Detected"), None,
                           prep.infeasible + "\n", 0.0)
            for s in _tee_streams(tee):
                s.write(out.log)
            message, iterations = _message(prep.infeasible), 0
        else:
            out = self._engine.solve(prep, _tee_streams(tee))
            message, iterations = _message(out.row.message), out.result.iterations
        self._log = out.log
        mapping, row = out.mapping, out.row
        suffixes = _wanted_suffixes(wanted + _model_import_suffixes(model, kernel))
        results, smap = legacy_results(
            model, row, out.solution, sense=mapping.sense, n=mapping.n, m=mapping.m,
            has_objective=mapping.objective is not None,
            message=message, solver_name=f"{SOLVER_NAME} {__version__}",
            iterations=iterations, seconds=out.seconds, suffixes=suffixes)
        t_load = time.perf_counter()
        results._smap = None
        results._smap_id = None
        if kernel:
            _load_kernel(model, results, smap, load_solutions)
        else:
            _load_aml(model, results, smap, load_solutions)
        t_load = time.perf_counter() - t_load
        object.__setattr__(results, "solver_log", out.log)
        if logfile is not None:
            with open(logfile, "w") as fh:
                fh.write(out.log)
        if report_timing:
            print(f"      {prep.t_extract:6.2f} seconds required for presolve")
            print(f"      {out.seconds:6.2f} seconds required for solver")
            print(f"      {t_load:6.2f} seconds required for postsolve")
        return results


def _model_import_suffixes(model, kernel: bool) -> list:
    """Names of the model's active import Suffixes (top level for kernel, as
    ``OptSolver.solve`` collects them)."""
    if kernel:
        from pyomo.core.kernel.suffix import import_suffix_generator

        return [s.storage_key for s in
                import_suffix_generator(model, active=True, descend_into=False)]
    return [name for name, _ in active_import_suffix_generator(model)]


def _load_aml(model, results, smap, load_solutions) -> None:
    """Load through ``model.solutions`` as every legacy solver does for an AML
    model: warning statuses log and load, error statuses raise."""
    if not hasattr(model, "solutions"):
        # a sub-Block: Pyomo's Block.write adds the container the same way
        from pyomo.core.base.PyomoModel import ModelSolutions

        model.solutions = ModelSolutions(model)
    if smap is not None:
        model.solutions.add_symbol_map(smap)
        results._smap_id = id(smap)
    if load_solutions:
        model.solutions.load_from(results, select=0, default_variable_value=None)
        results._smap_id = None
        results.solution.clear()
    elif smap is not None:
        results._smap = smap
        model.solutions.delete_symbol_map(id(smap))


def _load_kernel(model, results, smap, load_solutions) -> None:
    """Load as ``OptSolver.solve`` does for a pyomo.kernel block: kernel has no
    ``model.solutions``; the symbol map travels on the solution itself, so a
    caller with ``load_solutions=False`` can ``model.load_solution(results.solution(0))``
    later.  Without a solution nothing is loaded and, when loading was asked
    for, Pyomo's "No solution is available" error is logged."""
    del results._smap_id
    if len(results.solution) == 1:
        soln = results.solution(0)
        soln.symbol_map = smap
        soln.default_variable_value = None
        if load_solutions:
            model.load_solution(soln)
    elif load_solutions:
        logging.getLogger("pyomo.opt").error("No solution is available")


def _wanted_suffixes(patterns) -> set:
    """Suffix names to report: as the legacy ``.sol`` reader, each requested name is
    a regular expression matched against the names the solver provides."""
    out = set()
    for pat in patterns:
        for name in IMPORT_SUFFIXES:
            if re.match(str(pat), name):
                out.add(name)
    return out


# ================================================================ registration
def register() -> None:
    """Register ``'caspar'`` with ``pyomo.contrib.solver``'s SolverFactory and, through
    it, the legacy ``pyomo.opt`` SolverFactory (idempotent; replaces the deferred
    entries :mod:`caspar_backend._pyomo_hook` registers)."""
    from pyomo.contrib.solver.common.factory import SolverFactory

    if SOLVER_NAME in SolverFactory and SolverFactory.get_class(SOLVER_NAME) is CasparSolver:
        return
    SolverFactory.register(SOLVER_NAME, legacy_name=SOLVER_NAME,
                           doc="caspar interior-point NLP solver (IPOPT's algorithm)"
                           )(CasparSolver, LegacyCasparSolver)
    from caspar_backend._pyomo_hook import _register_v2_alias

    _register_v2_alias(LegacyCasparSolver)


# as every Pyomo solver plugin: importing the module registers it
register()


__all__ = ["CasparSolver", "LegacyCasparSolver", "CasparConfig", "CasparResults",
           "CasparSolutionLoader", "register", "split_options", "FRONTEND_OPTIONS",
           "REFUSED_OPTIONS", "STATUS_MAP", "VERSION"]
