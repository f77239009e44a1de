"""The tests of this folder are the lockstep batch path's (and of what surrounds it:
inputs, chunking, the service): on the CPU, solve_batch would otherwise give the groups
the compiled kernel can solve to it (tests/compiled/test_batch_cpu.py).  The Dask tests
keep the default: their workers are other processes, where a setting made here does not
reach, and they compare with the same call without a client."""
import pytest

#: modules whose solves also run in other processes (Dask workers)
DEFAULT_PATH = ("test_distributed", "test_distributed_failures")


@pytest.fixture(autouse=True)
def lockstep_on_cpu(request, monkeypatch):
    if request.module.__name__.rsplit(".", 1)[-1] in DEFAULT_PATH:
        return
    from caspar_backend.batch import solve as batch_solve

    monkeypatch.setattr(batch_solve, "KERNEL_ON_CPU", False)
