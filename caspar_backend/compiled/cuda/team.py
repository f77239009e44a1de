"""The CUDA kernel's teams: ``lanes`` consecutive threads of a warp sharing one instance's
solve (:mod:`..kernels.team` has the rule and the CPU side).

Lane 0, the leader, runs :func:`..kernels.ipm.solve_instance`; the CUDA build binds the
pieces of :data:`LEADERS` in it to their leader functions here, which post the piece's
job in int scratch slot I_TEAM, meet the team at a warp barrier, do lane 0's share (the
part kernel at ``(0, lanes)``) and meet it again.  Lanes 1 .. lanes - 1 run
:func:`team_worker`: at the first barrier they read the job, do their share, and meet
the leader at the second; :data:`..kernels.team.TEAM_STOP` (posted by
:func:`team_finish` when the solve returns) ends them.  With one lane (the default
launch, and every workspace template: I_TEAM = (0, 1, 0)) a leader function is its part at
``(0, 1)`` behind one branch, and no barrier is met.

Why a barrier suffices: ``__syncwarp(mask)`` orders memory among the threads it names,
and on sm_70 and later they may reach it from different code (the leader inside the
solve, the workers in their loop); every lane of a part meets its :func:`team_sync`
barriers in the same number and order, the part's control flow not depending on the
lane.  A team lies inside one warp (``lanes`` divides 32, the launch aligns teams).

Everything here is plain Python built for the GPU by :mod:`.retarget` (the kernels'
accessors and callees rebound as for the kernels themselves).
"""
from __future__ import annotations

from numba import cuda

from ..kernels._jit import U, _f, _i
from ..kernels.check_parts import all_finite, all_finite_combined, all_finite_part
from ..kernels.errors_parts import errors_combined, errors_terms, errors_terms_part
from ..kernels.ldl_parts import (ldl_gather, ldl_gather_part, ldl_inertia,
                                 ldl_inertia_combined, ldl_inertia_part, ldl_load,
                                 ldl_load_part, ldl_scale, ldl_scale_part, ldl_scatter,
                                 ldl_scatter_part)
from ..kernels.step_parts import (accept_step, accept_step_part, barrier_minima,
                                  barrier_terms, barrier_terms_part, newton_rhs,
                                  newton_rhs_part, rows_finite, sigma_terms,
                                  sigma_terms_part, step_measures, step_measures_combined,
                                  step_measures_part, trial_point, trial_point_part,
                                  zeroth_rows, zeroth_rows_part)
from ..kernels.kkt import kkt_build, kkt_build_one, kkt_matvec, kkt_matvec_one
from ..kernels.kkt_parts import kkt_build_part, kkt_matvec_part
from ..kernels.refine_parts import (combined_norms, refine_residual, refine_residual_part,
                                    refine_update, refine_update_part)
from ..kernels.slack_nlp import aty, aty_one, aty_part
from ..kernels.slots import F_TEAM_ARGS, I_TEAM
from ..kernels.tape_eval import (first_values, first_values_part, hess_values,
                                 hess_values_part, zeroth_values, zeroth_values_part)
from ..kernels.team import (JOB_ACCEPT_STEP, JOB_ALL_FINITE, JOB_ATY, JOB_BARRIER_TERMS,
                            JOB_ERRORS_TERMS, JOB_FIRST_VALUES, JOB_HESS_VALUES,
                            JOB_KKT_BUILD, JOB_KKT_MATVEC, JOB_LDL_GATHER,
                            JOB_LDL_INERTIA, JOB_LDL_LOAD, JOB_LDL_SCALE, JOB_LDL_SCATTER,
                            JOB_NEWTON_RHS,
                            JOB_REFINE_RESIDUAL, JOB_REFINE_UPDATE, JOB_SIGMA_TERMS,
                            JOB_STEP_MEASURES, JOB_TRIAL_POINT, JOB_ZEROTH_ROWS,
                            JOB_ZEROTH_VALUES, TEAM_JOB, TEAM_LANES, TEAM_SHARED, TEAM_STOP,
                            team_sync)

#: the team sizes a launch may use (divisors of the warp)
LANES = (1, 2, 4, 8, 16, 32)


