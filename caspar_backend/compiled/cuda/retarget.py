"""CUDA device functions built from the CPU kernels' own source (one algorithm, two
targets).

Every kernel of :mod:`caspar_backend.compiled.kernels` is a ``numba.njit`` dispatcher
(:func:`..kernels._jit.kernel`).  Its ``py_func`` is plain Python whose callees and slot
numbers are module globals, looked up when Numba types the function.  So the CUDA
version of kernel ``k`` is

    cuda.jit(device=True, inline=<k's inline option>)(
        FunctionType(while_code(k.py_func), G[k's module], ...))

where ``G[mod]`` is a copy of ``mod.__dict__`` in which every kernel dispatcher is
replaced by its CUDA version, and :func:`.loops.while_code` is the kernel's code with its
``for``-``range`` loops as while loops (which NVVM compiles to far fewer instructions):
the same source otherwise, the same constants, the callees rebound.  Nothing is
compiled until the first launch types the global kernel; the CPU dispatchers are
untouched.

What changes with the target (docs/compiled-ipm-cuda.md; the GPU tests check it):

* ``math.*`` lowers to libdevice instead of libm, and NVVM contracts a*b + c to FMA:
  results agree with the CPU's to rounding (status and iterations equal, f to 1e-8
  relative), not bit for bit;
* the slot accessors (``inline='always'`` on the CPU too) are inlined in Numba's IR,
  so the array views they return never cross a call boundary;
* a retargeted kernel compiles once per argument types, not once per constant a caller
  passes (:func:`_unliteral_calls`);
* the larger kernels stay out of line (LLVM ``noinline``, :data:`OUT_OF_LINE_BYTES`):
  NVVM's inliner otherwise folds every call into the global kernel, one body of about
  300,000 PTX lines (run_tape's opcode switch copied into each evaluation, the
  evaluations into every call site) that ptxas took many minutes to compile;
* a thread's buffers are rows of (B, L) or columns of (L, B) device arrays
  (:mod:`.workspaces`), 1-D views contiguous or with stride B: the kernels index slots
  1-D, so the same source compiles for both;
* ``Ib`` is a pair (shared structure, the thread's int scratch) and the accessor ``_i``
  is :func:`.accessors.int_slot` (not built from its CPU source);
* the team barrier and the pieces a team shares are :mod:`.team`'s functions
  (:data:`.team.REPLACED`), which a one-lane launch runs as the CPU kernels run.

:func:`device_version` also retargets a plain function written for the GPU (the global
kernel of :mod:`.launch`) with the same rebinding.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
import threading
from types import FunctionType

from .loops import while_code

#: kernels whose bytecode is at least this long are compiled out of line (``noinline``);
#: (among them _pw1.._pw8: inlined, NumPy's pairwise levels unroll into 2^8 copies of _pw0);
#: shorter ones (nmax, isfinite_all, max_step, ...) are left to NVVM's inliner
OUT_OF_LINE_BYTES = 150

_lock = threading.Lock()
_out_of_line: set = set()    # (module, qualname) of the kernels kept out of line
_device: dict = {}           # id(CPU dispatcher) -> CUDA dispatcher
_globals: dict = {}          # module name -> rebound globals (shared by its functions)
#: the chains' variants (:mod:`.chains`): their (_device, _globals); "loops" is the above
CHAINS = ("loops", "extern")
_variants: dict = {"loops": (_device, _globals), "extern": ({}, {})}


def _kernel_modules():
    from .. import kernels

    return [importlib.import_module(f"{kernels.__name__}.{m.name}")
            for m in pkgutil.iter_modules(kernels.__path__)]


def _is_kernel(obj) -> bool:
    from numba.core.dispatcher import Dispatcher

    return isinstance(obj, Dispatcher) and \
        obj.py_func.__module__.startswith("caspar_backend.compiled.kernels")


def _copy(py_func, g):
    fn = FunctionType(while_code(py_func), g, py_func.__name__, py_func.__defaults__,
                      py_func.__closure__)
    fn.__doc__, fn.__qualname__, fn.__module__ = py_func.__doc__, py_func.__qualname__, \
        py_func.__module__
    return fn


def _rebind(g: dict, device: dict = _device) -> None:
    """Every kernel in ``g``, and every plain function built for the GPU here (the
    teams' functions, :mod:`.team`), replaced by its CUDA version in ``device``."""
    for name, v in list(g.items()):
        if _is_kernel(v) or (isinstance(v, FunctionType) and id(v) in device):
            g[name] = device[id(v)]


def _install_noinline() -> None:
    """Make numba-cuda's function declarations of the kernels in :data:`_out_of_line`
    carry LLVM's ``noinline`` (numba-cuda has no option for it; its own debug mode sets
    the same attribute the same way).  Without numba-cuda's funcdesc module (another
    version) everything is left to the inliner."""
    try:
        from numba.cuda.core import funcdesc
    except ImportError:
        return
    FD = funcdesc.FunctionDescriptor
    if getattr(FD.declare_function, "_caspar_noinline", False):
        return
    declare = FD.declare_function

    def declare_function(self, module):
        fn = declare(self, module)
        if (self.modname, self.qualname) in _out_of_line and \
                "alwaysinline" not in fn.attributes:
            fn.attributes.add("noinline")
        return fn

    declare_function._caspar_noinline = True
    FD.declare_function = declare_function


def _unliteral_calls(d):
    """Device dispatcher ``d`` compiled once per argument *type*: a call passing a
    constant (a slot number, a pairwise sum's start 0, a partial's index) is typed with
    the constant's plain type, where numba-cuda would compile one specialization per
    value (``Literal[int](34)``, ``Literal[int](60)``, ...): 66 of the kernel's 213
    compilations were such copies, each typed and lowered again and each a copy of its
    body in the PTX.  The call site casts the constant; nothing else changes."""
    from numba.core import types

    template = getattr(d, "get_call_template", None)
    if template is None:        # numba-cuda's simulator: no typing, nothing to merge
        return d

    def get_call_template(args, kws):
        return template(tuple(types.unliteral(a) for a in args),
                        {k: types.unliteral(v) for k, v in kws.items()})

    d.get_call_template = get_call_template
    return d


def _build(chains: str = "loops") -> None:
    """(1) a copy of every kernel module's globals; (2) a CUDA dispatcher per kernel over
    its module's copy; (3) every kernel in every copy replaced by its CUDA dispatcher.
    Numba reads a function's globals when it types it (at the first launch), so the
    dispatchers of (2) see the rebinding of (3).  ``chains`` 'extern': QDLDL's three
    serial chains replaced by :mod:`.chains`' calls of per-pattern code (a separate set
    of dispatchers; the 'loops' set is untouched)."""
    from numba import cuda

    _device, _globals = _variants[chains]
    mods = _kernel_modules()
    for mod in mods:
        _globals[mod.__name__] = dict(vars(mod))
    for mod in mods:
        for v in vars(mod).values():
            if _is_kernel(v) and v.py_func.__module__ == mod.__name__:
                inline = v.targetoptions.get("inline", "never")
                if inline == "never" and len(v.py_func.__code__.co_code) >= OUT_OF_LINE_BYTES:
                    _out_of_line.add((mod.__name__, v.py_func.__qualname__))
                _device[id(v)] = _unliteral_calls(cuda.jit(device=True, inline=inline)(
                    _copy(v.py_func, _globals[mod.__name__])))
    # the int-slot accessor reads the structure from one shared array (.accessors)
    from ..kernels import _jit
    from . import accessors

    _device[id(_jit._i)] = cuda.jit(device=True, inline="always")(accessors.int_slot)
    # QDLDL's working vectors from shared memory where the launch gave some
    ga = _globals[accessors.__name__] = dict(vars(accessors))
    ga["int_slot"] = _device[id(_jit._i)]
    ga["shared_offset"] = cuda.jit(device=True, inline="always")(
        _copy(accessors.shared_offset, ga))
    _device[id(_jit._fv)] = cuda.jit(device=True, inline="always")(
        _copy(accessors.working_vector, ga))
    # the teams (.team): its functions over its own rebound globals; the team barrier and
    # the shared pieces' leaders in place of their CPU kernels
    from . import team

    g = _globals[team.__name__] = dict(vars(team))
    for fn in team.DEVICE_FUNCTIONS:
        _device[id(fn)] = _unliteral_calls(cuda.jit(
            device=True, inline=team.INLINE.get(fn, "never"))(_copy(fn, g)))
    for cpu, fn in team.REPLACED.items():
        _device[id(cpu)] = _device[id(fn)]
    loops = {}
    if chains == "extern":
        from . import chains as chain_module

        gc = _globals[chain_module.__name__] = dict(vars(chain_module))
        for cpu, fn in chain_module.REPLACED.items():
            loops[chain_module.LOOP_NAMES[fn]] = _device[id(cpu)]
            _device[id(fn)] = cuda.jit(device=True)(_copy(fn, gc))
            _device[id(cpu)] = _device[id(fn)]
    for g in _globals.values():
        _rebind(g, _device)
    if loops:
        gc.update(loops)        # the wrappers' fallbacks: the loops' CUDA versions
    _install_noinline()


def device_functions(chains: str = "loops") -> dict:
    """{kernel name: CUDA device dispatcher} for every kernel of every module of
    :mod:`caspar_backend.compiled.kernels` (built once per process and ``chains``
    variant, :data:`CHAINS`)."""
    if chains not in _variants:
        raise ValueError(f"chains must be one of {CHAINS}, got {chains!r}")
    device = _variants[chains][0]
    with _lock:
        if not device:
            _build(chains)
        return {name: device[id(v)] for mod in _kernel_modules()
                for name, v in vars(mod).items()
                if _is_kernel(v) and v.py_func.__module__ == mod.__name__}


def device_version(py_func, chains: str = "loops", **jit_options):
    """``cuda.jit(**jit_options)`` of ``py_func`` (plain Python, not a dispatcher) over
    a copy of its module's globals with the kernels rebound to their CUDA versions of
    the ``chains`` variant."""
    from numba import cuda

    device_functions(chains)
    g = dict(vars(sys.modules[py_func.__module__]))
    _rebind(g, _variants[chains][0])
    return cuda.jit(**jit_options)(_copy(py_func, g))
