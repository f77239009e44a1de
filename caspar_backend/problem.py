"""A compiled NLP: pattern groups, derivative templates and evaluators.

``Problem(model)`` groups the objective's terms and the constraints of an
:class:`~caspar_backend.model.NLPModel` into pattern groups, derives each
template's gradient and Hessian once, and hands out evaluators
(``problem.evaluator('cpu')``) and solves (``problem.solve(...)``).
Compilation does not depend on parameter values: ``p`` can change between
solves without recompiling.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
import time
from typing import final

import numpy as np

from .device import resolve_device
from .model import NLPModel, as_vector, check_inputs, numbers
from .patterns import block_group, constraint_instances, group_expressions, split_terms
from .regroup import split_rare_sums


@final
class StructureToken:
    """Final.  The identity of a compiled structure: a Problem and its :meth:`twins
    <Problem.twin>` hold the same token, and caches of the structure (the compiled
    interior point's workspace layouts, :func:`caspar_backend.compiled.solve.layout_for`)
    key by it."""

    __slots__ = ("__weakref__",)


class Problem:
    """The compiled form of one NLP (final).

    ``hessian=False`` derives first derivatives only (no Hessian templates, code or
    layout): the compiled problem then serves residual and Jacobian evaluations, as
    least squares (:mod:`caspar_backend.lsq`) needs, but not the interior point."""

    def __init__(self, model: NLPModel, hessian: bool = True):
        t0 = time.perf_counter()
        self.model = model
        self.hessian = hessian
        self.structure_key = StructureToken()
        #: with opaque calls (caspar_backend.opaque): the compiled problem over (x, y)
        #: whose evaluator the composed evaluator wraps; its groups are this problem's
        self.extended = None
        if model.opaque is not None:
            from .opaque.calls import extended_model

            self.extended = Problem(extended_model(model))
            self.objective_groups = self.extended.objective_groups
            self.constraint_groups = self.extended.constraint_groups
            self.compile_time = time.perf_counter() - t0
            self._evaluators, self._augmented, self._lock = {}, None, threading.Lock()
            return
        obj_terms = split_terms(model.objective)
        inst, rows = constraint_instances(model.constraints, model.constraint_rows)
        obj_blocks, con_blocks, by_row = [], [], []
        # block instances that repeat a variable across slots go the flat way
        repeated = {}       # blocks sharing a variable table (a vector template's components)
        for blocks, out, kind in ((model.objective_blocks, obj_blocks, "objective"),
                                  (model.constraint_blocks, con_blocks, "constraints")):
            for b in blocks:
                rep = repeated.get(id(b.var_table))
                if rep is None:
                    rep = repeated[id(b.var_table)] = b.repeated_var_instances()
                if rep.size:
                    keep = np.setdiff1d(np.arange(b.size), rep)
                    flat = [b.instance(int(i), model.graph) for i in rep]
                    if kind == "objective":
                        obj_terms += flat
                    else:
                        inst += flat
                        rows = np.concatenate([rows, b.rows[rep]])
                    b = b.subset(keep)
                if b.size:
                    dest = by_row if kind == "constraints" and b.placed_by_row else out
                    dest.append(block_group(b, kind, None))
        # a zero term adds nothing but a kernel launch (the flat objective of a model
        # given wholly as blocks is the constant 0); keep one term when it is all there is
        nonzero = [t for t in obj_terms if not (t.is_const and t.attr == 0.0)]
        if nonzero or obj_blocks:
            obj_terms = nonzero
        self.objective_groups = group_expressions(obj_terms, "objective", None,
                                                  hessian) + obj_blocks
        # the expression rows' groups (first-seen order), with the blocks placed by row
        # among them by their first row -- where the same rows given as expressions
        # would have put them (TemplateBlock.placed_by_row) -- then the other blocks
        groups = group_expressions(inst, "constraints", rows, None)
        if by_row:
            groups = sorted(groups + by_row,
                            key=lambda grp: int(grp.rows.min()) if grp.size else -1)
        self.constraint_groups = split_rare_sums(groups + con_blocks)
        for grp in self.constraint_groups + obj_blocks:
            grp.derive(hessian)
        self.compile_time = time.perf_counter() - t0
        # compiled evaluators by device, and the augmented problem of
        # parameter_derivatives: built once, under the lock (threads may ask at once)
        self._evaluators: dict = {}
        self._augmented = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------- pickling
    def __getstate__(self) -> dict:
        """What a pickle keeps: the model and the pattern groups (everything a solve
        needs).  Left behind: the compiled evaluators (generated code, device buffers),
        the augmented problem of :meth:`parameter_derivatives` and the lock -- caches
        of this process, rebuilt on first use by the process that unpickles.  This is
        how :mod:`caspar_backend.batch.distributed` ships a problem to Dask workers."""
        state = dict(self.__dict__)
        state.update(_evaluators={}, _augmented=None)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        state.setdefault("extended", None)  # pickled before opaque calls existed
        state.setdefault("hessian", True)
        state.setdefault("structure_key", StructureToken())
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def twin(self) -> "Problem":
        """A Problem of this compiled structure -- the pattern groups, their derivatives
        and the expression graph shared, not copied -- with a model of its own (values,
        names, meta: a shallow copy to be set) and caches of its own (evaluators,
        lock): what reading the same program again would give, without reading,
        grouping or deriving (:mod:`caspar_backend.adapters.casadi.problem_cache`).
        Not for problems with opaque calls (their evaluators hold host state)."""
        if self.extended is not None:
            raise ValueError("a problem with opaque calls has no twin")
        twin = copy.copy(self)
        twin.model = copy.copy(self.model)
        twin.model.meta = dict(self.model.meta)
        twin._evaluators, twin._augmented = {}, None
        twin._lock = threading.Lock()
        return twin

    def save(self, path) -> None:
        """Write the compiled problem to ``path``; :func:`caspar_backend.load_problem`
        reads it back without reading, grouping or deriving again
        (:mod:`caspar_backend.persist`)."""
        from .persist import save

        save(self, path)

    # ---------------------------------------------------------------- sizes
    n = property(lambda self: self.model.n)
    m = property(lambda self: self.model.m)
    n_params = property(lambda self: self.model.n_params)
    lbx = property(lambda self: self.model.lbx)
    ubx = property(lambda self: self.model.ubx)
    lbg = property(lambda self: self.model.lbg)
    ubg = property(lambda self: self.model.ubg)
    x0 = property(lambda self: self.model.x0)
    var_names = property(lambda self: self.model.var_names)
    con_names = property(lambda self: self.model.con_names)
    param_names = property(lambda self: self.model.param_names)

    @property
    def p(self) -> np.ndarray:
        """Current parameter values."""
        return self.model.p

    @p.setter
    def p(self, values) -> None:
        self.model.p = self._param_vector(values)

    def _param_vector(self, values) -> np.ndarray:
        """``values`` as a new float64 vector of length n_params (else ModelError)."""
        v = numbers("the parameter vector p", values, copy=True).reshape(-1)
        if v.size != self.n_params:
            from .errors import ModelError

            raise ModelError(f"parameter vector has {v.size} entries, expected {self.n_params}")
        return v

    @property
    def groups(self) -> list:
        """All pattern groups: objective groups first, then constraint groups."""
        return self.objective_groups + self.constraint_groups

    def __repr__(self) -> str:
        return (f"<caspar Problem n={self.n} m={self.m} params={self.n_params} "
                f"groups={len(self.objective_groups)}+{len(self.constraint_groups)}>")

    # ----------------------------------------------------------- evaluators
    def evaluator(self, device: str = "cpu", p=None):
        """An :class:`~caspar_backend.evaluators.base.Evaluator` on ``device``.

        ``p=None``: the problem's shared evaluator of that device, bound to the current
        parameter values (one per device, reused by every such call: not for concurrent
        use).  ``p`` given: a new evaluator of its own bound to ``p`` -- it shares the
        compiled code, tables and structures and owns its parameter vector and work
        buffers (:meth:`Evaluator.bound
        <caspar_backend.evaluators.base.Evaluator.bound>`), so evaluators obtained this
        way may be used from different threads at once."""
        if self.extended is not None:  # host functions: the CPU
            device = self.resolve_device(device, solver=False)
        ev = self._compiled(resolve_device(device))
        if p is not None:
            return ev.bound(p)
        ev.set_params(self.p)
        return ev

    def resolve_device(self, device: str, solver: bool = True) -> str:
        """'cpu' or 'cuda' for the option value ``device`` and this problem's size
        (:func:`caspar_backend.device.resolve_device`).  A model with functions
        evaluated on the host (caspar_backend.opaque) runs on the CPU: 'auto' is
        'cpu', and 'cuda' raises a DeviceError naming the functions."""
        if self.extended is not None and device in ("auto", "cuda"):
            if device == "auto":
                return "cpu"
            from .errors import DeviceError

            raise DeviceError(f"device='cuda': this model calls functions evaluated on the "
                              f"host through its front end ({self.host_functions()}); "
                              "solve it with device='cpu'")
        return resolve_device(device, size=self.n + self.m, solver=solver)

    def _compiled(self, device: str):
        """The device's evaluator, generated and compiled on first use (once, even
        when several threads ask at the same time)."""
        ev = self._evaluators.get(device)
        if ev is None:
            with self._lock:
                ev = self._evaluators.get(device)
                if ev is None and self.extended is not None:
                    ev = self._evaluators[device] = self._composed(device)
                elif ev is None:
                    if device == "cuda":
                        from .evaluators.cuda_eval import CudaEvaluator as cls
                        from .linsolve import cudss_preload

                        # the solver's stack loads beside the kernels' generation
                        # (linsolve/cudss_preload.py)
                        cudss_preload.start()
                    else:
                        from .evaluators.numpy_eval import NumpyEvaluator as cls
                    t0 = time.perf_counter()
                    ev = cls(self)
                    ev.build_seconds = time.perf_counter() - t0
                    self._evaluators[device] = ev
        return ev

    # ---------------------------------------------------------- inspection
    def summary(self):
        """Sizes, templates, sparsity, a memory estimate and the device 'auto' would
        pick, and why (:class:`~caspar_backend.inspection.ModelSummary`; print it)."""
        from .inspection import model_summary

        return model_summary(self)

    def compilation_info(self, device: str = "cpu"):
        """Per template: instances, slots, generated lines; the evaluator's build time;
        on 'cuda' the module's cache hit and each kernel's registers and memory
        (:class:`~caspar_backend.inspection.CompilationInfo`; print it)."""
        from .inspection import compilation_info

        return compilation_info(self, device)

    def profile(self, result=None):
        """Seconds of the setup phases (group + derive, each device's evaluator) and, for
        a ``result`` of this problem's solve, of its phases per iteration
        (:class:`~caspar_backend.inspection.Profile`; print it)."""
        from .inspection import solve_profile

        return solve_profile(self, result)

    def advice(self, x=None):
        """Modeling advice from the graph and, at ``x`` (default: the start point),
        the derivatives (:class:`~caspar_backend.inspection.Advice`; print it)."""
        from .inspection import modeling_advice

        return modeling_advice(self, x)

    def _composed(self, device: str):
        """The evaluator of a model with opaque calls: the host functions and the
        extended problem's CPU evaluator composed (caspar_backend.opaque).  The host
        functions run on the CPU, so the GPU is refused, naming them."""
        self.resolve_device(device)  # 'cuda' raises, naming the functions
        from .opaque.evaluator import ComposedEvaluator

        return ComposedEvaluator(self, self.extended._compiled("cpu"), self.model.opaque,
                                 self.n, self.m)

    def host_functions(self) -> str:
        """The functions of the model evaluated on the host (caspar_backend.opaque),
        described and comma-separated; '' for none."""
        if self.extended is None:
            return ""
        return ", ".join(g.fn.describe() for g in self.model.opaque.groups)

    def _refuse_opaque(self, what: str) -> None:
        if self.extended is not None:
            from .errors import ModelError

            raise ModelError(f"{what} is not available for a model with functions "
                             f"evaluated on the host ({self.host_functions()})")

    def cuda_source(self) -> str:
        """The generated CUDA module of the problem: every group's device functions and
        the dispatch kernels (no GPU needed to read it)."""
        from .codegen_cuda import generate_cuda_source

        return generate_cuda_source(self.objective_groups, self.constraint_groups)

    def numpy_source(self) -> str:
        """The generated NumPy source of every group, for inspection."""
        from .codegen_numpy import generate_source

        parts = []
        for kind, groups in (("objective", self.objective_groups),
                             ("constraint", self.constraint_groups)):
            for k, g in enumerate(groups):
                parts.append(generate_source(g.root, g.grad, g.hess,
                                             f"{kind} group {k} ({g.size} instances)"))
        return "\n".join(parts)

    # ------------------------------------------------------ parameter derivatives
    def parameter_derivatives(self, x, lam_g, p=None, obj_factor: float = 1.0) -> dict:
        """Derivatives with respect to the parameters at ``(x, p)`` (default: the
        current ``p``): ``grad_p``, ``jac_p`` (m x n_p), ``hess_xp`` (n x n_p) and
        ``lam_p`` = dL/dp with ``L = obj_factor f + lam_g^T g`` -- what CasADi's
        ``lam_p`` output and solution sensitivities need.  The augmented problem
        over ``(x, p)`` is compiled on first use and cached."""
        from .passes import parameters_as_variables, parametric_derivatives

        self._refuse_opaque("parameter_derivatives")
        if self._augmented is None:
            with self._lock:
                if self._augmented is None:
                    self._augmented = Problem(parameters_as_variables(self.model))
        p = self.p if p is None else np.asarray(p, dtype=float).reshape(-1)
        return parametric_derivatives(self._augmented, self.n, x, p, lam_g, obj_factor)

    def _require_hessian(self, what: str) -> None:
        if not self.hessian:
            from .errors import ModelError

            raise ModelError(f"Problem.{what}: this problem was compiled without Hessians "
                             "(hessian=False, for least squares); compile it with "
                             "Problem(model) to solve it as an NLP")

    # ------------------------------------------------------------------ solve
    def solve(self, x0=None, p=None, lam_g0=None, lam_x0=None, *, lbx=None, ubx=None,
              lbg=None, ubg=None, **options):
        """Solve with caspar's interior-point method; see
        :func:`caspar_backend.solver.solve_nlp` for the options and the result.
        Bounds default to the model's; new ones need no recompilation.

        ``p`` (default: the current parameter values) also becomes the current ``p``.

        Thread safety: several threads may call ``solve`` on one ``Problem`` at once,
        each with its own ``p``, ``x0``, bounds and options.  Each solve evaluates
        through an evaluator of its own (:meth:`evaluator` with ``p``: own parameter
        vector and work buffers, shared compiled code) and builds its own solver state,
        so every thread gets the answer of its sequential solve, bit for bit.  Only the
        current ``p`` is shared: pass ``p`` explicitly when threads solve with different
        values.  The shared evaluators of :meth:`evaluator` (``p=None``) are not for
        concurrent use."""
        from .solver import solve_nlp

        self._require_hessian("solve")
        # this solve's own copy of p, whatever other threads store later
        if p is None:
            p = self._param_vector(self.p)
        else:
            p = self._param_vector(p)
            self.model.p = p.copy()
        x0 = as_vector("x0", self.x0 if x0 is None else x0, self.n)
        bounds = [self.model.validated_bounds(name, v) for name, v in
                  (("lbx", lbx), ("ubx", ubx), ("lbg", lbg), ("ubg", ubg))]
        # bad input is a ModelError naming the variables, before any work is done
        check_inputs(*bounds, x0, self.var_names, self.con_names)
        # small problems on the CPU: the compiled interior point, when it applies
        # (caspar_backend.compiled.dispatch; the same iterates as the general path, which
        # takes over where the kernels hand the solve over, and hands it back)
        from .compiled.dispatch import solve as dispatched
        # (a Ctrl-C from here to the general path's handler is one during setup: a
        # KeyboardInterrupt, nothing half made -- tests/solver/test_setup_interrupt.py)
        device = options.get("device", "cpu")
        general_options = {k: v for k, v in options.items() if k != "device"}
        evaluators = []

        def general(resume, started):
            # the time of a compiled attempt counts towards the time limits and the total
            # (compiled/options.py: why a limit is then honoured); 'auto' weighs the
            # problem size (device.AUTO_MIN_SIZE)
            if not evaluators:
                if device == "cuda":
                    # the evaluator first: its build loads the solver's stack in a thread
                    # (linsolve/cudss_preload.py); then the check that raises without it
                    evaluators.append(self.evaluator("cuda", p=p))
                    self.resolve_device(device)
                else:
                    evaluators.append(self.evaluator(self.resolve_device(device), p=p))
            return solve_nlp(evaluators[0], *bounds, x0, lam_g0=lam_g0, lam_x0=lam_x0,
                             var_names=self.var_names, con_names=self.con_names,
                             options=general_options, started=started, resume=resume,
                             hand_back=True)

        res = dispatched(self, x0, p, bounds, options, general, (lam_g0, lam_x0))
        if self.model.sense == -1:  # the model minimizes -f
            res = dataclasses.replace(res, f=-res.f)
        return res

    def solve_batch(self, x0=None, p=None, lam_g0=None, lam_x0=None, *, lbx=None,
                    ubx=None, lbg=None, ubg=None, batch_size=None, client=None,
                    chunk_size=None, retries=None, **options):
        """Solve B instances of this problem in one call: each input is ``None`` (the
        model's value), one vector for every instance, or a (B, k) array with one row
        per instance (:mod:`caspar_backend.batch.inputs`).  Returns a
        :class:`~caspar_backend.batch.result.BatchResult` whose instance b equals the
        :meth:`solve` of row b with the same options.  The current ``p`` is not
        changed.

        ``client``: a ``dask.distributed.Client``; the instances are solved in chunks of
        ``chunk_size`` on its workers, each on its own device (``device='auto'``: the
        worker's GPU when it has one), a chunk whose task raised is run again up to
        ``retries`` times, and the result is the same (bit for bit on CPU workers;
        :mod:`caspar_backend.batch.distributed`, which also says what a failed chunk's
        instances get).  A model with functions evaluated on the host
        (:mod:`caspar_backend.opaque`) solves each instance by its own :meth:`solve`
        (``path`` 'single'), not on a cluster."""
        from .batch.solve import solve_batch

        if client is not None:
            self._refuse_opaque("solve_batch on a Dask cluster")
        self._require_hessian("solve_batch")
        return solve_batch(self, x0, p, lam_g0, lam_x0, lbx=lbx, ubx=ubx, lbg=lbg,
                           ubg=ubg, batch_size=batch_size, client=client,
                           chunk_size=chunk_size, retries=retries, **options)
