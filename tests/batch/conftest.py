"""The tests of this folder are the lockstep batch path's (and of what surrounds it:
inputs, chunking, Dask, the service): on the CPU, solve_batch would otherwise give the
groups the compiled kernel can solve to it (tests/compiled/test_batch_cpu.py)."""
import pytest


@pytest.fixture(autouse=True)
def lockstep_on_cpu(monkeypatch):
    from caspar_backend.batch import solve as batch_solve

    monkeypatch.setattr(batch_solve, "KERNEL_ON_CPU", False)
