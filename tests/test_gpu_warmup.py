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
