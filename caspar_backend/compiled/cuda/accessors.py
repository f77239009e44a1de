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
from numba import cuda, float64

from ..kernels.slots import F_LDL_D, F_LDL_DINV, F_LDL_T, F_LDL_YVALS, I_FIRST_SCRATCH, I_TEAM
from ..kernels.team import TEAM_LANES, TEAM_SHARED


def int_slot(Ib, IO, k):
    """Int slot ``k`` of the pair ``Ib = (S, P)``: ``S[IO[k]:IO[k + 1]]`` for structure
    slots, else ``P`` at the offsets shifted by ``IO[I_FIRST_SCRATCH]``."""
    if k < I_FIRST_SCRATCH:
        return Ib[0][IO[k]:IO[k + 1]]
    base = IO[I_FIRST_SCRATCH]
    return Ib[1][IO[k] - base:IO[k + 1] - base]


#: QDLDL's working vectors, which a team may hold in its block's shared memory, in their
#: order there: the solve's permuted vector t, the elimination's row, D and 1/D -- each
#: read back within a few instructions of its last write along the factorization's and
#: the substitutions' chains (:mod:`..kernels.qdldl`)
SHARED_FLOATS = (F_LDL_T, F_LDL_YVALS, F_LDL_D, F_LDL_DINV)


def shared_floats(FO) -> int:
    """The float64 entries :data:`SHARED_FLOATS` take for the offsets ``FO``."""
    return int(sum(int(FO[k + 1]) - int(FO[k]) for k in SHARED_FLOATS))


def shared_offset(FO, k):
    """Where working vector ``k`` starts in a team's shared entries (the slots of
    :data:`SHARED_FLOATS` one after the other); ``k`` a compile-time constant, so the
    branches fold away."""
    o = 0
    if k == F_LDL_T:
        return o
    o += FO[F_LDL_T + 1] - FO[F_LDL_T]
    if k == F_LDL_YVALS:
        return o
    o += FO[F_LDL_YVALS + 1] - FO[F_LDL_YVALS]
    if k == F_LDL_D:
        return o
    return o + FO[F_LDL_D + 1] - FO[F_LDL_D]


def working_vector(Fb, FO, Ib, IO, k):
    """:func:`..kernels._jit._fv` on the GPU: working vector ``k`` from the team's
    entries of the block's dynamic shared memory when the launch gave it some (I_TEAM's
    TEAM_SHARED = S > 0 entries per team, the team ``threadIdx.x // lanes`` of its
    block), else ``Fb[FO[k]:FO[k + 1]]``."""
    team = int_slot(Ib, IO, I_TEAM)
    S = team[TEAM_SHARED]
    if S > 0:
        o = (cuda.threadIdx.x // team[TEAM_LANES]) * S + shared_offset(FO, k)
        return cuda.shared.array(0, float64)[o:o + FO[k + 1] - FO[k]]
    return Fb[FO[k]:FO[k + 1]]