def team_mask(lanes):
    """The warp mask of this thread's team (``lanes`` lanes from a multiple of
    ``lanes``), as the signed 32-bit value ``__syncwarp`` takes."""
    lane = cuda.laneid
    m = ((1 << lanes) - 1) << (lane - lane % lanes)
    if m >= 2147483648:
        m -= 4294967296
    return m


def team_sync_cuda(Ib, IO):
    """:func:`..kernels.team.team_sync` on the GPU: the team's barrier (none alone)."""
    lanes = _i(Ib, IO, I_TEAM)[TEAM_LANES]
    if lanes > 1:
        cuda.syncwarp(team_mask(lanes))


def _post(Ib, IO, job):
    """The leader's half of a job's first barrier: ``lanes``, the job posted and met."""
    team = _i(Ib, IO, I_TEAM)
    lanes = team[TEAM_LANES]
    if lanes > 1:
        team[TEAM_JOB] = job
        cuda.syncwarp(team_mask(lanes))
    return lanes


def _post_two(Fb, FO, Ib, IO, job, a0, a1):
    """:func:`_post` with the job's two scalars first in F_TEAM_ARGS (a team's only)."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] > 1:
        args = _f(Fb, FO, F_TEAM_ARGS)
        args[0] = a0
        args[1] = a1
    return _post(Ib, IO, job)


def _post_slot(Fb, FO, Ib, IO, job, slot):
    """:func:`_post` with the job's slot number first in F_TEAM_ARGS (a team's only)."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] > 1:
        _f(Fb, FO, F_TEAM_ARGS)[0] = slot
    return _post(Ib, IO, job)


def _done(lanes):
    """The job's last barrier (none alone)."""
    if lanes > 1:
        cuda.syncwarp(team_mask(lanes))


def kkt_matvec_leader(Fb, FO, Ib, IO):
    """:func:`..kernels.kkt.kkt_matvec` on the leader of a team (alone: its one-thread
    schedule, the same bits)."""
    lanes = _post(Ib, IO, JOB_KKT_MATVEC)
    if lanes > 1:
        kkt_matvec_part(Fb, FO, Ib, IO, U(0), U(lanes))
        _done(lanes)
    else:
        kkt_matvec_one(Fb, FO, Ib, IO)


def kkt_build_leader(Fb, FO, Ib, IO, O, eps, delta_w, delta_c):
    """:func:`..kernels.kkt.kkt_build` on the leader of a team (its scalars posted in
    F_TEAM_ARGS; alone: its one-thread schedule, the same bits)."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] == 1:
        kkt_build_one(Fb, FO, Ib, IO, O, eps, delta_w, delta_c)
        return
    args = _f(Fb, FO, F_TEAM_ARGS)
    args[0] = eps
    args[1] = delta_w
    args[2] = delta_c
    lanes = _post(Ib, IO, JOB_KKT_BUILD)
    kkt_build_part(Fb, FO, Ib, IO, O, eps, delta_w, delta_c, U(0), U(lanes))
    _done(lanes)


def zeroth_values_leader(Fb, FO, Ib, IO):
    """:func:`..kernels.tape_eval.zeroth_values` on the leader of a team."""
    lanes = _post(Ib, IO, JOB_ZEROTH_VALUES)
    zeroth_values_part(Fb, FO, Ib, IO, U(0), U(lanes))
    _done(lanes)


def first_values_leader(Fb, FO, Ib, IO):
    """:func:`..kernels.tape_eval.first_values` on the leader of a team."""
    lanes = _post(Ib, IO, JOB_FIRST_VALUES)
    first_values_part(Fb, FO, Ib, IO, U(0), U(lanes))
    _done(lanes)


def hess_values_leader(Fb, FO, Ib, IO, objf, out_slot):
    """:func:`..kernels.tape_eval.hess_values` on the leader of a team (its scalars
    posted in F_TEAM_ARGS, the slot number exact in a float)."""
    lanes = _post_two(Fb, FO, Ib, IO, JOB_HESS_VALUES, objf, out_slot)
    hess_values_part(Fb, FO, Ib, IO, objf, out_slot, U(0), U(lanes))
    _done(lanes)


def refine_residual_leader(Fb, FO, Ib, IO, norms):
    """:func:`..kernels.refine_parts.refine_residual` on the leader of a team (``norms``
    posted in F_TEAM_ARGS); the lanes' partial norms combined after the job."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] > 1:
        _f(Fb, FO, F_TEAM_ARGS)[0] = norms
    lanes = _post(Ib, IO, JOB_REFINE_RESIDUAL)
    refine_residual_part(Fb, FO, Ib, IO, norms, U(0), U(lanes))
    _done(lanes)
    return combined_norms(Fb, FO, lanes)


