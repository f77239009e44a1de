"""The generated CUDA module (no GPU needed): one dispatch case per group, and the
group table's NumPy record equal to the C struct it is read as."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from caspar_backend.codegen_cuda import generate_cuda_source, kernel_file
from caspar_backend.evaluators.group_table import GROUP_DTYPE, blocks
from tests.evaluators.test_gpu_evaluator import _random_model, _wide_model

_C_TYPES = {"const int*": (np.uint64, 8), "const double*": (np.uint64, 8),
            "long long": (np.int64, 8), "int": (np.int32, 4)}


def test_group_record_matches_struct():
    text = kernel_file("caspar_groups.cuh")
    body = re.search(r"struct caspar_group \{(.*?)\};", text, re.S).group(1)
    fields = re.findall(r"^\s*((?:const )?\w+(?: \w+)?\*?) (\w+);", body, re.M)
    assert [n for _, n in fields] == list(GROUP_DTYPE.names)
    offset = 0
    for ctype, name in fields:
        dtype, size = _C_TYPES[ctype]
        assert GROUP_DTYPE.fields[name][0] == np.dtype(dtype), name
        assert GROUP_DTYPE.fields[name][1] == offset, name
        offset += size
    assert GROUP_DTYPE.itemsize == offset == 64


@pytest.mark.parametrize("build", [_random_model, lambda: (_wide_model(40), None)])
def test_one_case_per_group(build):
    problem = build()[0]
    src = generate_cuda_source(problem.objective_groups, problem.constraint_groups)
    n_obj, n_con = len(problem.objective_groups), len(problem.constraint_groups)
    kernels = dict(re.findall(r'extern "C" __global__ void (\w+)\((.*?)\n    \}\n\}', src, re.S))
    assert set(kernels) == {"caspar_obj_val", "caspar_obj_jac", "caspar_con_val",
                            "caspar_con_jac", "caspar_hess"}
    expect = {"caspar_obj_val": ["o%d_val" % k for k in range(n_obj)],
              "caspar_obj_jac": ["o%d_jac" % k for k in range(n_obj)],
              "caspar_con_val": ["c%d_val" % k for k in range(n_con)],
              "caspar_con_jac": ["c%d_jac" % k for k in range(n_con)],
              "caspar_hess": ["o%d_hess" % k for k in range(n_obj)]
              + ["c%d_hess" % k for k in range(n_con)]}
    for kernel, calls in expect.items():
        cases = re.findall(r"case (\d+): (\w+)\(", kernels[kernel])
        assert cases == [(str(k), c) for k, c in enumerate(calls)], kernel
    assert problem.cuda_source() == src


def test_blocks():
    assert [blocks(n, 256) for n in (0, 1, 256, 257)] == [1, 1, 1, 2]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_source_compiles_with_nvcc(tmp_path):
    problem = _random_model()[0]
    cu = tmp_path / "p.cu"
    cu.write_text(problem.cuda_source())
    r = subprocess.run(["nvcc", "-std=c++14", "-ptx", str(cu), "-o", str(tmp_path / "p.ptx")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
