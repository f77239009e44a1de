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
* :func:`.options.resolve` accepts the options (an initialization option the kernels do
  not implement, a warm start, only makes the general path take the first iteration:
  :data:`.options.START_OPTIONS`), and the kernels run to the end (see
  :mod:`.solve`).  Where they hand the solve over (a path they do not implement, or the
  end of their time budget), :func:`try_solve` returns the
  :class:`~caspar_backend.solver.resume.ResumePoint` at the start of that iteration
  (:mod:`.resume`), and the caller's general path goes on from there (``solve_nlp``'s
  ``resume``), with the same iterates as from the start, and hands the solve back to
  the kernels once they can take it again (:func:`solve`); where the point cannot be
  resumed (:mod:`.resume` says when: a hand-over before the first iteration, the
  watchdog running), the general path starts again from x0 and may hand the solve back
  (``FRESH_START``), having changed nothing -- unless a Ctrl-C came while the kernel
  ran, :func:`.solve.stops_here`.

Why a size limit: a hand-over is resumed, so the kernels' iterations are not lost, but
a problem's first compiled solve builds its workspace layout (the KKT pattern's
elimination tree and update schedule; kept for later solves of the same bound
structure, and found again by a small problem read again: :func:`.solve.layout_for`),
about 0.03 s at n + m = 10,000 and 0.65 s at 86,000 on the 2-core VM.
Measured there (2026-12-05, session 39; first solve of a fresh problem against the
general path's, the kernels loaded): PGLib case500_goc (n + m = 10,351) 0.12 against
0.16 s, case1354_pegase (27,838) 0.43 / 0.47, case2000_goc (48,440) 1.11 / 1.34,
case2869_pegase (62,899) 1.63 / 2.06, case4661_sdet (86,060) 4.48 / 4.33 (handed over
and resumed); Van der Pol multiple shooting N = 10^4 (50,002) 0.24 / 0.39, N = 3 x 10^4
(150,002) 1.51 / 1.40; collocation N = 10^4 (170,002) 1.67 / 1.08.  A later solve of the
same problem takes 0.3-0.6x the general path's time at every one of these sizes.  So
'auto' stops at 50,000, where the first solve no longer gains; with the hand-overs
restarting from x0 (before session 39) the limit was 10,000 (the three PGLib cases that
hand over lost up to 1.2x).  Below the limit the compiled path is 2-30x faster on small
problems.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np

#: 'auto' takes the compiled path up to this n + m
AUTO_MAX_SIZE = 50_000
#: a background compile older than this (seconds) is taken to have died
STALE_COMPILE_SECONDS = 1800

_lock = threading.Lock()
_loaded = False             # the kernels are loaded in this process
_solves_done = 0            # solves this module has finished in this process
_first_auto = True          # no 'auto' solve of this process has asked for them yet
_background: set = set()    # the background compiles (cuda: bool) this process asked for
_background_lock = threading.Lock()


def solve(problem, x0, p, bounds, options, general, mults=None):
    """The solve of ``problem`` with these checked inputs (as :func:`try_solve` takes
    them): the compiled path where it applies, and where the kernels hand the solve over
    the caller's general path ``general(resume, started)`` -- ``resume`` the
    :class:`~caspar_backend.solver.resume.ResumePoint` to go on from,
    :data:`~caspar_backend.solver.resume.FRESH_START` (from x0, handing the solve back
    where it can) or None (from x0 to the end); ``started`` the solve's
    ``(perf_counter, process_time)`` start, for the time limits; it returns a SolveResult,
    or a ResumePoint where it hands the solve back (``solve_nlp``'s ``hand_back``) --
    back and forth until one side finishes.  Every
    hand-over is at an iteration's start and each side takes at least one iteration
    before handing over again, so the solve is the one the general path alone takes.
    ``mults``: a warm start's ``(lam_g0, lam_x0)`` as given (:func:`try_solve`)."""
    try:
        return _solve(problem, x0, p, bounds, options, general, mults)
    finally:
        record_solve()


def record_solve() -> None:
    """Count a finished solve of this process (this module's, or another solver's on a
    compiled problem: the least-squares minimizer's), after which
    :func:`general_path_kernels` may load the kernels."""
    global _solves_done
    _solves_done += 1           # (a count, not a lock's worth: any positive value will do)


def general_path_kernels() -> bool:
    """Whether the general path's CPU work may go through the compiled kernels (the
    tape evaluator, :mod:`.tape_evaluator`; QDLDL, :mod:`.ldl`): where they are loaded
    in this process, or compiled on this machine and this process has finished a solve
    before -- the first solve of a process does not load them (~0.2 s on the 2-core VM,
    more than a small problem's whole solve: the same rule as the compiled path's,
    module docstring)."""
    if _loaded:
        return True
    if not _solves_done:
        return False
    from .cache import is_ready

    return is_ready()


def general_cpu_evaluator(evaluator, choice: str):
    """The evaluator the general path (and the least-squares solver) runs on the CPU:
    'numpy' ``evaluator``; 'tape' the kernels' tape evaluator where the model allows
    (:func:`caspar_backend.compiled.tape_evaluator.tape_evaluator_for`); 'auto' the same
    where :func:`general_path_kernels` allows, else ``evaluator``.  The tape evaluator's
    module -- the kernels, and so Numba, ~0.2 s to import -- is imported only once it is
    asked for: a process's first small solve does not pay it."""
    if choice == "numpy" or (choice == "auto" and not general_path_kernels()):
        return evaluator
    from .tape_evaluator import tape_evaluator_for

    return tape_evaluator_for(evaluator)


def _solve(problem, x0, p, bounds, options, general, mults=None):
    """:func:`solve`'s turns."""
    from ..solver.result import SolveResult
    from ..solver.resume import ResumePoint

    started = (time.perf_counter(), time.process_time())
    res = try_solve(problem, x0, p, bounds, options, started, mults)
    if res is None:
        return general(None, started)
    if isinstance(res, SolveResult):
        return res
    from types import SimpleNamespace

    from ..solver.interrupt import sigint_as_stop
    from .options import resolve
    from .solve import solve_checked

    # (accepted by try_solve, whose kernel handed over or which the general path starts)
    opts, _ = resolve({k: v for k, v in options.items() if k != "device"}, clocked=True,
                      started=True)
    # the solve is under way: a Ctrl-C between the two sides' turns is a stop request,
    # which the next turn starts with (solver/interrupt.py's nested blocks), not a
    # KeyboardInterrupt
    with sigint_as_stop(SimpleNamespace(interrupted=False)):
        while not isinstance(res, SolveResult):
            res = general(res, started)
            if isinstance(res, ResumePoint):            # handed back to the kernels
                res = solve_checked(problem, x0, p, bounds, opts, *started, start=res)
    return res


def may_take(problem, options) -> bool:
    """Whether the compiled path may take solves of ``problem`` with the user's
    ``options``, by the rules that do not depend on the solve (module docstring: the
    option ``compiled_path``, host functions, 'auto''s size limit); the device and the
    kernels' readiness are :func:`try_solve`'s."""
    mode = options.get("compiled_path", "auto")
    return (mode != "no" and problem.extended is None
            and (mode == "yes" or problem.n + problem.m <= AUTO_MAX_SIZE))


def try_solve(problem, x0, p, bounds, options, started=None, mults=None):
    """The compiled path's :class:`~caspar_backend.solver.result.SolveResult` for
    ``problem`` with these checked inputs (``bounds`` = [lbx, ubx, lbg, ubg] full
    vectors) and the user's ``options`` (a dict, not changed), in ``solve_nlp``'s
    convention (``f`` the minimized objective); the
    :class:`~caspar_backend.solver.resume.ResumePoint` of a hand-over, for the general
    path to go on from; :data:`~caspar_backend.solver.resume.FRESH_START` where only an
    initialization option (:data:`.options.START_OPTIONS`) keeps the kernels from
    starting the solve (the general path starts it and hands it to them); or None
    (module docstring).  ``started``: the solve's
    ``(perf_counter, process_time)`` start (default: now); ``mults``: a warm start's
    ``(lam_g0, lam_x0)`` as ``Problem.solve`` takes them (read where the options ask for
    a warm start)."""
    t0, cpu0 = (time.perf_counter(), time.process_time()) if started is None else started
    mode = options.get("compiled_path", "auto")
    if not may_take(problem, options):
        return None
    # (device 'cuda' is not the CPU whatever the solver's stack: that is checked by the
    # general path after its evaluator's build, beside which the stack loads)
    if "device" in options and problem.resolve_device(
            options["device"], solver=options["device"] != "cuda") != "cpu":
        return None
    from ..solver.options import bound_infinities, infinite_bounds

    bounds = infinite_bounds(*bound_infinities(options), *bounds)
    from . import available

    if not available():
        return None
    if mode == "auto" and not _loaded and _first_of_process():
        return None
    if not kernels_ready(wait=mode == "yes"):
        return None
    from .options import resolve
    from .solve import solve_checked

    given = {k: v for k, v in options.items() if k != "device"}
    opts, reason = resolve(given, clocked=True)
    if reason:
        if resolve(given, clocked=True, started=True)[1]:
            return None
        from ..solver.resume import FRESH_START

        return FRESH_START       # the general path starts it, the kernels go on
    res = solve_checked(problem, x0, p, bounds, opts, t0, cpu0, mults=mults)
    from ..solver.result import SolveResult

    if isinstance(res, SolveResult):    # (a hand-over: the general path warns)
        from ..solver.compat import warn_substitutions

        warn_substitutions(opts, "qdldl")
    return res


def is_square(lbx, ubx, lbg, ubg) -> bool:
    """:func:`caspar_backend.solver.structure.is_square` of a solve's bounds (free:
    ``lbx != ubx``; equality: ``lbg == ubg``): IPOPT's multiplier recomputation after
    every step, which the general path and the kernels run (kernels/termination.py) but
    not the lockstep batch."""
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


def background_compiles() -> bool:
    """Whether kernels not yet compiled compile in a detached process
    (``CASPAR_BACKGROUND_COMPILE`` not ``0``); else the CUDA kernels compile in the
    calling process and the CPU kernels only by ``caspar warmup``."""
    return os.environ.get("CASPAR_BACKGROUND_COMPILE", "1") != "0"


def start_background_compile(cuda: bool = False) -> bool:
    """Start ``python -m caspar_backend.compiled`` (the CPU kernels; with ``cuda`` the
    CUDA batch kernel, ``--cuda``) detached, unless another process is compiling the
    same (a lock file younger than STALE_COMPILE_SECONDS), this process started it
    before, or ``CASPAR_BACKGROUND_COMPILE=0``.  Returns whether it started one."""
    if not background_compiles():
        return False
    with _background_lock:
        if cuda in _background:
            return False
        _background.add(cuda)
    from .cache import kernel_cache_dir

    lock = kernel_cache_dir() / ("compiling-cuda" if cuda else "compiling")
    if not claim_lock(lock):
        return False
    run_detached(["--cuda"] if cuda else [], lock)
    return True


def claim_lock(lock) -> bool:
    """Create the lock file ``lock`` (a :class:`~pathlib.Path`; its folder made) holding
    this process's id, unless another process holds it -- a lock younger than
    :data:`STALE_COMPILE_SECONDS` (an older one is a crashed compile's, replaced) -- or
    the folder is not writable.  Returns whether this process now holds it."""
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
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
    return True


def run_detached(args: list, lock) -> None:
    """Start ``python -m caspar_backend.compiled *args --lock LOCK`` in its own session,
    no standard streams: it outlives this process and removes ``lock`` when done."""
    subprocess.Popen([sys.executable, "-m", "caspar_backend.compiled", *args,
                      "--lock", str(lock)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