def refine_update_leader(Fb, FO, Ib, IO):
    """:func:`..kernels.refine_parts.refine_update` on the leader of a team."""
    lanes = _post(Ib, IO, JOB_REFINE_UPDATE)
    refine_update_part(Fb, FO, Ib, IO, U(0), U(lanes))
    _done(lanes)


def aty_leader(Fb, FO, Ib, IO, out_slot):
    """:func:`..kernels.slack_nlp.aty` on the leader of a team (the slot posted in
    F_TEAM_ARGS, exact in a float; alone: its one-thread scatter, the same bits)."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] == 1:
        aty_one(Fb, FO, Ib, IO, out_slot)
        return
    _f(Fb, FO, F_TEAM_ARGS)[0] = out_slot
    lanes = _post(Ib, IO, JOB_ATY)
    aty_part(Fb, FO, Ib, IO, out_slot, U(0), U(lanes))
    _done(lanes)


def all_finite_leader(Fb, FO, Ib, IO, slot, n):
    """:func:`..kernels.check_parts.all_finite` on the leader of a team (the slot and
    n posted in F_TEAM_ARGS, exact in floats); the lanes' flags combined after the job."""
    lanes = _post_two(Fb, FO, Ib, IO, JOB_ALL_FINITE, slot, n)
    all_finite_part(Fb, FO, Ib, IO, slot, n, U(0), U(lanes))
    _done(lanes)
    return all_finite_combined(Fb, FO, lanes)


def errors_terms_leader(Fb, FO, Ib, IO, mu):
    """:func:`..kernels.errors_parts.errors_terms` on the leader of a team (mu posted in
    F_TEAM_ARGS); the lanes' partials combined after the job."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] > 1:
        _f(Fb, FO, F_TEAM_ARGS)[0] = mu
    lanes = _post(Ib, IO, JOB_ERRORS_TERMS)
    errors_terms_part(Fb, FO, Ib, IO, mu, U(0), U(lanes))
    _done(lanes)
    return errors_combined(Fb, FO, Ib, IO, lanes)


def trial_point_leader(Fb, FO, Ib, IO, alpha, dw_slot):
    """:func:`..kernels.step_parts.trial_point` on the leader of a team."""
    lanes = _post_two(Fb, FO, Ib, IO, JOB_TRIAL_POINT, alpha, dw_slot)
    trial_point_part(Fb, FO, Ib, IO, alpha, dw_slot, U(0), U(lanes))
    _done(lanes)


def zeroth_rows_leader(Fb, FO, Ib, IO, w_slot, h_slot, measures):
    """:func:`..kernels.step_parts.zeroth_rows` on the leader of a team (the slots and
    ``measures`` posted in F_TEAM_ARGS); the lanes' flags combined after the job."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] > 1:
        _f(Fb, FO, F_TEAM_ARGS)[2] = measures
    lanes = _post_two(Fb, FO, Ib, IO, JOB_ZEROTH_ROWS, w_slot, h_slot)
    zeroth_rows_part(Fb, FO, Ib, IO, w_slot, h_slot, measures, U(0), U(lanes))
    _done(lanes)
    return rows_finite(Fb, FO, lanes) if measures == 1 else True


def barrier_terms_leader(Fb, FO, Ib, IO, w_slot):
    """:func:`..kernels.step_parts.barrier_terms` on the leader of a team; the lanes'
    minima combined after the job."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] > 1:
        _f(Fb, FO, F_TEAM_ARGS)[0] = w_slot
    lanes = _post(Ib, IO, JOB_BARRIER_TERMS)
    barrier_terms_part(Fb, FO, Ib, IO, w_slot, U(0), U(lanes))
    _done(lanes)
    return barrier_minima(Fb, FO, lanes)


def accept_step_leader(Fb, FO, Ib, IO, O, alpha, alpha_z, h_slot, dy_slot, dzl_slot,
                       dzu_slot, mu):
    """:func:`..kernels.step_parts.accept_step` on the leader of a team (its scalars
    posted in F_TEAM_ARGS, the slot numbers exact in floats)."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] > 1:
        args = _f(Fb, FO, F_TEAM_ARGS)
        args[0] = alpha
        args[1] = alpha_z
        args[2] = h_slot
        args[3] = dy_slot
        args[4] = dzl_slot
        args[5] = dzu_slot
        args[6] = mu
    lanes = _post(Ib, IO, JOB_ACCEPT_STEP)
    accept_step_part(Fb, FO, Ib, IO, O, alpha, alpha_z, h_slot, dy_slot, dzl_slot, dzu_slot,
                     mu, U(0), U(lanes))
    _done(lanes)


