"""Shared machinery of both Pyomo interfaces: options, the compiled-problem cache
and the solve (:class:`_Engine`).  See :mod:`.plugin` for the overview."""

from __future__ import annotations

import dataclasses
import io
import logging
import math
import sys
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import final

import numpy as np
from pyomo.core.base import Constraint, Expression, Objective
from pyomo.core.base.constraint import ConstraintData

from caspar_backend.version import __version__
from caspar_backend.device import resolve_device
from caspar_backend.errors import ModelError, NonFiniteError, OptionError, num
from .results import PyomoSolution, pyomo_status, warm_start_multipliers
from .suffixes import scaling_factors, suffix_values

logger = logging.getLogger(__name__)

#: solver version as Pyomo reports it (contrib: 3 ints; legacy ``version()``: 4)
VERSION = tuple(int(p) for p in __version__.split(".")[:3])
SOLVER_NAME = "caspar"


#: IPOPT option names the front-end handles itself (not in the solver's table)
FRONTEND_OPTIONS = MappingProxyType({
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
    "wantsol": "the front-end always reads the solution",
})


#: import Suffix names the front-end fills
IMPORT_SUFFIXES = ("dual", "rc", "ipopt_zL_out", "ipopt_zU_out")


# ===================================================================== options
def split_options(options, time_limit=None, *, strip_of_prefix=False):
    """``(solver_options, warm)``: the options for the solver's table and whether
    the multipliers start from the model's Suffixes.

    ``time_limit`` (seconds) overrides ``max_wall_time`` (``max_cpu_time`` goes to the
    solver's table, which measures CPU time as IPOPT); Pyomo admits a limit of 0
    (``NonNegativeFloat``) where IPOPT's must be positive, so 0 becomes the smallest
    positive double: the limit is exceeded at the first check, as Pyomo's solvers read 0;
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
        else:
            out[key] = val
    if warm:
        # the solver applies IPOPT's warm start (warm_start_* pushes, multipliers from
        # the Suffixes); without it the warm_start_* values are ignored, as in IPOPT
        out.update(warm_opts)
        out["warm_start_init_point"] = True
    if time_limit is not None:
        out["max_wall_time"] = max(float(time_limit), math.ulp(0.0))
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
    #: solve_nlp's user_scaling (nlp_scaling_method 'user-scaling': .suffixes), or None
    user_scaling: tuple | None = None


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
        raise ModelError(f"variable {v.name} has lower bound {num(data.lbx[bad[0]])} "
                         f"above its upper bound {num(data.ubx[bad[0]])}")
    bad = np.flatnonzero(data.lbg > data.ubg)
    if bad.size:
        j = bad[0]
        c = mapping.constraints[j]
        raise ModelError(f"constraint {c.name} has lower bound "
                         f"{num(data.lbg[j] + mapping.shift[j])} above its upper bound "
                         f"{num(data.ubg[j] + mapping.shift[j])}")
    bad = np.flatnonzero(~np.isfinite(data.x0))
    if bad.size:
        v = mapping.x_vars[bad[0]]
        raise NonFiniteError(f"variable {v.name} has the non-finite value "
                             f"{num(data.x0[bad[0]])}")


@final
class EngineAccess:
    """Abstract mixin: what both solver interfaces expose of their ``self._engine``
    (an :class:`_Engine`) -- the cached compiled problem and its reset."""

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

        from .scipy_import import import_scipy

        import_scipy()        # (without Pyomo's eager scipy.stats: .scipy_import)
        if not hasattr(model, "component_data_objects"):
            raise ModelError(f"the caspar Pyomo solver expects a Pyomo model or Block, "
                             f"got {type(model).__name__}")
        if hasattr(model, "is_constructed") and not model.is_constructed():
            raise ModelError(f"model {model.name} is not constructed (create an "
                             "instance first)")
        t0 = time.perf_counter()
        opts, warm = split_options(options, time_limit, strip_of_prefix=legacy)
        resolved = resolve_options(opts)       # unknown/invalid options fail here
        compiled = self._compiled_for(model)
        mapping = compiled.mapping
        data = mapping.refresh()
        _check_consistent(mapping, data)
        data, infeasible = _trivial_rows(mapping, data)
        # the evaluator's device, chosen as Problem.solve does ('auto' weighs the
        # size); an unusable GPU is a DeviceError here, before the model is touched
        device = resolve_device(opts.pop("device", "cpu"), size=mapping.n + mapping.m,
                                solver=True)
        if mapping.n == 0:
            compiled = None
        lam_g0 = lam_x0 = None
        if warm and compiled is not None:
            lam_g0, lam_x0 = self._warm_multipliers(model, mapping)
        scaling = None
        if compiled is not None and resolved.nlp_scaling_method == "user-scaling":
            scaling = scaling_factors(model, mapping)
        return _Prepared(model, compiled, data, opts, device, lam_g0, lam_x0,
                         time.perf_counter() - t0, infeasible, scaling)

    @staticmethod
    def _warm_multipliers(model, mapping):
        exported = lambda s: s.export_enabled()  # noqa: E731
        dual = suffix_values(model, "dual", mapping.constraints, exported)
        zl = suffix_values(model, "ipopt_zL_in", mapping.x_vars, exported)
        zu = suffix_values(model, "ipopt_zU_in", mapping.x_vars, exported)
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
        opts = dict(prep.options)
        opts["stream"] = writer
        evaluators = []

        def general(resume=None, started=None):
            # an evaluator of its own for this solve's p (Problem.solve's thread-safety
            # rule).  solve_nlp, not Problem.solve: the bounds just re-read from the
            # model (refresh) must be used, and f stays in the minimization form s*F
            if not evaluators:
                evaluators.append(problem.evaluator(prep.device, p=data.p))
            return solve_nlp(evaluators[0], data.lbx, data.ubx, data.lbg, data.ubg, data.x0,
                             lam_g0=prep.lam_g0, lam_x0=prep.lam_x0,
                             var_names=problem.var_names, con_names=problem.con_names,
                             options=opts, started=started, resume=resume, hand_back=True,
                             user_scaling=prep.user_scaling)

        if prep.device == "cpu":
            # small problems: the compiled interior point (the same iterates; the general
            # path where the kernels hand over -- caspar_backend.compiled.dispatch)
            from caspar_backend.compiled.dispatch import solve as dispatched

            result = dispatched(problem, data.x0, data.p, [data.lbx, data.ubx, data.lbg,
                                data.ubg], opts, general, (prep.lam_g0, prep.lam_x0))
        else:
            result = general()
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
                      f"no free variable and has the value {num(val)} outside its bounds "
                      f"[{lo!r}, {hi!r}]")
    lbg, ubg = data.lbg.copy(), data.ubg.copy()
    lbg[rows], ubg[rows] = -math.inf, math.inf
    return dataclasses.replace(data, lbg=lbg, ubg=ubg), None


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


def solve_message(row, result) -> str:
    """The solver message of a finished solve: IPOPT's AMPL message for its status
    (``row.message``), then what the solve said beyond its exit message (``result``: a
    SolveResult or a scenario's outcome, with ``status`` and ``message``) -- for an
    evaluation error the function and the component, e.g. "NaN or Inf in a function
    evaluation: constraint c: log(x)", which IPOPT's message lacks."""
    from caspar_backend.solver.status import STATUSES

    text = row.message
    said = getattr(result, "message", "") or ""
    status = STATUSES.get(getattr(result, "status", None))
    if status is not None and said.startswith(status.exit_message):
        extra = said[len(status.exit_message):].strip()
        if extra and extra not in text:
            text = f"{text.rstrip()} {extra}"
    return _message(text)


def _record_dict(r) -> dict:
    """One iteration of the log, with the keys contrib's ipopt parses from its log."""
    return dict(iter=r.iter, objective=r.objective, inf_pr=r.inf_pr, inf_du=r.inf_du,
                lg_mu=math.log10(r.mu) if r.mu > 0 else None, d_norm=r.d_norm,
                lg_rg=math.log10(r.regularization) if r.regularization > 0 else None,
                alpha_du=r.alpha_du, alpha_pr=r.alpha_pr, ls=r.ls,
                restoration=r.restoration, step_acceptance=r.step_type.strip() or None)
