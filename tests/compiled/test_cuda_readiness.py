"""When solve_batch(device='cuda') takes the CUDA kernel: only once it is compiled (a
compile takes minutes); until then the batch goes to the lockstep path and a background
process compiles it.  Checked without a GPU: the marker files, the rule of
cuda.group.cuda_kernel_ready and the background compile's command and lock."""
import subprocess
import sys

import pytest

from caspar_backend.compiled import cache as cpu_cache
from caspar_backend.compiled import dispatch
from caspar_backend.compiled.cuda import cache, group


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "compute_capability", lambda: "90")
    monkeypatch.setattr(dispatch, "_background", set())
    return tmp_path


@pytest.fixture
def popen_calls(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "Popen", lambda args, **kw: calls.append(args))
    return calls


def test_ready_marker_per_arrangement_and_gpu(cache_dir, monkeypatch):
    pytest.importorskip("numba_cuda")
    assert not cache.is_ready(False) and not cache.is_ready(True)
    cache.mark_ready(False)
    assert cache.is_ready(False) and not cache.is_ready(True)
    assert cache.cuda_cache_dir() == cpu_cache.kernel_cache_dir() / "cuda"
    monkeypatch.setattr(cache, "compute_capability", lambda: "100")   # another GPU
    assert not cache.is_ready(False)


def test_not_compiled_starts_one_background_compile_and_waits_for_nothing(
        cache_dir, monkeypatch, popen_calls):
    pytest.importorskip("numba_cuda")
    monkeypatch.setenv("CASPAR_BACKGROUND_COMPILE", "1")
    assert group.cuda_kernel_ready() is False
    assert group.cuda_kernel_ready() is False            # once per process
    assert popen_calls == [[sys.executable, "-m", "caspar_backend.compiled", "--cuda",
                            "--lock", str(cpu_cache.kernel_cache_dir() / "compiling-cuda")]]
    assert (cpu_cache.kernel_cache_dir() / "compiling-cuda").is_file()
    cache.mark_ready(group.COLUMNS)                      # the background compile ended
    assert group.cuda_kernel_ready() is True


def test_compile_in_process_when_background_compiles_are_off(cache_dir, monkeypatch,
                                                             popen_calls):
    monkeypatch.setenv("CASPAR_BACKGROUND_COMPILE", "0")
    assert group.cuda_kernel_ready() is True and popen_calls == []
    monkeypatch.setenv("CASPAR_BACKGROUND_COMPILE", "1")
    monkeypatch.setattr(cache, "CACHEABLE", False)       # nothing would persist
    assert group.cuda_kernel_ready() is True and popen_calls == []


def test_cpu_and_cuda_background_compiles_are_separate(cache_dir, monkeypatch, popen_calls):
    monkeypatch.setenv("CASPAR_BACKGROUND_COMPILE", "1")
    assert dispatch.start_background_compile() is True
    assert dispatch.start_background_compile(cuda=True) is True
    assert dispatch.start_background_compile() is False
    assert [c[3:] for c in popen_calls] == [
        ["--lock", str(cpu_cache.kernel_cache_dir() / "compiling")],
        ["--cuda", "--lock", str(cpu_cache.kernel_cache_dir() / "compiling-cuda")]]


def test_kernel_entries_live_in_a_folder_per_source_stamp(cache_dir):
    """numba-cuda keeps one index per function and folder and empties it when the stamp
    differs: two source versions sharing a folder would evict each other's entry."""
    pytest.importorskip("numba_cuda")
    from numba.cuda.core import caching

    from caspar_backend.compiled.cuda import launch

    assert cache.install()
    locator = next(c for c in caching.CacheImpl._locator_classes
                   if c.__name__ == "CudaKernelCacheLocator")
    kernel = next(v for v in vars(launch).values()
                  if callable(v) and getattr(v, "__module__", None) == launch.__name__
                  and hasattr(v, "__code__"))
    loc = locator.from_function(kernel, launch.__file__)
    assert loc.get_source_stamp() == cache._stamp()
    assert loc.get_cache_path() == str(cache.cuda_cache_dir() / cache._stamp())
    assert locator.from_function(kernel, __file__) is None        # other files: not ours
