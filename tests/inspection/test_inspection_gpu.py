"""compilation_info on the GPU: the problem module's dispatch kernels with CUDA's
function attributes, and the disk-cache hit of a second evaluator."""

from __future__ import annotations

import pytest

from tests.evaluators.test_gpu_evaluator import _random_model

pytestmark = pytest.mark.gpu


def test_compilation_info_cuda(tmp_path, monkeypatch):
    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    problem = _random_model(seed=3)[0]
    info = problem.compilation_info("cuda")
    assert info.device == "cuda" and info.cache_hit is False and info.build_seconds > 0
    assert [k.name for k in info.kernels] == ["caspar_obj_val", "caspar_obj_jac",
                                              "caspar_con_val", "caspar_con_jac",
                                              "caspar_hess"]
    for k in info.kernels:
        assert 0 < k.registers <= 255 and k.max_threads_per_block >= 256
    assert len(info.templates) == len(problem.groups)
    again = _random_model(seed=3)[0].compilation_info("cuda")
    assert again.cache_hit is True
    assert "registers" in str(info)