def sigma_terms_leader(Fb, FO, Ib, IO):
    """:func:`..kernels.step_parts.sigma_terms` on the leader of a team."""
    lanes = _post(Ib, IO, JOB_SIGMA_TERMS)
    sigma_terms_part(Fb, FO, Ib, IO, U(0), U(lanes))
    _done(lanes)


def newton_rhs_leader(Fb, FO, Ib, IO, O, mu):
    """:func:`..kernels.step_parts.newton_rhs` on the leader of a team (mu posted in
    F_TEAM_ARGS)."""
    if _i(Ib, IO, I_TEAM)[TEAM_LANES] > 1:
        _f(Fb, FO, F_TEAM_ARGS)[0] = mu
    lanes = _post(Ib, IO, JOB_NEWTON_RHS)
    newton_rhs_part(Fb, FO, Ib, IO, O, mu, U(0), U(lanes))
    _done(lanes)


def step_measures_leader(Fb, FO, Ib, IO, mu, tau):
    """:func:`..kernels.step_parts.step_measures` on the leader of a team (mu and tau
    posted in F_TEAM_ARGS); the lanes' partials combined after the job."""
    lanes = _post_two(Fb, FO, Ib, IO, JOB_STEP_MEASURES, mu, tau)
    step_measures_part(Fb, FO, Ib, IO, mu, tau, U(0), U(lanes))
    _done(lanes)
    return step_measures_combined(Fb, FO, Ib, IO, lanes)


def ldl_load_leader(Fb, FO, Ib, IO):
    """:func:`..kernels.ldl_parts.ldl_load` on the leader of a team."""
    lanes = _post(Ib, IO, JOB_LDL_LOAD)
    ldl_load_part(Fb, FO, Ib, IO, U(0), U(lanes))
    _done(lanes)


def ldl_inertia_leader(Fb, FO, Ib, IO):
    """:func:`..kernels.ldl_parts.ldl_inertia` on the leader of a team; the lanes'
    counts summed after the job."""
    lanes = _post(Ib, IO, JOB_LDL_INERTIA)
    ldl_inertia_part(Fb, FO, Ib, IO, U(0), U(lanes))
    _done(lanes)
    return ldl_inertia_combined(Fb, FO, Ib, IO, lanes)


def ldl_gather_leader(Fb, FO, Ib, IO, b_slot):
    """:func:`..kernels.ldl_parts.ldl_gather` on the leader of a team (the slot posted
    in F_TEAM_ARGS)."""
    lanes = _post_slot(Fb, FO, Ib, IO, JOB_LDL_GATHER, b_slot)
    ldl_gather_part(Fb, FO, Ib, IO, b_slot, U(0), U(lanes))
    _done(lanes)


def ldl_scale_leader(Fb, FO, Ib, IO):
    """:func:`..kernels.ldl_parts.ldl_scale` on the leader of a team."""
    lanes = _post(Ib, IO, JOB_LDL_SCALE)
    ldl_scale_part(Fb, FO, Ib, IO, U(0), U(lanes))
    _done(lanes)


def ldl_scatter_leader(Fb, FO, Ib, IO, x_slot):
    """:func:`..kernels.ldl_parts.ldl_scatter` on the leader of a team (the slot posted
    in F_TEAM_ARGS)."""
    lanes = _post_slot(Fb, FO, Ib, IO, JOB_LDL_SCATTER, x_slot)
    ldl_scatter_part(Fb, FO, Ib, IO, x_slot, U(0), U(lanes))
    _done(lanes)


