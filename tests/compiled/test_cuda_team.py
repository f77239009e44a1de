"""The CUDA kernel's team table (caspar_backend/compiled/cuda/team.py) is complete: every
job number of kernels/team.py has one leader, whose arguments are its CPU kernel's (the
CUDA build binds it in the kernel's place), a branch of the workers' dispatch, and a part
kernel taking (lane, lanes) last.  The teams' answers: tests/compiled/test_cuda_simulated.py
(the simulator) and tests/compiled/test_cuda_batch.py (the GPU)."""
import contextlib
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


@pytest.mark.parametrize("case, B, lanes", [("collocation", 6, 32), ("collocation", 2000, 1),
                                            ("ik", 6, 1)])
def test_solve_group_launches_the_rules_lanes(monkeypatch, case, B, lanes):
    """solve_batch's GPU launch (cuda/group.solve_group) takes launch_lanes' answer for the
    group's layout and size: teams for the 200-step control problem's instances while
    each has its own block, one lane past that and for the IK (the launch recorded, no
    GPU needed)."""
    import numpy as np

    from caspar_backend import from_casadi
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
    from caspar_backend.batch.inputs import batch_inputs
    from caspar_backend.compiled.cuda import group, launch, streams, workspaces
    from caspar_backend.compiled.options import resolve
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import _nlp

    monkeypatch.delenv("CASPAR_CUDA_LANES", raising=False)
    if case == "ik":
        nlp, bounds = arm_ik()
        problem, inputs = from_casadi(nlp, **bounds), dict(p=arm_targets(B, seed=1))
    else:
        d = {b.name: b for b in bank(include_slow=False)}["optimal_control_200"].build()
        problem = from_casadi(_nlp(d))
        inputs = dict(x0=np.tile(np.asarray(d["x0"], float), (B, 1)),
                      **{k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")})
    sub = batch_inputs(problem, None, **inputs)
    sub = sub.subset(np.arange(sub.size))
    plan = group.KernelPlan("", group.group_layout(problem, sub),
                            resolve({"print_level": 0})[0])
    seen = {}
    monkeypatch.setattr(workspaces, "DeviceWorkspaces",
                        lambda lay, x0, *a, **k: type("W", (), {"B": x0.shape[0]})())
    monkeypatch.setattr(launch, "multiprocessors", lambda: 132)
    monkeypatch.setattr(streams, "thread_stream", contextlib.nullcontext)
    monkeypatch.setattr(group, "pattern_dispatcher", lambda lay: None)
    monkeypatch.setattr(launch, "solve_on_device",
                        lambda ws, O, lanes=1, **kw: seen.setdefault("lanes", lanes))
    group.solve_group(problem, {}, sub, plan)
    assert seen["lanes"] == lanes
    assert (plan.layout.sizes["nkkt"] >= group.TEAM_MIN_KKT) == (case == "collocation")
