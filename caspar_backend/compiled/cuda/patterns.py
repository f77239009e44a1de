"""The batch kernel linked with code generated for one layout's pattern: QDLDL's serial
chains (:mod:`.straight`) and the groups' tapes (:mod:`.tape_code`) as straight-line
code, called by the kernel's 'extern' variant (:mod:`.chains`), linked at run time
(:mod:`.link`: NVRTC and nvJitLink; no CUDA toolkit binaries).

Two artifacts, both in the CUDA kernel cache (:func:`.cache.cuda_cache_dir`), both keyed
by the sources' stamp, the compute capability and numba-cuda's version:

* the extern variant's rows kernel, compiled once per machine (typing, lowering, NVVM:
  minutes on a GPU machine, ~50 s on the 2-core VM -- or prebuilt, :func:`kernel_state`
  under :func:`.offline.target`): numba-cuda's reduced kernel object with its PTX and no
  cubin, ``extern-rows-<stamp>-sm<cc>-<numba-cuda>.pkl.xz``;
* per pattern (:func:`pattern_key`: the chains' :func:`.straight.pattern_key` and the tapes'
  :func:`.tape_code.pattern_key`), the cubin of that PTX linked with the pattern's
  generated code (:func:`source`; a part past its size cap is its stub: the kernel's
  loops or interpreter), ``pattern-<key>-<stamp>-sm<cc>.cubin`` (~10 s of nvJitLink for
  Van der Pol N = 50 on the VM, NVRTC's compile of the pattern included).

:func:`kernel_for` gives the dispatcher of a pattern's kernel: the state rebuilt around the
pattern's cubin (:func:`.prebuilt.rebuilt`), launched exactly as ``launch.kernel``'s.
Files are written atomically; a damaged one is rebuilt.
"""
from __future__ import annotations

import hashlib
import lzma
import pickle
import threading
import weakref
from pathlib import Path

from .cache import _stamp, cuda_cache_dir, state_path

_lock = threading.Lock()
_dispatchers: dict = {}     # (pattern key, cc) -> dispatcher, this process


def _cc_text(cc) -> str:
    return f"{cc[0]}{cc[1]}"


def kernel_path(cc) -> Path:
    """The extern variant's kernel state for ``cc`` (module docstring)."""
    return state_path("extern-rows", _cc_text(cc))


def cubin_path(key: str, cc) -> Path:
    """The cubin of pattern ``key`` for ``cc`` (module docstring)."""
    return cuda_cache_dir() / f"pattern-{key}-{_stamp()}-sm{_cc_text(cc)}.cubin"


def kernel_state(cc) -> dict:
    """The extern variant's rows kernel for ``cc``: numba-cuda's reduced kernel object
    with the PTX (:func:`.prebuilt.reduced`), from the cache or compiled now (needs a GPU
    of that capability, or :func:`.offline.target`) and stored."""
    from ...cache_dir import write_atomically

    p = kernel_path(cc)
    if p.is_file():
        try:
            return pickle.loads(lzma.decompress(p.read_bytes()))
        except Exception:       # damaged: compiled again below
            pass
    from . import launch
    from .prebuilt import kernel_object, reduced

    k = kernel_object(launch._solve_rows, launch.signature(), chains="extern")
    k._codelibrary.get_asm_str(cc=tuple(cc))
    state = reduced(k, ptx=True)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(p, lzma.compress(pickle.dumps(state, protocol=4)))
    return state


def kernel_ptx(state: dict) -> list[bytes]:
    """The PTX modules of a :func:`kernel_state` (numba-cuda keeps a list per target; the
    one target it was compiled for)."""
    (ptx,) = state["codelibrary"]["ptx_cache"].values()
    return [m.encode() if isinstance(m, str) else m
            for m in (ptx if isinstance(ptx, (list, tuple)) else [ptx])]


def pattern_cubin(lay, cc, state: dict | None = None) -> bytes:
    """The extern kernel linked with ``lay``'s generated code (:func:`source`) for
    ``cc``: from the cache, or linked now and stored."""
    from ...cache_dir import write_atomically
    from . import link

    p = cubin_path(pattern_key(lay), cc)
    if p.is_file():
        return p.read_bytes()
    state = kernel_state(cc) if state is None else state
    cubin = link.link_cubin([(link.PTX, m) for m in kernel_ptx(state)]
                            + [(link.PTX, link.compile_ptx(source(lay), cc))], cc)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(p, cubin)
    return cubin


