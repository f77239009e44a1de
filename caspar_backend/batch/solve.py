"""``solve_batch``: B instances of one compiled problem in one call.

Instances share the compiled problem (its pattern groups and generated code) and differ
in the parameters ``p``, the starting point and multipliers, and the variable and
constraint bounds (:mod:`.inputs`).  Each instance's answer is that of its own
:meth:`Problem.solve <caspar_backend.problem.Problem.solve>` with the same options:
the same status, the same iterations and the same solution up to round-off.

How: the instances are grouped by the structure of their slack problems
(:func:`~.nlp.structure_key`); each group runs the lockstep interior point
(:class:`~.ipm.LockstepIPM`) on all its instances at once -- one batched evaluation per
function kind, one batched KKT factorization per inertia trial.  An instance that meets
a path the lockstep method does not implement (restoration phase, watchdog, safe
slacks, pivoting switch, refinement fall-backs: ``result.reason`` names it) is solved
again from its start by its own single solve.  Options the lockstep method does not
implement (:data:`SEQUENTIAL_OPTIONS`) solve every instance by its own solve
(``result.path``/``reason`` say so).  No per-instance iteration log is printed.

A group the compiled interior point can solve
(:func:`caspar_backend.compiled.cuda.group.kernel_reason`) runs in its kernel instead
(``path`` 'kernel'): on ``device='cpu'`` in calls of up to 64 instances
(:mod:`caspar_backend.compiled.batch_cpu`, :data:`KERNEL_ON_CPU`), on ``device='cuda'``
as one CUDA launch, one thread per instance (:data:`KERNEL_ON_CUDA`), on
``device='auto'`` with a usable GPU by the CUDA kernel from
:data:`AUTO_GPU_MIN_PER_CORE` instances per core on and by the CPU one below; an
instance the kernel ejects is solved by its own solve, as an ejected lockstep instance
is.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

from ..arrays import host
from ..compiled.deadline import WATCHED_MAX
from ..compiled.dispatch import is_square
from ..device import resolve_device
from ..errors import ModelError
from ..solver.interrupt import sigint_as_stop
from ..solver.options import OPTIONS, resolved_options
from ..solver.status import STATUSES
from .inputs import batch_inputs, shared_row, with_infinite_bounds
from .result import BatchResult
from .state import EJECT_REASONS

#: option values for which every instance is solved by its own solve: (name, test of
#: the value that keeps the lockstep path)
SEQUENTIAL_OPTIONS = (
    ("mu_strategy", lambda v: v == "monotone"),
    ("hessian_approximation", lambda v: v == "exact"),
    ("kkt_system", lambda v: v == "augmented"),
    ("inertia_correction_method", lambda v: v == "inertia-based"),
    ("start_with_resto", lambda v: not v),
    ("expect_infeasible_problem", lambda v: not v),
    ("bound_mult_init_method", lambda v: v == "constant"),
    ("warm_start_init_point", lambda v: not v),
    ("iteration_callback", lambda v: v is None),
    ("derivative_test", lambda v: v == "none"),
    ("fixed_variable_treatment", lambda v: v in ("make_parameter", "make_parameter_nodual")),
    # (a batch takes no user factors: its single solves scale nothing, as solve_nlp does
    # without them)
    ("nlp_scaling_method", lambda v: v != "user-scaling"),
)

_SEQUENTIAL_NAMES = frozenset(name for name, _ in SEQUENTIAL_OPTIONS)
#: the options of SEQUENTIAL_OPTIONS the compiled kernels implement: a batch with them is
#: solved by the kernel where it applies, by single solves elsewhere (not in lockstep)
KERNEL_ONLY_OPTIONS = frozenset(("warm_start_init_point",))
assert all(keeps(OPTIONS[name].default) for name, keeps in SEQUENTIAL_OPTIONS)

#: why the instances of a square problem the kernel does not take are solved by their
#: own solves: IPOPT recomputes a square problem's multipliers after every step (the
#: general path's InteriorPoint._feasibility_multipliers, the kernels'
#: feasibility_multipliers), which the lockstep path does not
SQUARE_REASON = "a square problem (IPOPT's feasibility multipliers)"

#: device='cuda': solve the structure groups the compiled kernel can solve by the kernel
#: (caspar_backend.compiled.cuda); False: by the lockstep CuPy path.  Its first launch in
#: a process compiles the kernel (minutes) unless numba-cuda's disk cache holds it
KERNEL_ON_CUDA = True
#: device='cpu': solve the structure groups the compiled kernel can solve by it
#: (caspar_backend.compiled.batch_cpu; its kernels compiled on this machine), in chunks
#: between which a Ctrl-C is seen; False: by the lockstep NumPy path
KERNEL_ON_CPU = True
#: device='auto' where the CUDA kernel is usable: a structure group of fewer than this
#: many instances per core of this process is solved by the CPU kernel instead.  A GPU
#: thread runs an instance's iteration 50-80x slower than a CPU core (IK 0.26 ms against
#: 4-6 us; Van der Pol, N = 50, 17.9 ms against 0.22 ms), and a launch lasts about as
#: long as its slowest thread, so the GPU pays from a few dozen instances per core on.
#: Measured on the H200 host (16 cores; benchmarks/results/raw/gpu_2026-12-05_session38),
#: CPU / GPU seconds: IK B = 100 0.002-0.007 / 0.012-0.014, B = 1,000 0.011-0.021 /
#: 0.021-0.025, B = 10^4 0.12-0.16 / 0.038-0.042; Van der Pol B = 1,000 0.42-0.55 /
#: 0.34-0.38 (so from 1,024 instances on 16 cores: IK's 1,000 on the CPU, Van der Pol's
#: 1,000 too, 25 % slower than on the GPU)
AUTO_GPU_MIN_PER_CORE = 64


def _sequential_reason(opts, skip=frozenset()) -> str:
    """The first option of :data:`SEQUENTIAL_OPTIONS` not in ``skip`` whose value leaves
    the lockstep path (as 'option name=value'), else ''.  Every default keeps it (the
    assert after SEQUENTIAL_OPTIONS), so only options the caller gave can."""
    if _SEQUENTIAL_NAMES.isdisjoint(opts.user):
        return ""
    for name, keeps in SEQUENTIAL_OPTIONS:
        if name not in skip and name in opts and not keeps(opts[name]):
            return f"option {name}={opts[name]!r}"
    return ""


def _host_functions_reason(problem) -> str:
    """Why every instance is solved by its own solve when the model has functions
    evaluated on the host (caspar_backend.opaque: no batched evaluator), else ''."""
    names = problem.host_functions()
    return f"functions evaluated on the host ({names})" if names else ""


def solve_batch(problem, x0=None, p=None, lam_g0=None, lam_x0=None, *, lbx=None,
                ubx=None, lbg=None, ubg=None, batch_size=None, client=None,
                chunk_size=None, retries=None, threads=None, **options) -> BatchResult:
    """Solve B instances of ``problem`` (a :class:`~caspar_backend.problem.Problem`);
    inputs as :mod:`.inputs` describes, options those of ``Problem.solve`` (IPOPT's
    names, ``device``).  The model's current ``p`` is not changed.

    ``threads``: on ``device='cpu'``, the threads solving kernel calls at once (None:
    one per core this process may run on; the answers do not depend on it).

    ``client`` (a ``dask.distributed.Client``): the batch is solved in chunks of
    ``chunk_size`` instances on the cluster's workers, a chunk whose task raised run
    again up to ``retries`` times (:mod:`.distributed`); the same result (bit for bit on
    CPU workers)."""
    if client is not None:
        from .distributed import solve_distributed

        return solve_distributed(problem, x0, p, lam_g0, lam_x0, lbx=lbx, ubx=ubx,
                                 lbg=lbg, ubg=ubg, batch_size=batch_size, client=client,
                                 chunk_size=chunk_size, retries=retries, threads=threads,
                                 **options)
    if chunk_size is not None or retries is not None:
        raise ModelError("solve_batch: chunk_size and retries apply to a batch on a Dask "
                         "cluster (client=...)")
    t0 = time.perf_counter()
    inp = batch_inputs(problem, batch_size, x0=x0, p=p, lbx=lbx, ubx=ubx, lbg=lbg,
                       ubg=ubg, lam_g0=lam_g0, lam_x0=lam_x0)
    device = options.pop("device", "cpu")
    opts = resolved_options(options)
    # the process's CPU clock only where a CPU limit is watched: read just after a
    # parallel call, while its threads wind down, it cost 0.5 ms on average (up to 10
    # ms) on the 2-core VM -- per batch, on a service's critical path
    cpu0 = time.process_time() if opts.max_cpu_time < WATCHED_MAX else math.inf
    inp = with_infinite_bounds(inp, opts.nlp_lower_bound_inf, opts.nlp_upper_bound_inf)
    B = inp.size
    out = _Collector(problem, B)
    if B == 0:
        # no instances (a (0, k) input, or batch_size=0): an empty result of the same
        # shapes, (0, n) and so on, as vectorized code over zero rows gives (the device
        # is still checked: 'cuda' without a GPU raises as for any batch)
        resolve_device(device)
        total = time.perf_counter() - t0
        return out.result(dict(setup=total, lockstep=0.0, single=0.0, total=total))
    why = _sequential_reason(opts, KERNEL_ONLY_OPTIONS) or _host_functions_reason(problem)
    # (an option only the kernels and single solves implement: no lockstep)
    no_lockstep = _sequential_reason(opts)
    stop = _Stop()
    # one Ctrl-C handler over every stage: a SIGINT between two stages (after the
    # kernel's, before a single solve's own block) stops the batch as one inside them does
    with sigint_as_stop(stop):
        t_lock, t_single = _stages(problem, inp, opts, options, device, why, out,
                                   (t0, cpu0), stop, threads, no_lockstep)
    total = time.perf_counter() - t0
    timings = dict(setup=total - t_lock - t_single, lockstep=t_lock, single=t_single,
                   total=total)
    return out.result(timings)


def _stages(problem, inp, opts, options, device, why, out, started, stop, threads,
            no_lockstep=""):
    """Solve every instance into ``out``: the structure groups by the kernel or in
    lockstep (unless ``no_lockstep`` says why not: then by their own solves), then the
    instances left by their own solves; (seconds of the first stage, seconds of the
    second).  ``started``: the batch's (perf_counter, process_time) at its start, whence
    its time limits count (process_time inf where no CPU limit is watched)."""
    t0 = started[0]
    t_lock = 0.0
    if why:
        out.to_single(slice(None), why)
    else:
        t1 = time.perf_counter()
        where = resolve_device(device)      # 'auto': 'cuda' where a GPU is usable
        on_gpu = KERNEL_ON_CUDA and where == "cuda"
        on_cpu = KERNEL_ON_CPU and where == "cpu"
        for idx in _structure_groups(inp):
            if stop.interrupted:
                out.stopped(idx, inp)
                continue
            if on_gpu and device == "auto" and KERNEL_ON_CPU and _few_for_gpu(len(idx)):
                if _kernel(problem, inp, idx, options, out, False, stop, threads, started):
                    continue
            if (on_gpu or on_cpu) and _kernel(problem, inp, idx, options, out, on_gpu, stop,
                                              threads, started):
                continue
            b0 = int(idx[0])
            single = no_lockstep or (
                SQUARE_REASON if is_square(inp.lbx[b0], inp.ubx[b0], inp.lbg[b0],
                                           inp.ubg[b0]) else "")
            if single:
                out.to_single(idx, single)
                continue
            _lockstep(problem, inp, idx, opts, device, out, t0, stop)
        t_lock = time.perf_counter() - t1
    t2 = time.perf_counter()
    for b in out.pending_singles():
        if stop.interrupted:        # (set by the handler, also inside a single solve)
            out.stopped([b], inp)
            continue
        out.put_single(b, _single(problem, inp, int(b), options, device))
    return t_lock, time.perf_counter() - t2


def _few_for_gpu(n: int) -> bool:
    """Whether ``n`` instances are too few for the CUDA kernel under device='auto'
    (:data:`AUTO_GPU_MIN_PER_CORE` per core of this process)."""
    from ..compiled.cores import usable_cores

    return n < AUTO_GPU_MIN_PER_CORE * usable_cores()


def _structure_groups(inp):
    """Index arrays of the instances sharing one slack-problem structure (fixed
    variables, equality rows, finite sides), largest first."""
    if all(shared_row(a) for a in (inp.lbx, inp.ubx, inp.lbg, inp.ubg)):
        return [np.arange(inp.size)]        # one row of bounds for every instance
    feats = np.concatenate([inp.lbx == inp.ubx, inp.lbg == inp.ubg,
                            np.isfinite(inp.lbx), np.isfinite(inp.ubx),
                            np.isfinite(inp.lbg), np.isfinite(inp.ubg)], axis=1)
    if feats.shape[1] == 0 or (feats == feats[0]).all():
        return [np.arange(inp.size)]
    _, inv = np.unique(feats, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    groups = [np.flatnonzero(inv == g) for g in range(int(inv.max()) + 1)]
    return sorted(groups, key=len, reverse=True)


class _Stop:
    """Final.  Ctrl-C during a batch (:mod:`caspar_backend.solver.interrupt`): the first
    SIGINT sets ``interrupted``; the lockstep run then ends its running instances with
    User_Requested_Stop after the current iteration, and the instances not solved yet
    (other structure groups, single solves to come) end with it at their start."""

    def __init__(self):
        self.interrupted = False


def _lockstep(problem, inp, idx, opts, device, out, t0, stop):
    """Run the instances ``idx`` in lockstep; record finished ones in ``out`` and mark
    the others for single solves."""
    from .backends import make_batch_evaluator, make_batch_ldl
    from .ipm import LockstepIPM
    from .nlp import BatchSlackNLP

    sub = inp.subset(idx)
    B = len(idx)
    ev = make_batch_evaluator(problem, B, device)
    ev.set_params(sub.p)
    with np.errstate(all="ignore"):
        nlp = BatchSlackNLP(ev, sub.lbx, sub.ubx, sub.lbg, sub.ubg, sub.x0, opts)
        if nlp.nx == 0 or int(np.count_nonzero(nlp.eq)) > nlp.nx:
            # every variable fixed (the single solve's rule, no iteration) or
            # Not_Enough_Degrees_Of_Freedom: single solves
            out.to_single(idx, "every variable fixed" if nlp.nx == 0
                          else "not enough degrees of freedom")
            return
        ipm = LockstepIPM(nlp, opts, make_batch_ldl, make_batch_evaluator)
        ipm.interrupt = stop
        try:
            ipm.initialize()
            ipm.run(t0)
        except KeyboardInterrupt:
            # a second Ctrl-C inside an iteration: the iterates as they stand
            ipm.finish(ipm.running_host(), "User_Requested_Stop")
            ipm.store_finished_all()
        f = ipm.fates
        fin = np.flatnonzero(f.status >= 0)
        end = ipm.final
        xp = ev.xp
        x, lam_g, lam_x = nlp.unscale(*(xp.asarray(end[k]) for k in ("W", "Y", "ZL", "ZU")),
                                      ipm.calc.iL_h, ipm.calc.iU_h)
        if opts.honor_original_bounds:
            x = np.clip(x, sub.lbx, sub.ubx)
        if opts.fixed_variable_treatment == "make_parameter_nodual":
            lam_x[:, nlp.fixed] = 0.0
        fv, gv = ev.xp.zeros(B), ev.xp.zeros((B, problem.m))
        ev.zeroth(ev.xp.asarray(x), fv, gv)
        fv, gv = host(fv).astype(float), host(gv).astype(float)
    if problem.model.sense == -1:
        fv = -fv
    out.put_lockstep(idx[fin], x[fin], fv[fin], gv[fin], lam_g[fin], lam_x[fin],
                     f.status[fin], f.iterations[fin], "cpu" if xp is np else "cuda")
    left = np.flatnonzero(f.status < 0)
    out.to_single(idx[left], np.array(EJECT_REASONS, dtype=object)[f.eject[left]])


def _kernel(problem, inp, idx, options, out, cuda, stop, threads=None,
            started=None) -> bool:
    """Solve the instances ``idx`` by the compiled kernel -- the CUDA kernel, or with
    ``cuda`` False the CPU one -- if it applies (else False, nothing done); record
    finished ones in ``out`` and mark the others for single solves.  ``started``: the
    batch's clocks at its start (the CPU kernel's time limits count from there)."""
    from ..compiled.cuda.group import kernel_plan

    sub = inp if len(idx) == inp.size else inp.subset(idx)   # (idx sorted: all is in order)
    plan = kernel_plan(problem, options, sub, cuda=cuda)
    if plan.reason:
        return False
    if cuda:
        from ..compiled.cuda.group import solve_group

        r = solve_group(problem, options, sub, plan)
    else:
        from ..compiled.batch_cpu import solve_group

        r = solve_group(problem, options, sub, stopped=lambda: stop.interrupted,
                        threads=threads, plan=plan, started=started)
    fin = r.code >= 0
    where = "cuda" if cuda else "cpu"
    names, messages = _kernel_names()
    if len(idx) == len(out.f) and fin.all():
        # every instance of the batch, in order (idx sorted): r's arrays, new for this
        # call, become the batch's
        out.put_all(r.x, r.f, r.g, r.lam_g, r.lam_x, names[r.code], messages[r.code],
                    r.iters, "kernel", where)
        return True
    rows = idx[fin]
    out.x[rows], out.f[rows], out.g[rows] = r.x[fin], r.f[fin], r.g[fin]
    out.lam_g[rows], out.lam_x[rows] = r.lam_g[fin], r.lam_x[fin]
    codes = r.code[fin]
    out.status[rows] = names[codes]
    out.message[rows] = messages[codes]
    out.iterations[rows] = r.iters[fin]
    out.path[idx] = "kernel"
    out.device[rows] = where
    for b, c in zip(idx[~fin], -r.code[~fin]):
        out.to_single(b, "kernel: " + (EJECT_REASONS[c] if 0 < c < len(EJECT_REASONS)
                                       else _KERNEL_EJECT.get(int(c), f"code {-c}")))
    return True


@functools.cache
def _kernel_names() -> tuple:
    """Object arrays of the status names and exit messages by the kernel's codes
    (:data:`caspar_backend.compiled.solve.STATUS_NAMES`, code -> name), made once."""
    from ..compiled.solve import STATUS_NAMES

    names = [STATUS_NAMES[k] for k in range(len(STATUS_NAMES))]
    return (np.array(names, dtype=object),
            np.array([STATUSES[n].exit_message for n in names], dtype=object))


#: the kernel's own ejection codes (negated; 1..11 are EJECT_REASONS)
_KERNEL_EJECT = {20: "fixed variables, a bound structure change or a full filter",
                 21: "not enough degrees of freedom",
                 99: "past its share of the time budget, or stopped"}


def _single(problem, inp, b, options, device):
    """Instance b by its own solve (printing nothing unless asked); the model's current
    p is kept."""
    keep = problem.model.p
    opts = dict(options)
    opts.setdefault("print_level", 0)
    try:
        return problem.solve(**inp.row(b), device=device, **opts)
    finally:
        problem.model.p = keep


#: status names and exit messages by the lockstep run's status codes (STATUS_NAMES order)
_NAMES = np.array(list(STATUSES), dtype=object)
_MESSAGES = np.array([STATUSES[n].exit_message for n in STATUSES], dtype=object)


class _Collector:
    """Final.  The batch's results as they arrive (host arrays in instance order)."""

    def __init__(self, problem, B):
        n, m = problem.n, problem.m
        self.n, self.m = n, m
        self.x, self.lam_x = np.zeros((B, n)), np.zeros((B, n))
        self.g, self.lam_g = np.zeros((B, m)), np.zeros((B, m))
        self.f = np.zeros(B)
        self.status = np.full(B, "", dtype=object)
        self.message = np.full(B, "", dtype=object)
        self.iterations = np.zeros(B, np.int64)
        self.path = np.full(B, "lockstep", dtype=object)
        self.reason = np.full(B, "", dtype=object)
        self.device = np.full(B, "", dtype=object)
        self.singles = False        # whether any instance was marked for its own solve

    def to_single(self, rows, reason):
        """The instances ``rows`` (an index, index array or slice) are to be solved by
        their own solves, for ``reason`` (one str, or one per instance)."""
        self.path[rows] = "single"
        self.reason[rows] = reason
        self.singles = True

    def pending_singles(self):
        """The instances marked for their own solves and not answered yet, in order."""
        if not self.singles:
            return ()
        return np.flatnonzero((self.path == "single") & (self.status == ""))

    def put_lockstep(self, rows, x, f, g, lam_g, lam_x, status, iterations, device):
        """Instances ``rows`` finished in lockstep on ``device`` ('cpu', 'cuda');
        ``status``: their int codes."""
        self.device[rows] = device
        self.x[rows], self.f[rows], self.g[rows] = x, f, g
        self.lam_g[rows], self.lam_x[rows] = lam_g, lam_x
        self.status[rows] = _NAMES[status]
        self.message[rows] = _MESSAGES[status]
        self.iterations[rows] = iterations

    def put_all(self, x, f, g, lam_g, lam_x, status, message, iterations, path, device):
        """Every instance finished on ``path`` on ``device``: the arrays given (the
        batch's own, in instance order; ``status`` and ``message`` object arrays) are
        taken as they are."""
        self.x, self.f, self.g, self.lam_g, self.lam_x = x, f, g, lam_g, lam_x
        self.status, self.message, self.iterations = status, message, iterations
        self.path.fill(path)
        self.device.fill(device)

    def stopped(self, rows, inp):
        """The instances ``rows`` end User_Requested_Stop at their start (a Ctrl-C came
        before their solve)."""
        rows = np.asarray(rows, np.int64)
        self.x[rows] = np.clip(inp.x0[rows], inp.lbx[rows], inp.ubx[rows])
        self.f[rows] = np.nan
        self.g[rows] = np.nan
        self.status[rows] = "User_Requested_Stop"
        self.message[rows] = STATUSES["User_Requested_Stop"].exit_message + \
            " (interrupted before this instance's solve)"
        self.iterations[rows] = 0

    def put_single(self, b, r):
        self.device[b] = (r.extra or {}).get("device", "")
        self.x[b], self.f[b], self.g[b] = r.x, r.f, r.g
        self.lam_g[b], self.lam_x[b] = r.lam_g, r.lam_x
        self.status[b], self.message[b], self.iterations[b] = r.status, r.message, r.iterations

    def result(self, timings) -> BatchResult:
        return BatchResult(x=self.x, f=self.f, g=self.g, lam_g=self.lam_g,
                           lam_x=self.lam_x, status=list(self.status),
                           iterations=self.iterations, message=list(self.message),
                           path=list(self.path), reason=list(self.reason), timings=timings,
                           extra=dict(device=list(self.device)))
