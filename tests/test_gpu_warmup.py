"""``caspar warmup`` on a GPU machine: the general GPU path's kernels (gpu_warmup)."""

import pytest

from caspar_backend.__main__ import _gpu_usable


@pytest.mark.gpu
def test_general_path_warmup_solves_on_the_device(capsys):
    from caspar_backend.gpu_warmup import general_path

    assert general_path() > 0.0


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
