"""Whether ``Problem.solve`` takes the compiled path, and getting its kernels ready.

``Problem.solve`` calls :func:`try_solve` after checking its inputs.  The compiled path
solves when all of these hold, else :func:`try_solve` returns None and the general path
solves (both run one algorithm: the same status, iterations and iterates):

* option ``compiled_path`` is not ``'no'``; ``device`` resolves to ``'cpu'``; the model
  calls no host functions (``caspar_backend.opaque``);
* with ``'auto'`` (the default): ``n + m <= AUTO_MAX_SIZE`` and the kernels are compiled
  on this machine (:func:`caspar_backend.compiled.cache.is_ready`).  When they are not,
  the first such solve starts compiling them in a background process
  (``python -m caspar_backend.compiled``, about a minute of CPU, once per machine and
  caspar version) and the general path solves meanwhile; ``caspar warmup`` does it
  ahead.  The first such solve of a process also leaves the kernels unloaded (the
  general path solves it): loading them from the cache costs ~0.4 s on the 2-core VM
  (Numba's start-up and typing; :func:`.solve.load_single`, the single solve's kernels
  only), more than a small problem's whole solve, so a script that solves once never
  pays it; the second solve loads them (:data:`_first_auto`).  With
  ``'yes'`` the solve compiles or loads them first, whatever the size;
* the problem is not square (:func:`is_square`: IPOPT's multiplier recomputation for
  square problems runs on the general path only);
* :func:`.options.resolve` accepts the options, and the kernels run to the end (see
  :mod:`.solve`: an ejected solve returns None, having changed nothing -- unless a
  Ctrl-C came while the kernel ran, :func:`.solve.stops_here`).

Why a size limit: a solve the kernels hand over (a rare path, or past its time budget
of :data:`.solve.TIME_BUDGET`) starts again on the general path, so the attempt is lost
time, and the larger the problem the smaller the compiled path's gain that pays for it.
Measured on the 2-core VM (2026-12-05, PGLib typical cases up to 2,000 buses and COPS at
its published sizes, best of two, the same iterates on both paths): n + m <= 2,000: the
compiled solve takes 0.11-0.26x the general one's time (geometric mean); 2,000-10,000:
0.55x and 0.49x, the worst case 1.15x (a hand-over); 10,000-50,000: 0.73x, but 1.03x in
sum and up to 1.20x where the kernels hand over (case1803_snem, case1888_rte,
case1951_rte: restoration, the refinement fall-backs).  Below the limit the compiled path
is 2-30x faster on the problems it finishes.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np

#: 'auto' takes the compiled path up to this n + m
AUTO_MAX_SIZE = 10_000
#: a background compile older than this (seconds) is taken to have died
STALE_COMPILE_SECONDS = 1800

_lock = threading.Lock()
_loaded = False             # the kernels are loaded in this process
_first_auto = True          # no 'auto' solve of this process has asked for them yet
_background: set = set()    # the background compiles (cuda: bool) this process asked for
_background_lock = threading.Lock()


def try_solve(problem, x0, p, bounds, options):
    """The compiled path's :class:`~caspar_backend.solver.result.SolveResult` for
    ``problem`` with these checked inputs (``bounds`` = [lbx, ubx, lbg, ubg] full
    vectors) and the user's ``options`` (a dict, not changed), in ``solve_nlp``'s
    convention (``f`` the minimized objective), or None (module docstring)."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    mode = options.get("compiled_path", "auto")
    if mode == "no" or problem.extended is not None:
        return None
    if mode == "auto" and problem.n + problem.m > AUTO_MAX_SIZE:
        return None
    if "device" in options and problem.resolve_device(options["device"]) != "cpu":
        return None
    from ..solver.options import bound_infinities, infinite_bounds

    bounds = infinite_bounds(*bound_infinities(options), *bounds)
    if is_square(*bounds):
        return None
    from . import available

    if not available():
        return None
    if mode == "auto" and not _loaded and _first_of_process():
        return None
    if not kernels_ready(wait=mode == "yes"):
        return None
    from .options import resolve
    from .solve import solve_checked

    opts, reason = resolve({k: v for k, v in options.items() if k != "device"},
                           clocked=True)
    if reason:
        return None
    return solve_checked(problem, x0, p, bounds, opts, t0, cpu0)


def is_square(lbx, ubx, lbg, ubg) -> bool:
    """:func:`caspar_backend.solver.structure.is_square` of a solve's bounds (free:
    ``lbx != ubx``; equality: ``lbg == ubg``): IPOPT's multiplier recomputation runs on
    the general path only, not in the kernels."""
    from ..solver.structure import is_square as square

    n_eq = int(np.count_nonzero(np.asarray(lbg) == np.asarray(ubg)))
    # (no equality row: not square, whatever the variables)
    return n_eq > 0 and square(int(np.count_nonzero(np.asarray(lbx) != np.asarray(ubx))),
                               n_eq)


def _first_of_process() -> bool:
    """True once per process: for its first 'auto' solve (module docstring), which
    starts the background compile if the kernels are not compiled on this machine."""
    global _first_auto
    with _lock:
        first, _first_auto = _first_auto, False
    if first:
        from .cache import is_ready

        if not is_ready():
            start_background_compile()
    return first


def kernels_ready(wait: bool) -> bool:
    """Whether the kernels are loaded in this process, loading a single solve's from the
    cache when a complete compile is there (:func:`.solve.load_single`, well under a
    second).  Otherwise: with ``wait``, compile them all now (:func:`.solve.warmup`, about
    a minute); without, start a background compile (once per process and machine) and
    return False."""
    global _loaded
    if _loaded:
        return True
    from .cache import is_ready

    with _lock:
        if _loaded:
            return True
        if is_ready():
            from .solve import load_single

            load_single()          # (the batch's row loops load on their first call)
            _loaded = True
            return True
        if wait:
            from .solve import warmup

            warmup()
            _loaded = True
            return True
        start_background_compile()
        return False


def start_background_compile(cuda: bool = False) -> bool:
    """Start ``python -m caspar_backend.compiled`` (the CPU kernels; with ``cuda`` the
    CUDA batch kernel, ``--cuda``) detached, unless another process is compiling the
    same (a lock file younger than STALE_COMPILE_SECONDS), this process started it
    before, or ``CASPAR_BACKGROUND_COMPILE=0``.  Returns whether it started one."""
    if os.environ.get("CASPAR_BACKGROUND_COMPILE", "1") == "0":
        return False
    with _background_lock:
        if cuda in _background:
            return False
        _background.add(cuda)
    from .cache import kernel_cache_dir

    d = kernel_cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        lock = d / ("compiling-cuda" if cuda else "compiling")
        try:
            if time.time() - lock.stat().st_mtime < STALE_COMPILE_SECONDS:
                return False
            lock.unlink()
        except FileNotFoundError:
            pass
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
    except OSError:             # not writable, or another process won the race
        return False
    subprocess.Popen([sys.executable, "-m", "caspar_backend.compiled", "--lock", str(lock)]
                     + (["--cuda"] if cuda else []),
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
    return True
