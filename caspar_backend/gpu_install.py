"""How to install caspar's GPU path: the text every "GPU not usable" error ends with.

The extras (pyproject.toml) are one per CUDA major version, because CuPy and cuDSS ship
one wheel per CUDA major: ``gpu-cuda13`` for a CUDA 13 driver, ``gpu-cuda12`` for CUDA 12.
A leaf module: :mod:`.device` (CuPy missing) and :mod:`.linsolve.cudss` (nvmath-python or
cuDSS missing) both name it, and ``device`` imports ``linsolve.cudss``, not the reverse.
"""

INSTALL_HINT = ("install the GPU extra matching your CUDA driver: "
                "pip install 'caspar-backend[gpu-cuda13]' (CUDA 13) or "
                "'caspar-backend[gpu-cuda12]' (CUDA 12)")
