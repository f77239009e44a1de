"""CUDA kernel sources compiled for the host with g++, to check their arithmetic where no
GPU is: the source's device parts are defined by a harness (thread indices as globals,
intrinsics as their host meaning) and products are never contracted into sums
(``-ffp-contract=off``), so a kernel's results can be compared bit for bit."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest


def host_library(tmp_path_factory, name: str, source: str, include=None) -> ctypes.CDLL:
    """``source`` (C++ with the harness) built as a shared library and loaded; the test
    is skipped where g++ is missing.  ``include``: a folder for ``#include``."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("needs g++")
    tmp = tmp_path_factory.mktemp(name)
    (tmp / "h.cpp").write_text(source)
    lib = tmp / f"{name}_host.so"
    inc = [f"-I{include}"] if include is not None else []
    subprocess.run([gxx, "-O1", "-ffp-contract=off", "-shared", "-fPIC", *inc,
                    str(tmp / "h.cpp"), "-o", str(lib)], check=True)
    return ctypes.CDLL(str(lib))
