"""BatchResult's instances: ``list(res)`` and ``res[i]`` equal the SolveResult the
constructor makes from row i (copies: no instance shares memory with the batch or with
another instance)."""

import dataclasses

import numpy as np

from caspar_backend.batch.result import BatchResult
from caspar_backend.solver.result import SolveResult


def _batch():
    B = 3
    return BatchResult(x=np.arange(6.0).reshape(B, 2), f=np.array([1.5, -2.0, 3.0]),
                       g=np.arange(3.0).reshape(B, 1), lam_g=-np.arange(3.0).reshape(B, 1),
                       lam_x=np.ones((B, 2)), status=["Solve_Succeeded"] * 2
                       + ["Maximum_Iterations_Exceeded"], iterations=np.array([4, 5, 3000]),
                       message=["a", "b", "c"], path=["kernel", "kernel", "single"],
                       reason=["", "", "why"])


def test_instances_equal_the_constructors():
    res = _batch()
    listed = list(res)
    for i, r in enumerate(listed):
        want = SolveResult(x=res.x[i].copy(), f=float(res.f[i]), g=res.g[i].copy(),
                           lam_g=res.lam_g[i].copy(), lam_x=res.lam_x[i].copy(),
                           status=res.status[i], iterations=int(res.iterations[i]),
                           message=res.message[i],
                           extra=dict(path=res.path[i], reason=res.reason[i]))
        for got in (r, res[i]):
            assert got.__dict__.keys() == want.__dict__.keys()
            for f in dataclasses.fields(SolveResult):
                a, b = getattr(got, f.name), getattr(want, f.name)
                if isinstance(b, np.ndarray):
                    assert a.dtype == b.dtype and np.array_equal(a, b)
                else:
                    assert type(a) is type(b) and a == b
            assert got.success == want.success
            assert not np.shares_memory(got.x, res.x)
    assert not np.shares_memory(listed[0].x, listed[1].x)
    listed[0].timings["t"] = 1.0                 # mutable defaults are per instance
    assert listed[1].timings == {}
    assert dataclasses.replace(listed[2], f=0.0).f == 0.0
