"""The CUDA kernel's team table (caspar_backend/compiled/cuda/team.py) is complete: every
job number of kernels/team.py has one leader, whose arguments are its CPU kernel's (the
CUDA build binds it in the kernel's place), a branch of the workers' dispatch, and a part
kernel taking (lane, lanes) last.  The teams' answers: tests/compiled/test_cuda_simulated.py
(the simulator) and tests/compiled/test_cuda_batch.py (the GPU)."""
import inspect

import pytest

pytest.importorskip("numba_cuda")

from caspar_backend.compiled.cuda import team  # noqa: E402
from caspar_backend.compiled.kernels import team as cpu_team  # noqa: E402

JOBS = {name: v for name, v in vars(cpu_team).items() if name.startswith("JOB_")
        and name != "JOB_NONE"}


def test_every_job_has_one_leader_and_a_dispatch_branch():
    numbers = [job for job, _ in team.LEADERS.values()]
    assert sorted(numbers) == sorted(JOBS.values())
    assert len(set(JOBS.values())) == len(JOBS)
    assert cpu_team.JOB_NONE not in numbers and cpu_team.TEAM_STOP not in numbers
    dispatch = inspect.getsource(team._dispatch)
    for name in JOBS:
        assert f"job == {name}" in dispatch, name


@pytest.mark.parametrize("cpu", list(team.LEADERS), ids=lambda k: k.py_func.__name__)
def test_leader_takes_its_kernels_arguments_and_runs_its_part(cpu):
    """A leader has its kernel's arguments and calls the kernel's part; the CPU kernel
    (what one thread runs) is the part at one lane or a one-thread schedule ``_one``
    of the same sums, which the leader alone runs too."""
    _, leader = team.LEADERS[cpu]
    name = cpu.py_func.__name__
    assert inspect.signature(leader) == inspect.signature(cpu.py_func)
    part = vars(team)[name + "_part"]
    params = list(inspect.signature(part.py_func).parameters)
    assert params[-2:] == ["lane", "lanes"]
    cpu_src, leader_src = inspect.getsource(cpu.py_func), inspect.getsource(leader)
    assert f"{name}_part(" in leader_src
    if f"{name}_one(" in cpu_src:
        assert f"{name}_one(" in leader_src
    else:
        assert f"{name}_part(" in cpu_src and "U(0), U(1))" in cpu_src
    assert leader in team.DEVICE_FUNCTIONS and team.REPLACED[cpu] is leader


def test_launch_lanes_rule_and_override(monkeypatch):
    """Teams for large instances while each has its own block, one lane otherwise;
    CASPAR_CUDA_LANES overrides, checked."""
    from caspar_backend.compiled.cuda import group
    from caspar_backend.compiled.cuda.launch import BLOCKS_PER_SM

    monkeypatch.delenv("CASPAR_CUDA_LANES", raising=False)
    big, small = {"nkkt": group.TEAM_MIN_KKT}, {"nkkt": group.TEAM_MIN_KKT - 1}
    sms = 132
    room = BLOCKS_PER_SM * sms
    assert group.launch_lanes(big, 1, sms) == group.TEAM_LANES == 32
    assert group.launch_lanes(big, room, sms) == 32
    assert group.launch_lanes(big, room + 1, sms) == 1
    assert group.launch_lanes(small, 1, sms) == 1
    assert group.launch_lanes({"nkkt": 5}, 10_000, sms) == 1
    monkeypatch.setenv("CASPAR_CUDA_LANES", "4")
    assert group.launch_lanes(small, 1, sms) == 4
    for bad in ("3", "64", "x", "-1"):
        monkeypatch.setenv("CASPAR_CUDA_LANES", bad)
        with pytest.raises(ValueError, match="CASPAR_CUDA_LANES"):
            group.launch_lanes(big, 1, sms)
