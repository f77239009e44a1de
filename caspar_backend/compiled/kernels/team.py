"""Threads sharing one solve: the CPU side of the CUDA kernel's teams.

A solve runs on one thread (its *leader*).  In the CUDA kernel's team launch
(:mod:`..cuda.team`) ``lanes`` consecutive threads of a warp hold one instance: the leader
runs the solve, the others wait for *jobs* -- pieces of an iteration whose loops are
split over the lanes, each lane taking a consecutive share of a loop's indices -- and
meet the leader at a warp barrier after each.  A job's piece is a *part* kernel
``f_part(Fb, FO, Ib, IO, lane, lanes)`` whose loops take the lane's share
(:func:`lane_share`), whose arrays are slots (the workers find them
from the buffers alone; its scalars the leader posts in float slot F_TEAM_ARGS, the
option vector every lane has) and whose phases are separated by :func:`team_sync`; its
operations per index are the one-lane piece's, in the same order, so a team's answer
equals one thread's bit for bit.

On the CPU every solve is one lane: a piece is its part at ``(lane, lanes) = (0, 1)``
and :func:`team_sync` does nothing.  Int scratch slot I_TEAM holds ``(job, lanes,
shared)``: the job the leader posted (:data:`JOB_NONE` or a ``JOB_*``, :data:`TEAM_STOP`
at the solve's end), the team's lanes (1 in every workspace template; the team launch
writes its own) and the float64 entries of shared memory the CUDA launch gave the team
(0 in every template; :data:`TEAM_SHARED`).
"""
from ._jit import U, kernel

#: I_TEAM's fields
TEAM_JOB = 0
TEAM_LANES = 1
#: float64 entries of shared memory per team holding QDLDL's working vectors (0: none,
#: they stay in the workspace; :func:`._jit._fv`)
TEAM_SHARED = 2
#: posted jobs: none yet, the solve ended (the workers leave), and one per part kernel
#: (:data:`..cuda.team.LEADERS` maps each to its piece; a completeness test checks it)
JOB_NONE = 0
TEAM_STOP = -1
JOB_KKT_MATVEC = 1
JOB_KKT_BUILD = 2
JOB_ZEROTH_VALUES = 3
JOB_FIRST_VALUES = 4
JOB_HESS_VALUES = 5
JOB_REFINE_RESIDUAL = 6
JOB_REFINE_UPDATE = 7
JOB_ATY = 8
JOB_ALL_FINITE = 9
JOB_ERRORS_TERMS = 10
JOB_TRIAL_POINT = 11
JOB_ZEROTH_ROWS = 12
JOB_BARRIER_TERMS = 13
JOB_ACCEPT_STEP = 14
JOB_SIGMA_TERMS = 15
JOB_NEWTON_RHS = 16
JOB_STEP_MEASURES = 17
JOB_LDL_LOAD = 18
JOB_LDL_INERTIA = 19
JOB_LDL_GATHER = 20
JOB_LDL_SCALE = 21
JOB_LDL_SCATTER = 22
#: a part's partial results (a reduction's, combined by the leader): float slot
#: F_TEAM_PARTIALS holds PARTIALS values per lane, lane l's at PARTIALS l ..
PARTIALS = 12
#: the most lanes a team has (a warp)
MAX_LANES = 32


@kernel
def lane_share(n, lane, lanes):
    """The indices ``lo .. hi - 1`` of 0 .. n - 1 that lane ``lane`` of ``lanes`` takes
    in a part's loop: consecutive (a unit-stride loop, which the CPU build vectorizes),
    the lanes' shares in lane order and as equal as n allows; (0, n) for one lane.
    Unsigned (``U``) throughout."""
    n, lane, lanes = U(n), U(lane), U(lanes)
    return (n * lane) // lanes, (n * (lane + U(1))) // lanes


@kernel
def team_sync(Ib, IO):
    """The barrier between a part's phases: nothing on the CPU (one lane); the CUDA
    build's version (:func:`..cuda.team.team_sync`) waits for the team."""
    return
