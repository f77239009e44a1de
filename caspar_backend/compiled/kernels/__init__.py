"""Numba kernels of the compiled interior point (imported lazily: importing a module of
this folder other than :mod:`.slots` loads Numba and, on first use, compiles).

Every kernel is scalar code on slices of two flat buffers (:mod:`.slots`), allocates
nothing, and returns ``-reason`` on any path it does not implement."""
