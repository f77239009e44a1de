"""CUDA batch kernels compiled elsewhere (:mod:`.offline`, on a machine without a GPU) and
loaded here instead of compiling: a GPU machine's first batch then waits ~1 s instead of
minutes of NVVM and ptxas.

A prebuilt kernel is a file in the CUDA kernel cache (:func:`.cache.cuda_cache_dir`)::

    prebuilt-<rows|columns>-<sources stamp>-sm<cc>-<numba-cuda version>.pkl.xz

holding, pickled and xz-compressed, numba-cuda's reduced state of the kernel object
(``_Kernel._reduce_states()``: entry name, signature, options) with its code library's
reduced state (``CUDACodeLibrary._reduce_states()``) in place of the library: the cubin
for ``cc`` in its cubin cache, the LLVM IR and PTX left out (a loaded cubin needs
neither).  The name carries everything that must match for the cubin to be this
process's kernel: the stamp of the kernel sources (:func:`.cache._stamp`), the GPU's
compute capability, the numba-cuda that pickled the state (:func:`.cache.prebuilt_path`).
:func:`load` rebuilds the kernel object and registers it with a fresh dispatcher of the
kernel function for :func:`.launch.signature` (``launch.kernel`` calls it); a file that
fails to load is reported and ignored (the kernel is then compiled as without it).
:func:`.offline.prebuild` compiles and saves them.

    CASPAR_CACHE_DIR=DIR python -m caspar_backend.compiled --cuda-prebuild 90
    # copy DIR to the GPU machine, run there with CASPAR_CACHE_DIR=DIR
"""
from __future__ import annotations

import lzma
import pickle
import warnings
from pathlib import Path

from .cache import prebuilt_path


def save(kernel, columns: bool, cc: tuple[int, int]) -> Path:
    """Write ``kernel`` (numba-cuda's kernel object with the cubin for ``cc`` in its code
    library, :func:`.offline.kernel_object`) as the prebuilt file
    (:func:`.cache.prebuilt_path`); returns its path."""
    from ...cache_dir import write_atomically

    if cc not in kernel._codelibrary._cubin_cache:
        raise ValueError(f"the kernel holds no cubin for {cc}")
    p = prebuilt_path(columns, f"{cc[0]}{cc[1]}")
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(p, lzma.compress(pickle.dumps(reduced(kernel, cc), protocol=4)))
    return p


def reduced(kernel, cc: tuple | None = None, ptx: bool = False) -> dict:
    """numba-cuda's reduced state of ``kernel`` with its code library's in place of the
    library: the cubin for ``cc`` (as bytes, under ``cc[:2]``) or none, the PTX only with
    ``ptx`` (what a later link needs), never the LLVM IR.  :func:`rebuilt` inverts it."""
    lib = kernel._codelibrary
    lib_state = lib._reduce_states()
    lib_state.update(llvm_strs=[], linkerinfo_cache={},
                     ptx_cache=dict(lib._ptx_cache) if ptx else {},
                     cubin_cache={} if cc is None
                     else {cc[:2]: _cubin_bytes(lib._cubin_cache[cc])})
    return dict(kernel._reduce_states(), codelibrary=lib_state)


def kernel_object(py_func, argtypes: tuple, chains: str = "loops"):
    """numba-cuda's kernel object (``numba.cuda.dispatcher._Kernel``) of ``py_func``
    retargeted (``chains``, :func:`.retarget.device_version`) for ``argtypes``: typed and
    lowered, its code generated at the first PTX or cubin request."""
    from numba.cuda.dispatcher import _Kernel

    from .retarget import device_version

    d = device_version(py_func, chains=chains, cache=False)
    return _Kernel(d.py_func, argtypes, **d.targetoptions)


def rebuilt(state: dict, py_func, argtypes: tuple, chains: str = "loops",
            cubin: tuple | None = None):
    """A dispatcher of ``py_func`` (retargeted with ``chains``,
    :func:`.retarget.device_version`) with the kernel of ``state`` (:func:`reduced`)
    registered for ``argtypes``; ``cubin``: ``(cc, bytes)`` to use in place of the
    state's.  The cubin is put where numba-cuda looks for it on this device."""
    from numba.cuda.codegen import CUDACodeLibrary
    from numba.cuda.dispatcher import _Kernel

    from .retarget import device_version

    lib_state = dict(state["codelibrary"])
    if cubin is not None:
        lib_state["cubin_cache"] = {tuple(cubin[0][:2]): cubin[1]}
    lib = CUDACodeLibrary._rebuild(**lib_state)
    _for_this_device(lib)
    k = _Kernel._rebuild(**dict(state, codelibrary=lib))
    d = device_version(py_func, chains=chains, cache=False)
    d.add_overload(k, tuple(argtypes))
    return d


def _cubin_bytes(cubin) -> bytes:
    """A code library's cubin as bytes (numba-cuda 0.30 holds a cuda.core ObjectCode)."""
    return cubin if isinstance(cubin, bytes) else bytes(cubin.code)


def _object_code(cubin: bytes):
    """The cubin in the form this numba-cuda's driver loads: a cuda.core ObjectCode where
    it uses them, else the bytes."""
    try:
        from numba.cuda.cudadrv.driver import ObjectCode
    except ImportError:
        return cubin
    return ObjectCode.from_cubin(cubin)


def _for_this_device(lib) -> None:
    """Put the library's cubin where numba-cuda looks it up for the current device: under
    the device's target, which may be the arch-specific variant ((9, 0, 'a') on an H100,
    where a cubin for sm_90 runs too), in the form its driver loads (:func:`_object_code`).
    Without a device (a build machine, the tests) the file's keys stay."""
    from numba.cuda.cudadrv.error import CudaSupportError

    try:
        target = lib._ensure_cc(None)
    except CudaSupportError:
        return
    for key, cubin in list(lib._cubin_cache.items()):
        if tuple(key[:2]) == tuple(target[:2]):
            lib._cubin_cache[target] = _object_code(cubin)


def load(columns: bool, cc: str, py_func, argtypes: tuple):
    """A dispatcher of the kernel function ``py_func`` (retargeted,
    :func:`.retarget.device_version`) with the prebuilt rows or columns kernel for ``cc``
    registered for ``argtypes``, or None where the cache has no such file or it does not
    load (a warning names the file)."""
    p = prebuilt_path(columns, cc)
    if not p.is_file():
        return None
    try:
        return rebuilt(pickle.loads(lzma.decompress(p.read_bytes())), py_func, argtypes)
    except Exception as exc:        # a damaged or foreign file: compile instead
        warnings.warn(f"caspar: prebuilt CUDA kernel {p} not loaded ({exc!r}); compiling",
                      RuntimeWarning, stacklevel=2)
        return None
