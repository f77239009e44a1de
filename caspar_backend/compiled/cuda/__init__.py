"""The compiled interior point as one CUDA kernel over B instances (issue 22): thread b
runs :func:`caspar_backend.compiled.kernels.ipm.solve_instance` on instance b, compiled
by numba-cuda from the same source as the CPU kernels.

Modules: :mod:`.retarget` (CUDA device functions from the CPU kernels' source),
:mod:`.workspaces` (the per-instance device buffers), :mod:`.launch` (the global kernel,
its launch and the read-back), :mod:`.cache` (its on-disk cache), :mod:`.group` (the
GPU path of ``solve_batch``).  Needs numba, numba-cuda and CuPy; importing this package
imports none of them.
"""
