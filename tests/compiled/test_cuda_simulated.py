"""The CUDA batch kernel's launch, run by numba-cuda's simulator on this machine (no GPU):
the global kernels and the retargeted kernels over buffers in the GPU's arrangements
(instances in rows, in columns) give each instance its own CPU ``Problem.solve``'s status,
iterations, x, f and lam_x bit for bit (the simulator evaluates the same Python in double
precision, as the CPU kernels do; the GPU's own rounding is
tests/compiled/test_cuda_batch.py's, on the GPU machine).  An infeasible instance is
ejected (code < 0), not answered.

The simulator must be chosen before numba.cuda is imported, so the kernel runs in a
subprocess (tests/support/cuda_simulated.py)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
pytest.importorskip("casadi")

from tests.support import cuda_simulated  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def simulated():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-m", "tests.support.cuda_simulated"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return {(r["case"], r["columns"], r["lanes"]): r for r in rows}


@pytest.mark.parametrize("columns", (False, True))
@pytest.mark.parametrize("case", cuda_simulated.CASES)
def test_simulated_cuda_kernel_equals_cpu_single_solves(simulated, case, columns):
    r = simulated[case, columns, 1]
    problem, given, options = cuda_simulated._problem(case)
    B = len(r["code"])
    for b in range(B):
        row = {k: (v if np.ndim(v) < 2 else v[b]) for k, v in given.items()}
        s = problem.solve(**row, **options, print_level=0)
        if case == "ik" and b == 3:          # q1 + q2 + q3 <= -10: infeasible
            assert r["code"][b] < 0 and s.status == "Infeasible_Problem_Detected"
            continue
        assert r["code"][b] == 0 and s.status == "Solve_Succeeded", (b, r["code"][b])
        assert r["iters"][b] == s.iterations, b
        assert r["f"][b] == s.f, (b, r["f"][b], s.f)
        np.testing.assert_array_equal(r["x"][b], s.x)
        np.testing.assert_array_equal(r["lam_x"][b], s.lam_x)     # (fixed variables too)


@pytest.mark.parametrize("case", cuda_simulated.CASES)
def test_simulated_team_launch_equals_one_thread_per_instance(simulated, case):
    """Teams of cuda_simulated.TEAM_LANES threads per instance (the shared pieces'
    loops split over the lanes, kernels/team.py) answer bit for bit as one thread."""
    one, team = simulated[case, False, 1], simulated[case, False, cuda_simulated.TEAM_LANES]
    for key in ("code", "iters", "f", "x", "lam_x"):
        assert team[key] == one[key], key
