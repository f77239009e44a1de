"""Shared pytest configuration: the ``gpu`` marker skips cleanly without CUDA."""

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
