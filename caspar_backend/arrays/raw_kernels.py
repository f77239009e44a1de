"""Hand-written CUDA kernels of ``kernels/`` loaded once per process (CuPy RawModule)."""

from __future__ import annotations

_LOADED: dict = {}


def raw_kernel(cp, file: str, name: str):
    """The function ``name`` of the kernel source ``kernels/<file>``, compiled on first
    use and cached for the process."""
    key = (file, name)
    k = _LOADED.get(key)
    if k is None:
        from ..codegen_cuda import kernel_file

        k = _LOADED[key] = cp.RawModule(code=kernel_file(file)).get_function(name)
    return k