def _dispatch(job, Fb, FO, Ib, IO, O, lane, lanes):
    """A worker's share of ``job`` (every job of :data:`LEADERS`)."""
    if job == JOB_KKT_MATVEC:
        kkt_matvec_part(Fb, FO, Ib, IO, U(lane), U(lanes))
    elif job == JOB_KKT_BUILD:
        args = _f(Fb, FO, F_TEAM_ARGS)
        kkt_build_part(Fb, FO, Ib, IO, O, args[0], args[1], args[2], U(lane), U(lanes))
    elif job == JOB_ZEROTH_VALUES:
        zeroth_values_part(Fb, FO, Ib, IO, U(lane), U(lanes))
    elif job == JOB_FIRST_VALUES:
        first_values_part(Fb, FO, Ib, IO, U(lane), U(lanes))
    elif job == JOB_HESS_VALUES:
        args = _f(Fb, FO, F_TEAM_ARGS)
        hess_values_part(Fb, FO, Ib, IO, args[0], int(args[1]), U(lane), U(lanes))
    elif job == JOB_REFINE_RESIDUAL:
        args = _f(Fb, FO, F_TEAM_ARGS)
        refine_residual_part(Fb, FO, Ib, IO, int(args[0]), U(lane), U(lanes))
    elif job == JOB_REFINE_UPDATE:
        refine_update_part(Fb, FO, Ib, IO, U(lane), U(lanes))
    elif job == JOB_ATY:
        aty_part(Fb, FO, Ib, IO, int(_f(Fb, FO, F_TEAM_ARGS)[0]), U(lane), U(lanes))
    elif job == JOB_ALL_FINITE:
        args = _f(Fb, FO, F_TEAM_ARGS)
        all_finite_part(Fb, FO, Ib, IO, int(args[0]), int(args[1]), U(lane), U(lanes))
    elif job == JOB_ERRORS_TERMS:
        errors_terms_part(Fb, FO, Ib, IO, _f(Fb, FO, F_TEAM_ARGS)[0], U(lane), U(lanes))
    elif job == JOB_LDL_LOAD:
        ldl_load_part(Fb, FO, Ib, IO, U(lane), U(lanes))
    elif job == JOB_LDL_INERTIA:
        ldl_inertia_part(Fb, FO, Ib, IO, U(lane), U(lanes))
    elif job == JOB_LDL_GATHER:
        ldl_gather_part(Fb, FO, Ib, IO, int(_f(Fb, FO, F_TEAM_ARGS)[0]), U(lane), U(lanes))
    elif job == JOB_LDL_SCALE:
        ldl_scale_part(Fb, FO, Ib, IO, U(lane), U(lanes))
    elif job == JOB_LDL_SCATTER:
        ldl_scatter_part(Fb, FO, Ib, IO, int(_f(Fb, FO, F_TEAM_ARGS)[0]), U(lane), U(lanes))
    elif job == JOB_SIGMA_TERMS:
        sigma_terms_part(Fb, FO, Ib, IO, U(lane), U(lanes))
    elif job == JOB_NEWTON_RHS:
        newton_rhs_part(Fb, FO, Ib, IO, O, _f(Fb, FO, F_TEAM_ARGS)[0], U(lane), U(lanes))
    elif job == JOB_STEP_MEASURES:
        args = _f(Fb, FO, F_TEAM_ARGS)
        step_measures_part(Fb, FO, Ib, IO, args[0], args[1], U(lane), U(lanes))
    elif job == JOB_TRIAL_POINT:
        args = _f(Fb, FO, F_TEAM_ARGS)
        trial_point_part(Fb, FO, Ib, IO, args[0], int(args[1]), U(lane), U(lanes))
    elif job == JOB_ZEROTH_ROWS:
        args = _f(Fb, FO, F_TEAM_ARGS)
        zeroth_rows_part(Fb, FO, Ib, IO, int(args[0]), int(args[1]), int(args[2]), U(lane),
                         U(lanes))
    elif job == JOB_BARRIER_TERMS:
        barrier_terms_part(Fb, FO, Ib, IO, int(_f(Fb, FO, F_TEAM_ARGS)[0]), U(lane),
                           U(lanes))
    elif job == JOB_ACCEPT_STEP:
        args = _f(Fb, FO, F_TEAM_ARGS)
        accept_step_part(Fb, FO, Ib, IO, O, args[0], args[1], int(args[2]), int(args[3]),
                         int(args[4]), int(args[5]), args[6], U(lane), U(lanes))


