"""Prebuilt CUDA batch kernels (caspar_backend.compiled.cuda.prebuilt): compiled on a
machine without a GPU (the CUDA toolkit's NVVM and ptxas, :mod:`.offline`), stored in the
kernel cache under a name that carries the sources' stamp, the compute capability and
numba-cuda's version, loaded by ``launch.kernel`` instead of compiling.

Without a toolkit: the file's name, what ``is_ready`` and ``load`` make of a missing, a
foreign-capability or a damaged file, the CLI's capability argument.  With one (slow,
~75 s): the rows kernel built, stored, loaded back with the same cubin and entry, and
``launch.kernel`` taking it without compiling.  On a GPU: a kernel compiled there, stored
and loaded back, gives the same answers bit for bit.
"""
import lzma
import pickle

import numpy as np
import pytest

pytest.importorskip("numba_cuda")

from caspar_backend.compiled import __main__ as compiled_main  # noqa: E402
from caspar_backend.compiled.cuda import cache, offline, prebuilt  # noqa: E402


def _rows() -> tuple:
    """The rows kernel's function and argument types, as launch.kernel passes them."""
    from caspar_backend.compiled.cuda import launch

    return launch._solve_rows, launch.signature()


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_file_name_carries_stamp_capability_and_numba_cuda(cache_dir):
    from importlib.metadata import version

    p = cache.prebuilt_path(False, "90")
    assert p.parent == cache.cuda_cache_dir() and p.is_relative_to(cache_dir)
    assert p.name == (f"prebuilt-rows-{cache._stamp()}-sm90-{version('numba-cuda')}"
                      ".pkl.xz")
    assert cache.prebuilt_path(True, "90").name.startswith("prebuilt-columns-")


def test_ready_and_load_only_for_this_capability(cache_dir, monkeypatch):
    monkeypatch.setattr(cache, "compute_capability", lambda: "80")
    assert not cache.is_ready(False)
    assert prebuilt.load(False, "80", *_rows()) is None              # no file: compile
    p = cache.prebuilt_path(False, "90")
    p.parent.mkdir(parents=True)
    p.write_bytes(lzma.compress(pickle.dumps({})))
    assert not cache.is_ready(False) and not cache.prebuilt_path(False, "80").is_file()
    monkeypatch.setattr(cache, "compute_capability", lambda: "90")
    assert cache.is_ready(False) and not cache.is_ready(True)


def test_damaged_file_is_reported_and_ignored(cache_dir):
    p = cache.prebuilt_path(False, "90")
    p.parent.mkdir(parents=True)
    p.write_bytes(b"not an xz stream")
    with pytest.warns(RuntimeWarning, match="prebuilt CUDA kernel .* not loaded"):
        assert prebuilt.load(False, "90", *_rows()) is None


@pytest.mark.parametrize("text, cc", [("90", (9, 0)), ("9.0", (9, 0)), ("100", (10, 0)),
                                      ("8.6", (8, 6))])
def test_cli_capability(text, cc):
    import argparse

    assert compiled_main._compute_capability(argparse.ArgumentParser(), text) == cc


@pytest.mark.parametrize("text", ["x", "9", "9.x", ""])
def test_cli_capability_rejects(text, capsys):
    import argparse

    with pytest.raises(SystemExit):
        compiled_main._compute_capability(argparse.ArgumentParser(), text)
    assert "--cuda-prebuild" in capsys.readouterr().err


@pytest.mark.slow
def test_rows_kernel_built_offline_loads_and_serves_launch(cache_dir, monkeypatch):
    root = offline.toolkit()
    if root is None or offline.ptxas_path(root) is None:
        pytest.skip("no CUDA toolkit with libdevice and ptxas")
    from caspar_backend.compiled.cuda import launch

    with offline.target(offline.CC, root):
        k = offline.kernel_object(False, offline.CC)
    cubin = k._codelibrary._cubin_cache[offline.CC]
    p = prebuilt.save(k, False, offline.CC)
    assert p == cache.prebuilt_path(False, "90") and p.stat().st_size < len(cubin)

    d = prebuilt.load(False, "90", *_rows())
    (args, loaded), = d.overloads.items()
    assert args == tuple(launch.signature())
    assert loaded.entry_name == k.entry_name and "_solve_rows" in loaded.entry_name
    assert {k: prebuilt._cubin_bytes(v) for k, v in loaded._codelibrary._cubin_cache.items()} \
        == {offline.CC: prebuilt._cubin_bytes(cubin)}

    # launch.kernel takes the prebuilt kernel: nothing compiles (numba-cuda's disk cache
    # is never installed, the dispatcher never compiles)
    monkeypatch.setattr(launch, "_compiled", {})
    monkeypatch.setattr(cache, "compute_capability", lambda: "90")
    monkeypatch.setattr(cache, "install", lambda: pytest.fail("compiled instead"))
    served = launch.kernel(False)
    assert launch.is_loaded(False) and not launch.is_loaded(True)
    (_, kernel), = served.overloads.items()
    assert prebuilt._cubin_bytes(kernel._codelibrary._cubin_cache[offline.CC]) == cubin


def test_cubin_forms():
    """The file holds bytes; numba-cuda 0.30's libraries hold cuda.core ObjectCode."""
    obj = prebuilt._object_code(b"\x7fELF cubin")
    assert prebuilt._cubin_bytes(obj) == b"\x7fELF cubin"
    assert prebuilt._cubin_bytes(b"raw") == b"raw"


@pytest.mark.gpu
def test_kernel_stored_and_loaded_gives_the_same_answers(tmp_path, monkeypatch):
    """A kernel of this GPU (prebuilt or compiled, from the run's cache), stored as a
    prebuilt file in a fresh cache and loaded back by ``launch.kernel``: solve_batch's
    kernel path gives the same statuses, iterations and x bit for bit on IK targets, and
    the loaded kernel holds the cubin under the device's target."""
    pytest.importorskip("casadi")
    from caspar_backend import from_casadi
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
    from caspar_backend.batch import solve as batch_solve
    from caspar_backend.compiled.cuda import launch
    from caspar_backend.compiled.cuda.group import COLUMNS

    monkeypatch.setattr(batch_solve, "KERNEL_ON_CUDA", True)
    monkeypatch.setenv("CASPAR_CUDA_PATTERNS", "0")     # launch.kernel's, not a pattern's
    nlp, bounds = arm_ik()
    problem = from_casadi(nlp, **bounds)
    T = arm_targets(256, seed=3)

    def solve():
        r = problem.solve_batch(x0=np.array([0.1, 0.2, 0.3]), p=T, print_level=0,
                                device="cuda")
        assert set(r.path) == {"kernel"}
        return np.asarray(r.status), np.asarray(r.iterations), np.asarray(r.x)

    first = solve()                                  # the run's own cache
    kern = next(iter(launch.kernel(COLUMNS).overloads.values()))
    lib = kern._codelibrary
    target = lib._ensure_cc(None)
    lib.get_cubin(target)
    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    # stored under (major, minor): what an offline build for this capability writes
    kern._codelibrary._cubin_cache.setdefault(tuple(target[:2]), lib._cubin_cache[target])
    prebuilt.save(kern, COLUMNS, tuple(target[:2]))
    monkeypatch.setattr(launch, "_compiled", {})
    monkeypatch.setattr(cache, "install", lambda: pytest.fail("compiled instead"))
    again = solve()
    loaded = next(iter(launch.kernel(COLUMNS).overloads.values()))
    assert loaded is not kern and target in loaded._codelibrary._cubin_cache
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
