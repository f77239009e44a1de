"""The minimizer's linear solver for the LM step: which one (Ceres' linear_solver_type,
or the automatic choice of :mod:`caspar_backend.lsq.options`), made for the pattern's
structures, and kept between solves of one compiled problem (:class:`SolverPool`)."""

from __future__ import annotations

import threading

import numpy as np

from ..errors import ModelError, OptionError
from .options import (DENSE_NORMAL_MAX, DENSE_SCHUR_LIMIT, DENSE_SCHUR_MAX,
                      DENSE_SCHUR_MIN_DENSITY, solver_options)


def make_step_solver(kind, jac, pattern, structure, opts=None):
    """``(solver, schur structure or None)`` for ``linear_solver_type`` ``kind``
    (None: automatic, see :mod:`caspar_backend.lsq.options`); ``structure``: the
    pattern's :class:`~caspar_backend.lsq.structure.SchurStructure` or None (the
    caller's ``linear_solver_ordering``, when given, is always taken)."""
    from .linear_solvers import NORMAL_SOLVERS
    from .schur import SchurComplementSolver

    if kind in NORMAL_SOLVERS:
        return NORMAL_SOLVERS[kind](jac), None
    ordered = opts is not None and opts.linear_solver_ordering is not None
    if kind is None:
        # automatic: Schur when it eliminates most unknowns (points onto cameras)
        if structure is not None and not ordered and (structure.n_e_blocks < 2
                                                      or structure.n_e < structure.n_f):
            structure = None
        if structure is None:
            name = ("DENSE_NORMAL_CHOLESKY" if pattern.n <= DENSE_NORMAL_MAX
                    else "SPARSE_NORMAL_CHOLESKY")
            return NORMAL_SOLVERS[name](jac), None
        n_f = structure.n_f
        dense = n_f <= DENSE_SCHUR_MAX or (
            n_f <= DENSE_SCHUR_LIMIT and structure.density is not None
            and structure.density >= DENSE_SCHUR_MIN_DENSITY)
        kind = "DENSE_SCHUR" if dense else "SPARSE_SCHUR"
    if structure is None:
        raise ModelError(f"linear_solver_type={kind}: the Jacobian has no block structure to "
                         "eliminate (no variable block that no residual shares with another)")
    if kind == "ITERATIVE_SCHUR":
        from .iterative_schur import IterativeSchurSolver

        o = opts
        return IterativeSchurSolver(jac, structure, o.eta, o.min_linear_solver_iterations,
                                    o.max_linear_solver_iterations), structure
    threads = opts.num_threads if opts is not None else 1
    return (SchurComplementSolver(jac, structure, dense=(kind == "DENSE_SCHUR"),
                                  num_threads=threads), structure)


def make_device_step_solver(kind, jac, structure, xp, opts=None):
    """``(solver, structure)`` on the GPU: the Schur complement, DENSE_SCHUR with W dense
    (:mod:`caspar_backend.lsq.device_schur`) or ITERATIVE_SCHUR
    (:mod:`caspar_backend.lsq.device_iterative_schur`).  Automatic (``kind`` None):
    DENSE_SCHUR while W fits and its product ``S = U - W V^{-1} W^T`` costs at most
    :data:`~caspar_backend.lsq.device_schur.DENSE_FLOPS_MAX`, else ITERATIVE_SCHUR run to
    the direct step (as COLMAP switches to it for large scenes).  An OptionError names
    what is missing otherwise."""
    from .device_schur import DeviceDenseSchur, dense_is_cheap, fits

    if kind not in (None, "DENSE_SCHUR", "ITERATIVE_SCHUR"):
        raise OptionError(f"device='cuda': linear_solver_type={kind} runs on the CPU only; "
                          "DENSE_SCHUR and ITERATIVE_SCHUR run on the GPU")
    if structure is None:
        raise OptionError("device='cuda' solves by the Schur complement, and the Jacobian has "
                          "no block structure to eliminate; solve with device='cpu'")
    automatic = kind is None
    if automatic:
        kind = "DENSE_SCHUR" if fits(structure) and dense_is_cheap(structure) \
            else "ITERATIVE_SCHUR"
    if kind == "ITERATIVE_SCHUR":
        from .device_iterative_schur import DIRECT_ETA, DeviceIterativeSchur

        o = opts if opts is not None else solver_options({})
        # chosen automatically, CG stands in for a direct solve: it runs to the direct
        # step (DIRECT_ETA), so that the iterations and the optimum are those of the
        # Schur factorization the CPU makes; asked for by name it keeps Ceres' eta
        eta = min(o.eta, DIRECT_ETA) if automatic else o.eta
        return DeviceIterativeSchur(jac, structure, xp, eta, o.min_linear_solver_iterations,
                                    o.max_linear_solver_iterations), structure
    if not fits(structure):
        raise OptionError("device='cuda': the dense Schur system of this problem "
                          f"({structure.f_cols.size} reduced x {structure.e_cols.size} "
                          "eliminated columns) exceeds the device budget; solve with "
                          "linear_solver_type='ITERATIVE_SCHUR'")
    return DeviceDenseSchur(jac, structure, xp), structure


