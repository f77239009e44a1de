"""Shared pytest configuration: the ``gpu`` marker skips cleanly without CUDA, and the
``ipopt`` fixture gives :func:`tests.support.ipopt.solve` (skipping without CasADi, whose
wheel bundles the IPOPT the tests compare with).

The compiled interior point (caspar_backend.compiled) solves small CPU problems once its
kernels are compiled on the machine.  With numba installed the session compiles (or
loads) them first, so that every test sees the same path from its start (no background
compile finishing midway); CASPAR_TEST_COMPILED=0 leaves them out, and the general path
then solves everything.

The on-disk cache of compiled SX problems (adapters/casadi/problem_cache.py) is off in
the tests (CASPAR_PROBLEM_CACHE=0): a test that patches a grouping constant must not be
handed a problem another test compiled under the real one; tests/adapters/
test_problem_cache.py turns it on, in a folder of its own."""

import os

import pytest


def pytest_configure(config):
    os.environ.setdefault("CASPAR_BACKGROUND_COMPILE", "0")
    os.environ.setdefault("CASPAR_PROBLEM_CACHE", "0")
    if os.environ.get("CASPAR_TEST_COMPILED", "1") != "1":
        return
    from caspar_backend.compiled import available

    if available():
        from caspar_backend.compiled.dispatch import kernels_ready

        kernels_ready(wait=True)


def _gpu_usable() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if any("gpu" in item.keywords for item in items) and not _gpu_usable():
        skip = pytest.mark.skip(reason="needs CuPy and a CUDA device")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def ipopt():
    """``ipopt(nlp, args, options, **nlpsol_options)``: IPOPT's run
    (:class:`tests.support.ipopt.IpoptRun`)."""
    pytest.importorskip("casadi")
    from tests.support import ipopt as _ipopt

    return _ipopt.solve
