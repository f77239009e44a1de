"""Device resolution: clear errors when the GPU is not usable (CPU-side tests)."""

import pytest

from caspar_backend import DeviceError, Graph, NLPModel, Problem
from caspar_backend.device import cuda_usable, resolve_device


def _tiny():
    g = Graph()
    x = g.var(0)
    return Problem(NLPModel(g, x * x, [], lbx=[-1], ubx=[1], lbg=[], ubg=[]))


def test_cpu_and_unknown_device():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") in ("cpu", "cuda")
    with pytest.raises(DeviceError, match="unknown device"):
        resolve_device("tpu")


@pytest.mark.skipif(cuda_usable(), reason="a GPU is usable here")
def test_cuda_without_gpu_is_a_clear_error():
    with pytest.raises(DeviceError, match="caspar-backend\\[gpu-cuda1"):
        _tiny().evaluator("cuda")
    assert _tiny().evaluator("auto").device == "cpu"


def test_import_is_cheap():
    import subprocess
    import sys

    code = ("import sys, caspar_backend; "
            "print(any(m in sys.modules for m in ('cupy', 'pyomo', 'casadi', 'dask', "
            "'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_cpu_evaluator_import_leaves_scipy_special_out():
    """The CPU evaluator loads SciPy's special functions (~0.3 s) only for a model that
    calls erf."""
    import subprocess
    import sys

    code = ("import sys; import caspar_backend.evaluators.numpy_eval; "
            "print('scipy.special' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
