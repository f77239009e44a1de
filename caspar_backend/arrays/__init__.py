"""The array layer of the solver: one code path for NumPy (CPU) and CuPy (GPU).

Everything the interior point (:mod:`caspar_backend.solver`), the KKT systems
(:mod:`caspar_backend.kkt`) and the linear solvers (:mod:`caspar_backend.linsolve`) do
with arrays beyond plain ``xp`` calls lives here:

* :mod:`.xp` -- the few places where NumPy and CuPy differ (host copies, batched scalar
  reads, error state, synchronisation, gathers);
* :mod:`.fused` -- the fused vector formulas of the iteration (one kernel each on the
  device, the NumPy reference on the host) and :func:`amax_abs`;
* :mod:`.segments` -- fixed-order scatter-adds and the host-built index patterns;
* :mod:`.matvec` -- sparse products whose entries are gathered from a value vector;
* :mod:`.raw_kernels` -- the hand-written CUDA kernels of ``kernels/``, loaded once.

This package imports nothing from the solver, KKT or linear-solver packages.
"""

from .xp import (amax, asum, copy_into, errstate, gather, host, is_host,  # noqa: F401
                 scalars, synchronize)
from .fused import amax_abs  # noqa: F401
from .segments import (SegmentSum, csc_pattern, csr_rows, distinct, segment_sum,  # noqa: F401
                       stable_order, unique_inverse)
from .matvec import IndexedMatVec, indexed_matvec, indexed_matvec_kernel  # noqa: F401
