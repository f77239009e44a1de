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

    lib = kernel._codelibrary
    if cc not in lib._cubin_cache:
        raise ValueError(f"the kernel holds no cubin for {cc}")
    lib_state = lib._reduce_states()
    lib_state.update(llvm_strs=[], ptx_cache={}, linkerinfo_cache={},
                     cubin_cache={cc: lib._cubin_cache[cc]})
    state = dict(kernel._reduce_states(), codelibrary=lib_state)
    p = prebuilt_path(columns, f"{cc[0]}{cc[1]}")
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(p, lzma.compress(pickle.dumps(state, protocol=4)))
    return p


def load(columns: bool, cc: str, py_func, argtypes: tuple):
    """A dispatcher of the kernel function ``py_func`` (retargeted,
    :func:`.retarget.device_version`) with the prebuilt rows or columns kernel for ``cc``
    registered for ``argtypes``, or None where the cache has no such file or it does not
    load (a warning names the file)."""
    p = prebuilt_path(columns, cc)
    if not p.is_file():
        return None
    try:
        from numba.cuda.codegen import CUDACodeLibrary
        from numba.cuda.dispatcher import _Kernel

        from .retarget import device_version

        state = pickle.loads(lzma.decompress(p.read_bytes()))
        state["codelibrary"] = CUDACodeLibrary._rebuild(**state["codelibrary"])
        k = _Kernel._rebuild(**state)
        d = device_version(py_func, cache=False)
        d.add_overload(k, tuple(argtypes))
        return d
    except Exception as exc:        # a damaged or foreign file: compile instead
        warnings.warn(f"caspar: prebuilt CUDA kernel {p} not loaded ({exc!r}); compiling",
                      RuntimeWarning, stacklevel=2)
        return None
