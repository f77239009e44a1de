"""The GPU path of ``solve_batch``: one structure group of instances solved by the CUDA
kernel (one thread per instance, or a team of a warp's threads, :mod:`.launch`).

:func:`kernel_reason` says whether the kernel applies to a group ('' if it does;
:func:`kernel_plan` also gives the layout and options the solve then uses);
:func:`solve_group` runs it and returns a :class:`..rows.KernelResult` whose instances
with ``code < 0`` the caller re-solves on the general path (``solve_batch`` solves them
by their own ``Problem.solve``).  Each finished instance equals its own single solve:
same status, same iterations, objective to rounding (libdevice and FMA contraction,
:mod:`.retarget`).
"""
from __future__ import annotations

import os
import sys
from typing import NamedTuple

import numpy as np

from ..options import resolve as _resolve_options
from ..solve import layout_for

#: the arrangement solve_batch uses (:mod:`.workspaces`): instances in columns (True,
#: coalesced loads) or rows (False).  Rows are what the H200 measured (2026-12-02, IK
#: 10^4 in 0.069 s); columns pass numba-cuda's simulator (tests/compiled/
#: test_cuda_simulated.py) but their first GPU compile outlasted its run's time limit
#: (over 290 s), so they wait for a measurement
COLUMNS = False
#: kernel_reason's answer while the kernel is not compiled yet
COMPILING = "the CUDA kernel is being compiled in the background (caspar warmup)"
#: teams (:mod:`.team`): lanes per instance of solve_batch's launch where teams pay
#: (:func:`launch_lanes`), and the smallest KKT system (rows, ``sizes['nkkt']``) given
#: one.  Measured on an H100, the kernel alone, B = 1,000 (raw
#: gpu_2026-12-06_session52_h100): Van der Pol N = 50 (854 rows) 319 ms at one lane,
#: 314 (4), 281 (8), 260 (16), 249 (32); N = 20 (344 rows) 122 (1), 112 (8), 100 (32);
#: B = 132, N = 50: 257 (1), 206 (32); the IK (5 rows), B = 10^4: 47 (1), 123 (2),
#: 159 (4).  The bound between 5 and 344 rows is not measured: 256 leaves each lane
#: eight of K's rows at least
TEAM_LANES = 32
TEAM_MIN_KKT = 256


def launch_lanes(sizes: dict, B: int, sms: int) -> int:
    """Threads per instance for solve_batch's launch of B instances whose layout has
    ``sizes`` on a GPU of ``sms`` multiprocessors: :data:`TEAM_LANES` where K has at
    least :data:`TEAM_MIN_KKT` rows and the batch leaves blocks of one instance
    (B <= BLOCKS_PER_SM * sms, :func:`.launch.threads_per_block`) -- the team's lanes
    are then threads the batch leaves idle; once instances share blocks they would take
    a resident instance's place (not measured) -- else 1.  The environment variable
    CASPAR_CUDA_LANES (one of :data:`.team.LANES`) overrides it for an experiment;
    ValueError for a value that is not a team size."""
    from .launch import BLOCKS_PER_SM
    from .team import LANES as SIZES

    v = os.environ.get("CASPAR_CUDA_LANES", "")
    if v:
        if not v.isdigit() or int(v) not in SIZES:
            raise ValueError(f"CASPAR_CUDA_LANES must be one of {SIZES}, got {v!r}")
        return int(v)
    if sizes["nkkt"] >= TEAM_MIN_KKT and B <= BLOCKS_PER_SM * sms:
        return TEAM_LANES
    return 1


class KernelPlan(NamedTuple):
    """Final.  :func:`kernel_plan`'s answer: ``reason`` ('' where the kernel applies),
    and where it does the group's ``layout`` (:func:`group_layout`) and the validated
    ``opts`` (``print_level`` 0), which :func:`solve_group` would otherwise find again."""

    reason: str
    layout: object = None
    opts: object = None


def kernel_reason(problem, options, sub, cuda: bool = True) -> str:
    """'' if the kernel can solve the instances ``sub`` (a
    :class:`~caspar_backend.batch.inputs.BatchInputs` of one structure group) with
    ``options`` (``Problem.solve``'s, ``device`` removed) -- on the GPU, or with
    ``cuda=False`` on the CPU --, else why not (:func:`kernel_plan`'s reason)."""
    return kernel_plan(problem, options, sub, cuda).reason