def source(lay) -> str:
    """The pattern's CUDA C: QDLDL's chains (:mod:`.straight`) and the groups' tapes
    (:mod:`.tape_code`), each part the stub where the pattern is past its size cap."""
    from . import straight, tape_code

    return ((straight.source(lay) if straight.fits(lay) else straight.STUB)
            + (tape_code.source(lay) if tape_code.fits(lay) else tape_code.STUB))


def kernel_for(lay, cc):
    """The dispatcher of the rows kernel linked for ``lay``'s pattern on a GPU of ``cc``
    (one per pattern and process)."""
    from . import launch

    key = (pattern_key(lay), tuple(cc))
    with _lock:
        if key not in _dispatchers:
            from .prebuilt import rebuilt

            state = kernel_state(cc)
            _dispatchers[key] = rebuilt(state, launch._solve_rows, launch.signature(),
                                        chains="extern",
                                        cubin=(cc, pattern_cubin(lay, cc, state)))
        return _dispatchers[key]


#: solve_batch's GPU launches take a pattern's kernel where its cubin is ready
#: (CASPAR_CUDA_PATTERNS=0 turns it off).  On: on an H100 (session 59) Van der Pol N = 50's
#: kernel took 128-132 ms instead of 179-185 at B = 1,000 and 62 instead of 143 at B = 132,
#: the same bits; its whole batch of 1,000 47.7-52.0x sequential IPOPT instead of 36.6-38.8x
DEFAULT_ON = True


def enabled() -> bool:
    """``CASPAR_CUDA_PATTERNS`` '1' (on) or '0' (off); unset: :data:`DEFAULT_ON`."""
    import os

    v = os.environ.get("CASPAR_CUDA_PATTERNS", "")
    return DEFAULT_ON if v == "" else v == "1"


#: layout -> its pattern key (a layout is reused by every batch of its structure,
#: compiled.solve.layout_for; hashing its structure costs ~0.4 ms for Van der Pol)
_keys: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pattern_key(lay) -> str:
    """The pattern's key: its chains' and its tapes' (each 'stub' past its size cap)."""
    try:
        return _keys[lay]
    except KeyError:
        pass
    from . import straight, tape_code

    a = straight.pattern_key(lay) if straight.fits(lay) else "stub"
    b = tape_code.pattern_key(lay) if tape_code.fits(lay) else "stub"
    key = _keys[lay] = hashlib.sha256(f"{a} {b}".encode()).hexdigest()[:32]
    return key


def ready(lay, cc) -> bool:
    """Whether ``lay``'s pattern kernel for ``cc`` loads without compiling: this process
    holds it, or the cache holds the extern kernel's state and the pattern's cubin."""
    if (pattern_key(lay), tuple(cc)) in _dispatchers:
        return True
    return kernel_path(cc).is_file() and cubin_path(pattern_key(lay), cc).is_file()


_started: set = set()       # pattern keys whose build this process started


def start_build(lay, cc) -> bool:
    """Build ``lay``'s pattern kernel for ``cc`` in a detached process
    (``python -m caspar_backend.compiled --cuda-pattern FILE``: the layout pickled next
    to the cubin), once per process and pattern, unless another process holds the
    pattern's lock (younger than the CPU compile's stale age).  Until the extern kernel
    is in the cache the lock is the machine's one for it: one build at a time, since each
    would compile that kernel first (minutes of NVVM) -- a pattern turned away by it is
    tried again at a later batch.  Returns whether it started one."""
    from ...cache_dir import write_atomically
    from ..dispatch import claim_lock, run_detached

    key = pattern_key(lay)
    with _lock:
        if key in _started:
            return False
        _started.add(key)
    d = cuda_cache_dir()
    first = not kernel_path(cc).is_file()
    lock = d / (f"building-extern-sm{_cc_text(cc)}" if first else f"building-pattern-{key}")
    if not claim_lock(lock):
        if first:
            with _lock:
                _started.discard(key)
        return False
    layout_file = d / f"pattern-{key}.layout.pkl"
    try:
        write_atomically(layout_file, pickle.dumps(lay, protocol=4))
    except OSError:
        lock.unlink(missing_ok=True)
        return False
    run_detached(["--cuda-pattern", str(layout_file)], lock)
    return True


def build_from_file(layout_file, cc) -> float:
    """The pattern kernel of the pickled layout in ``layout_file`` built for ``cc`` (the
    background process's work); seconds taken."""
    import time

    t0 = time.perf_counter()
    with open(layout_file, "rb") as f:
        lay = pickle.load(f)
    pattern_cubin(lay, cc)
    return time.perf_counter() - t0
