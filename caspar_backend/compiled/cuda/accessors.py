"""The int-slot accessor of the CUDA build: structure shared by every thread, scratch
per thread.

On the CPU a solve's int array ``Ib`` is one buffer (:func:`..kernels._jit._i`).  On the
GPU B threads would each hold a copy of it, and all but its last slots are structure
(tapes, index maps, the KKT pattern, QDLDL's row schedule: all but 4 of the 48,447
entries of Van der Pol collocation with N = 50) that no solve writes.  So
the CUDA build passes ``Ib`` as a pair ``(S, P)``:

    S  int64 (IO[I_FIRST_SCRATCH],)            slots 0 .. I_FIRST_SCRATCH - 1, one copy
    P  int64 (IO[-1] - IO[I_FIRST_SCRATCH],)   slots I_FIRST_SCRATCH .. end, the thread's

and :func:`int_slot` replaces ``_i`` in the retargeted kernels (:mod:`.retarget`); the
kernels' source is unchanged.  Threads reading the same structure entry read one address
(a broadcast from L1/L2) instead of B lines of DRAM.  ``k`` is a compile-time constant
after inlining, so the branch folds away.
"""
from ..kernels.slots import I_FIRST_SCRATCH


def int_slot(Ib, IO, k):
    """Int slot ``k`` of the pair ``Ib = (S, P)``: ``S[IO[k]:IO[k + 1]]`` for structure
    slots, else ``P`` at the offsets shifted by ``IO[I_FIRST_SCRATCH]``."""
    if k < I_FIRST_SCRATCH:
        return Ib[0][IO[k]:IO[k + 1]]
    base = IO[I_FIRST_SCRATCH]
    return Ib[1][IO[k] - base:IO[k + 1] - base]