def team_worker(Fb, FO, Ib, IO, O, lane, lanes):
    """Lane ``lane`` (> 0) of the team: each job's share, until the solve ends."""
    team = _i(Ib, IO, I_TEAM)
    mask = team_mask(lanes)
    while True:
        cuda.syncwarp(mask)
        job = team[TEAM_JOB]
        if job == TEAM_STOP:
            break
        _dispatch(job, Fb, FO, Ib, IO, O, lane, lanes)
        cuda.syncwarp(mask)


def team_start(Ib, IO, lanes, S):
    """The leader, before the solve: the team's size and its shared entries (S float64,
    0: none; :func:`.accessors.working_vector`) where its jobs look for them."""
    team = _i(Ib, IO, I_TEAM)
    team[TEAM_LANES] = lanes
    team[TEAM_SHARED] = S


def team_finish(Ib, IO):
    """The leader, after the solve: the workers released."""
    team = _i(Ib, IO, I_TEAM)
    lanes = team[TEAM_LANES]
    if lanes > 1:
        team[TEAM_JOB] = TEAM_STOP
        cuda.syncwarp(team_mask(lanes))


#: CPU kernel -> its leader function (the jobs a team shares; tests check each has its
#: job number and a branch of :func:`_dispatch`)
LEADERS = {kkt_matvec: (JOB_KKT_MATVEC, kkt_matvec_leader),
           kkt_build: (JOB_KKT_BUILD, kkt_build_leader),
           zeroth_values: (JOB_ZEROTH_VALUES, zeroth_values_leader),
           first_values: (JOB_FIRST_VALUES, first_values_leader),
           hess_values: (JOB_HESS_VALUES, hess_values_leader),
           refine_residual: (JOB_REFINE_RESIDUAL, refine_residual_leader),
           refine_update: (JOB_REFINE_UPDATE, refine_update_leader),
           aty: (JOB_ATY, aty_leader),
           all_finite: (JOB_ALL_FINITE, all_finite_leader),
           errors_terms: (JOB_ERRORS_TERMS, errors_terms_leader),
           trial_point: (JOB_TRIAL_POINT, trial_point_leader),
           zeroth_rows: (JOB_ZEROTH_ROWS, zeroth_rows_leader),
           barrier_terms: (JOB_BARRIER_TERMS, barrier_terms_leader),
           accept_step: (JOB_ACCEPT_STEP, accept_step_leader),
           sigma_terms: (JOB_SIGMA_TERMS, sigma_terms_leader),
           newton_rhs: (JOB_NEWTON_RHS, newton_rhs_leader),
           step_measures: (JOB_STEP_MEASURES, step_measures_leader),
           ldl_load: (JOB_LDL_LOAD, ldl_load_leader),
           ldl_inertia: (JOB_LDL_INERTIA, ldl_inertia_leader),
           ldl_gather: (JOB_LDL_GATHER, ldl_gather_leader),
           ldl_scale: (JOB_LDL_SCALE, ldl_scale_leader),
           ldl_scatter: (JOB_LDL_SCATTER, ldl_scatter_leader)}
#: CPU kernel -> the function the CUDA build uses instead
REPLACED = {team_sync: team_sync_cuda,
            **{cpu: leader for cpu, (_, leader) in LEADERS.items()}}
#: the plain functions above the global kernel calls (built with the kernels)
DEVICE_FUNCTIONS = (team_mask, team_sync_cuda, _post, _post_two, _post_slot, _done,
                    kkt_matvec_leader,
                    kkt_build_leader, zeroth_values_leader, first_values_leader,
                    hess_values_leader, refine_residual_leader, refine_update_leader,
                    aty_leader, all_finite_leader, errors_terms_leader, trial_point_leader,
                    zeroth_rows_leader, barrier_terms_leader, accept_step_leader,
                    sigma_terms_leader, newton_rhs_leader, step_measures_leader,
                    ldl_load_leader, ldl_inertia_leader, ldl_gather_leader, ldl_scale_leader,
                    ldl_scatter_leader, _dispatch,
                    team_worker, team_start, team_finish)
#: the small ones, inlined (the rest left to NVVM's inliner)
INLINE = {fn: "always" for fn in (team_mask, team_sync_cuda, _post, _post_two, _post_slot,
                                  _done, team_start, team_finish)}
