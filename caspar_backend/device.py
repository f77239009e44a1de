"""Which devices are usable, and clear errors when one is not.

``resolve_device('cuda')`` raises :class:`~caspar_backend.errors.DeviceError`
saying what is missing (CuPy, a CUDA device, nvmath-python/cuDSS) and how to
install it; ``'auto'`` picks the GPU only when it is usable.
"""

from __future__ import annotations

from functools import lru_cache

from .errors import DeviceError

INSTALL_HINT = ("install the GPU extra matching your CUDA driver: "
                "pip install 'caspar-backend[gpu-cuda13]' (CUDA 13) or "
                "'caspar-backend[gpu-cuda12]' (CUDA 12)")


@lru_cache(maxsize=None)
def cuda_problem() -> str | None:
    """``None`` when CuPy sees a CUDA device, else why not."""
    try:
        import cupy
    except Exception as e:  # ImportError, or a CUDA library load error
        return f"CuPy is not importable ({type(e).__name__}: {e}); {INSTALL_HINT}"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy found no CUDA device"
    except Exception as e:
        return f"no usable CUDA device ({type(e).__name__}: {e})"
    return None


def cuda_usable() -> bool:
    return cuda_problem() is None


def resolve_device(device: str) -> str:
    """Map 'cpu' | 'cuda' | 'auto' to the device that will run."""
    if device == "cpu":
        return "cpu"
    if device == "cuda":
        why = cuda_problem()
        if why is not None:
            raise DeviceError(f"device='cuda' requested but {why}")
        return "cuda"
    if device == "auto":
        return "cuda" if cuda_usable() else "cpu"
    raise DeviceError(f"unknown device {device!r}; use 'cpu', 'cuda' or 'auto'")