class SolverPool:
    """Final.  The CPU step solvers of one structure entry and one solver configuration,
    kept between solves: a solve takes a kept one (:meth:`take`; a new one when every
    kept one is in use by a concurrent solve) and gives it back when it ends
    (:meth:`give`).  A solver's index maps and the symbolic analysis of its reduced
    system are the pattern's; its buffers are overwritten by every factorization, so a
    later solve reuses it as a later iteration of one solve does -- a re-solve with new
    data, start or bounds builds no solver (36,000-observation bundle adjustment: ~50 ms
    of a ~0.2 s solve)."""

    def __init__(self):
        self._kept = []
        self._lock = threading.Lock()

    def take(self, build):
        """A kept ``(solver, structure)``, else ``build()``'s."""
        with self._lock:
            if self._kept:
                return self._kept.pop()
        return build()

    def give(self, item) -> None:
        """Keep ``item`` (a :meth:`take` result whose solve has ended) for a later solve,
        unless its dense buffers exceed :data:`POOL_MAX_BYTES` (those are freed with it,
        as before there was a pool)."""
        if dense_buffer_bytes(item[0]) > POOL_MAX_BYTES:
            return
        with self._lock:
            self._kept.append(item)


#: a solver whose dense buffers (DENSE_SCHUR's reduced matrices, one per elimination
#: thread) exceed this is not kept between solves: 64 MB is a reduced system of ~2,800
#: unknowns on one thread, while 1,000 images (5,988 unknowns) on two threads hold 574 MB
POOL_MAX_BYTES = 64 * 2 ** 20


def dense_buffer_bytes(solver) -> int:
    """Bytes of ``solver``'s dense per-thread reduced matrices (DENSE_SCHUR's, also
    inside ITERATIVE_SCHUR's split solver); 0 for the others."""
    inner = getattr(solver, "split", solver)
    work = getattr(inner, "_work", None)
    return sum(share[4].nbytes for share in work.shares) if work is not None else 0


def step_solver_pool(ev, lbx, ubx, opts) -> SolverPool | None:
    """The :class:`SolverPool` of this solve's structures and options in ``ev``'s
    structure cache (None without one)."""
    cache = ev.structure_cache
    if cache is None:
        return None
    fixed = np.asarray(lbx) == np.asarray(ubx)
    key = ("lsq-solvers",) + structures_key(fixed, opts.linear_solver_ordering, np) + (
        opts.linear_solver_type, opts.num_threads, opts.eta, opts.min_linear_solver_iterations,
        opts.max_linear_solver_iterations)
    return cache.get(key, SolverPool)


def structures_key(fixed, ordering, xp) -> tuple:
    """The structure cache's key of :func:`solve_structures`' entry."""
    from ..structure_cache import mask_key

    return ("lsq", xp.__name__) + mask_key(fixed) + _ordering_key(ordering)


def _ordering_key(ordering) -> tuple:
    """A cache key part for a ``linear_solver_ordering``: a digest of its tables."""
    if ordering is None:
        return ()
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for g in ordering:
        t = np.ascontiguousarray(np.asarray(g, dtype=np.int64))
        h.update(str(t.shape).encode())
        h.update(t.tobytes())
    return ("ordering", h.hexdigest())
