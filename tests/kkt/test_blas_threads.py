"""caspar's dense factorizations run BLAS on one thread, and restore the user's setting."""

import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

from caspar_backend.linsolve.blas_threads import single_threaded_blas  # noqa: E402


def _blas_threads():
    return [m["num_threads"] for m in threadpoolctl.threadpool_info()
            if m["user_api"] == "blas"]


def test_one_thread_inside_and_the_setting_restored():
    before = _blas_threads()
    if not before:
        pytest.skip("no BLAS library found by threadpoolctl")
    for _ in range(2):                 # the second context reuses the first's controller
        with single_threaded_blas():
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == before
