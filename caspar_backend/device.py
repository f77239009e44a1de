"""Which devices are usable, and the one place that chooses where work runs.

Two things can run on the GPU: an evaluator (CuPy and a CUDA device) and a solve
(also nvmath-python with cuDSS: ``solver=True``).  :func:`resolve_device` maps the
option values ``'cpu' | 'cuda' | 'auto'`` to ``'cpu'`` or ``'cuda'``:

* ``'cuda'`` that is not usable raises :class:`~caspar_backend.errors.DeviceError`
  saying what is missing and how to install it;
* ``'auto'`` picks the GPU when it is usable and, given the problem ``size``
  (``n + m``), when that size is at least :data:`AUTO_MIN_SIZE`.
"""

from __future__ import annotations

from functools import lru_cache

from .errors import DeviceError
from .gpu_install import INSTALL_HINT


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


def gpu_problem(solver: bool = True) -> str | None:
    """``None`` when the GPU path is usable — CuPy and a CUDA device, and for a
    ``solver`` nvmath-python with cuDSS too — else what is missing."""
    why = cuda_problem()
    if why is None and solver:
        from .linsolve.cudss import cudss_problem

        why = cudss_problem()
    return why


#: ``device='auto'`` solves on the GPU from this many variables + constraints on.  Reason:
#: a GPU iteration costs ~1-2 ms of kernel launches and host synchronizations whatever
#: the size; below ~10^4 that costs about what the CPU path spends on the work.  The
#: measured break-even against the compiled CPU path (warm solves, H100 host, 2026-12-07:
#: even at 8,502, the GPU 1.2x faster at 10,351 and faster at every size above):
#: docs/device-choice.md.
AUTO_MIN_SIZE = 10_000


def resolve_device(device: str, *, size: int | None = None, solver: bool = False) -> str:
    """'cpu' or 'cuda' for the option value ``device`` ('cpu' | 'cuda' | 'auto').
    ``solver``: the GPU must also run the KKT solves (cuDSS); ``size``: ``n + m`` of
    the problem, weighed by 'auto' (None: any size)."""
    if device == "cpu":
        return "cpu"
    if device == "cuda":
        why = gpu_problem(solver)
        if why is not None:
            raise DeviceError(f"device='cuda' requested but {why}; or use device='cpu'")
        return "cuda"
    if device == "auto":
        large = size is None or size >= AUTO_MIN_SIZE
        return "cuda" if large and gpu_problem(solver) is None else "cpu"
    raise DeviceError(f"unknown device {device!r}; use 'cpu', 'cuda' or 'auto'")
