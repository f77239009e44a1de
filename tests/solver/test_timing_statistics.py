"""``timing_statistics``: whether a solve's phase timers wait for the device.

On the device code path (emulated on the CPU as in ``test_gpu_solver``: NumPy arrays
posing as device memory, qdldl posing as cuDSS) the stream's waits are counted: with
``timing_statistics='yes'`` (caspar's default) every timed phase ends with one
(evaluations, KKT assembly, KKT solves); with ``'no'`` the timers add none, so the loop
runs ahead of the GPU.  The option never changes an answer.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from tests.solver.test_gpu_solver import _bounded_model, _emulate_device, _EmulatedEvaluator


def _counted_solve(monkeypatch, **opts):
    """(result, stream waits) of the emulated device solve of the bounded model."""
    pytest.importorskip("qdldl")
    from caspar_backend.solver import solve_nlp

    prob = _bounded_model()
    xp = _emulate_device(monkeypatch)
    waits = []
    xp.cuda.get_current_stream().synchronize = lambda: waits.append(1)
    ev = _EmulatedEvaluator(prob.evaluator("cpu"), xp)
    r = solve_nlp(ev, prob.lbx, prob.ubx, prob.lbg, prob.ubg, prob.x0,
                  options={"print_level": 0, **opts})
    return r, len(waits)


def test_timers_wait_for_the_device_only_when_asked(monkeypatch):
    timed, n_timed = _counted_solve(monkeypatch)
    free, n_free = _counted_solve(monkeypatch, timing_statistics="no")
    assert timed.status == free.status == "Solve_Succeeded"
    its = timed.iterations
    # per iteration at least: the Hessian, gradient, Jacobian and constraint evaluations,
    # the KKT assembly and two KKT solves (a first one and a refinement)
    assert n_timed >= 7 * its
    # (the emulated cuDSS does not wait: the real one waits once per factorization, to
    # read the inertia)
    assert n_free == 0
    # the same iterates: the waits change no arithmetic
    assert (timed.iterations, repr(timed.f)) == (free.iterations, repr(free.f))
    for a, b in ((timed.x, free.x), (timed.lam_g, free.lam_g), (timed.lam_x, free.lam_x)):
        np.testing.assert_array_equal(a, b)
    assert set(timed.timings) == set(free.timings)


def test_printing_the_timing_table_times_the_phases_exactly(monkeypatch):
    buf = io.StringIO()
    r, n = _counted_solve(monkeypatch, timing_statistics="no",
                          print_timing_statistics="yes", print_level=5, stream=buf)
    assert n >= 7 * r.iterations
    assert "Timing statistics:" in buf.getvalue()
