"""Run the CUDA batch kernel in numba-cuda's simulator (no GPU) and print its results.

    NUMBA_ENABLE_CUDASIM=1 python -m tests.support.cuda_simulated

The simulator interprets the global kernel (:mod:`caspar_backend.compiled.cuda.launch`)
and every retargeted kernel as Python, thread by thread, on NumPy buffers in each of the GPU's
arrangements (instances in rows and in columns, :class:`~caspar_backend.compiled.cuda.
workspaces.DeviceWorkspaces` with ``interleaved`` False and True).  So it checks what a GPU run would
compute through the same launch and the same buffers -- indexing, views, result reading
-- without the device's rounding (libdevice, FMA).  Prints one JSON object per case:
``{"case", "columns", "lanes", "code", "iters", "f", "x", "lam_x"}`` (lists over
instances): each case in rows and in columns with one thread per instance, and in rows
with teams of :data:`TEAM_LANES` threads (:mod:`caspar_backend.compiled.cuda.team`).
"""
from __future__ import annotations

import json
import os

import numpy as np

#: the last has a K of 60 rows, past the dense Bunch-Kaufman's 48: QDLDL's kernels (and their
#: team jobs) run
CASES = ("ik", "ik_warm", "square", "hs071", "maratos", "fixed_variables", "ring_inequalities")


def _problem(case):
    from caspar_backend import from_casadi
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import _nlp

    if case == "ik":
        nlp, bounds = arm_ik()
        T = arm_targets(5, seed=4)
        ubg = np.full((5, 1), 2.5)
        ubg[3] = -10.0                      # infeasible: the kernel ejects it
        return from_casadi(nlp, **bounds), dict(x0=[0.1, 0.2, 0.3], p=T, ubg=ubg), {}
    if case == "ik_warm":                   # IPOPT's warm start from earlier answers
        nlp, bounds = arm_ik()
        problem = from_casadi(nlp, **bounds)
        first = [problem.solve(x0=[0.1, 0.2, 0.3], p=t, print_level=0)
                 for t in arm_targets(4, seed=5)]
        given = dict(x0=np.array([r.x for r in first]), p=arm_targets(4, seed=6),
                     lam_g0=np.array([r.lam_g for r in first]),
                     lam_x0=np.array([r.lam_x for r in first]))
        return problem, given, dict(warm_start_init_point=True, warm_start_bound_push=1e-6,
                                    warm_start_mult_bound_push=1e-6)
    if case == "square":                    # IPOPT's feasibility multipliers
        from tests.solver.test_square_problems import _cases

        _, nlp, args = [c for c in _cases() if c[0] == "trig"][0]
        bounds = {k: v for k, v in args.items() if k != "x0"}
        rng = np.random.default_rng(8)
        X = np.asarray(args["x0"], float) * (1 + 0.2 * rng.standard_normal((3, 3)))
        return from_casadi(nlp, **bounds), dict(x0=X), {}
    bp = {b.name: b for b in bank(include_slow=False)}[case]
    d = bp.build()
    x0 = np.asarray(d["x0"], float)
    rng = np.random.default_rng(3)
    X = np.array([x0] + [x0 + 0.05 * (1 + np.abs(x0)) * rng.standard_normal(x0.size)
                         for _ in range(2)])
    inputs = dict(x0=X, **{k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")})
    return from_casadi(_nlp(d)), inputs, dict(bp.options)


#: the team size the simulated team launch uses (a block per team)
TEAM_LANES = 4


def _simulated_warp_barrier():
    """numba-cuda's simulator has no ``syncwarp``: with one team per block, the block's
    barrier is the team's (its threads run as Python threads, in no lockstep, so a
    missing or misplaced barrier shows as a wrong answer or a hang)."""
    from numba.cuda.simulator import kernelapi

    if not hasattr(kernelapi.FakeCUDAModule, "syncwarp"):
        kernelapi.FakeCUDAModule.syncwarp = lambda self, mask=-1: self.syncthreads()


def run(case, columns, lanes=1):
    from caspar_backend.batch.inputs import batch_inputs
    from caspar_backend.compiled.cuda import launch
    from caspar_backend.compiled.cuda.group import group_layout, kernel_reason
    from caspar_backend.compiled.cuda.retarget import device_version
    from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces
    from caspar_backend.compiled.kernels.record import HIST_COLUMNS, OUT_SIZE
    from caspar_backend.compiled.options import option_vector, resolve
    from caspar_backend.compiled.rows import result_rows

    problem, given, options = _problem(case)
    inp = batch_inputs(problem, None, **given)
    sub = inp.subset(np.arange(inp.size))
    why = kernel_reason(problem, options, sub, cuda=False)
    assert not why, why
    opts, _ = resolve({**options, "print_level": 0})
    ws = DeviceWorkspaces(group_layout(problem, sub), sub.x0, sub.p, sub.lbx, sub.ubx,
                          sub.lbg, sub.ubg, xp=np, interleaved=columns,
                          shared_structure=True, lam_g0=sub.lam_g0, lam_x0=sub.lam_x0)
    structure = ws.Ishared.copy()
    B = ws.B
    code, iters, fval = np.zeros(B, np.int64), np.zeros(B, np.int64), np.zeros(B)
    kernel = device_version(launch._solve_columns if columns else launch._solve_rows)
    # one instance (one thread, or one team) per block: the simulator runs blocks one
    # after the other, and threads of one block in Python threads that contend for every
    # device call
    _simulated_warp_barrier()
    _, S = launch.shared_layout(ws.lay.FO, 1)
    kernel[B, lanes, 0, 8 * S](ws.Fall, ws.FO, ws.Ishared, ws.Iscratch, ws.IO,
                               option_vector(opts), ws.X0, ws.LBX, ws.UBX, ws.LBG, ws.UBG,
                               np.empty((0, HIST_COLUMNS)),
                               np.zeros((OUT_SIZE, B) if columns else (B, OUT_SIZE)), code,
                               iters, fval, lanes, S)
    # the shared structure is read-only (the simulator copies every argument back)
    assert np.array_equal(ws.Ishared, structure), "a kernel wrote into the shared structure"
    r = result_rows(ws, code, iters, fval)
    return dict(case=case, columns=columns, lanes=lanes, code=r.code.tolist(),
                iters=r.iters.tolist(), f=r.f.tolist(), x=r.x.tolist(),
                lam_x=r.lam_x.tolist())


def main():
    assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
    for case in CASES:
        for columns in (False, True):
            print(json.dumps(run(case, columns)), flush=True)
        print(json.dumps(run(case, False, TEAM_LANES)), flush=True)


if __name__ == "__main__":
    main()
