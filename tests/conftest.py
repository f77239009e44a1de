"""Shared pytest configuration: the ``gpu`` marker skips cleanly without CUDA, and the
``ipopt`` fixture gives :func:`tests.support.ipopt.solve` (skipping without CasADi, whose
wheel bundles the IPOPT the tests compare with)."""

import pytest


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