def kernel_plan(problem, options, sub, cuda: bool = True) -> KernelPlan:
    """:func:`kernel_reason`'s answer with, where it is '', the layout and options the
    solve uses.  The batch prints no log, so ``print_level`` is not a reason.  Whether
    the CUDA kernel is compiled is asked last, so that a group the kernel could not
    solve starts no background compile."""
    if cuda and not (_installed("numba") and _installed("numba_cuda")):
        return KernelPlan("numba and numba-cuda are not both installed")
    if not cuda:
        from ..dispatch import kernels_ready

        if not _installed("numba") or not kernels_ready(wait=False):
            return KernelPlan("the compiled kernels are not ready (caspar warmup)")
    # a CPU batch's time limits are watched (batch_cpu, .deadline); a launch's are not
    opts, why = _resolve_options({**options, "print_level": 0}, clocked=not cuda)
    if why:
        return KernelPlan(why)
    lay = group_layout(problem, sub)
    if lay is None:
        return KernelPlan("an expression the compiled tape cannot express, or a dense "
                          "KKT system")
    if cuda and not cuda_kernel_ready():
        return KernelPlan(COMPILING)
    return KernelPlan("", lay, opts)


_found: set = set()         # packages found installed (an installed one stays so)


def _installed(name: str) -> bool:
    """Whether package ``name`` can be imported (a found one is remembered)."""
    if name not in _found:
        import importlib.util

        if importlib.util.find_spec(name) is None:
            return False
        _found.add(name)
    return True


def cuda_kernel_ready() -> bool:
    """Whether a launch now would not wait for the kernel's compile (minutes): this
    process holds it, or the disk cache does (:func:`.cache.is_ready`), or the compile
    is to run in this process (``CASPAR_BACKGROUND_COMPILE=0``, or no disk cache to
    compile into).  Otherwise start the background compile (once per process and
    machine, :func:`..dispatch.start_background_compile`) and answer False: the batch
    goes to the lockstep path meanwhile."""
    from . import cache

    launch = sys.modules.get(f"{__package__}.launch")
    if launch is not None and launch.is_loaded(COLUMNS):
        return True
    from ..dispatch import background_compiles, start_background_compile

    if not background_compiles() or not cache.CACHEABLE:
        return True
    if cache.is_ready(COLUMNS):
        return True
    start_background_compile(cuda=True)
    return False


def group_layout(problem, sub):
    """The layout of the structure group ``sub`` (its first instance's bounds: all share
    the structure), or None (:func:`caspar_backend.compiled.solve.layout_for`)."""
    return layout_for(problem, *(np.array(a[0], np.float64)
                                 for a in (sub.lbx, sub.ubx, sub.lbg, sub.ubg)))


def solve_group(problem, options, sub, plan: KernelPlan | None = None):
    """Solve the instances of ``sub`` on the GPU (:func:`kernel_reason` must be '';
    ``plan``: its :func:`kernel_plan`, found again when not given), on the calling
    thread's own stream (:mod:`.streams`)."""
    from ..options import option_vector
    from .launch import multiprocessors, solve_on_device
    from .streams import thread_stream
    from .workspaces import DeviceWorkspaces

    if plan is None:
        plan = KernelPlan("", group_layout(problem, sub),
                          _resolve_options({**options, "print_level": 0})[0])
    with thread_stream():       # this thread's stream: batches of other threads overlap
        ws = DeviceWorkspaces(plan.layout, sub.x0, sub.p, sub.lbx, sub.ubx,
                              sub.lbg, sub.ubg, interleaved=COLUMNS, shared_structure=True,
                              lam_g0=sub.lam_g0, lam_x0=sub.lam_x0)
        lanes = launch_lanes(plan.layout.sizes, ws.B, multiprocessors())
        return solve_on_device(ws, option_vector(plan.opts), lanes=lanes,
                               dispatcher=pattern_dispatcher(plan.layout))


def pattern_dispatcher(lay):
    """The kernel linked with ``lay``'s generated chains (:mod:`.patterns`) where that is
    on and its cubin is ready, else None (the kernel of :func:`.launch.kernel`).  Not
    ready: its build starts in the background (in this process with
    ``CASPAR_BACKGROUND_COMPILE=0``).  Rows only: the generated code indexes contiguous
    slots.  A pattern whose build or load fails (no NVRTC or nvJitLink, a damaged file)
    is reported once (RuntimeWarning) and served by the default kernel from then on: the
    same bits, only slower."""
    from . import patterns

    if COLUMNS or not patterns.enabled():
        return None
    from .cache import capability_pair

    cc = capability_pair()
    key = (patterns.pattern_key(lay), cc)
    if key in _failed_patterns:
        return None
    if not patterns.ready(lay, cc):
        from ..dispatch import background_compiles

        if background_compiles():
            patterns.start_build(lay, cc)
            return None
    try:
        return patterns.kernel_for(lay, cc)
    except Exception as e:     # noqa: BLE001 - any failure falls back to the default kernel
        _failed_patterns.add(key)
        import warnings

        warnings.warn(f"caspar: the CUDA kernel for pattern {key[0]} could not be built or "
                      f"loaded ({type(e).__name__}: {e}); the default kernel serves it",
                      RuntimeWarning, stacklevel=2)
        return None


#: (pattern key, compute capability) whose kernel failed in this process
_failed_patterns: set = set()
