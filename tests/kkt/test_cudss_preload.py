"""The solver's stack loaded in a thread while the CUDA evaluator is built
(caspar_backend.linsolve.cudss_preload): started once, never when loaded already, off the
caller's thread, and a failure left for the caller's own check.  One GPU test runs a fresh
process: building a problem's CUDA evaluator starts the load, the solve finds cuDSS
loaded and answers as a CPU solve does."""

import json
import os
import subprocess
import sys
import threading

import pytest

from caspar_backend.linsolve import cudss, cudss_handle, cudss_preload


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(cudss_preload, "_thread", None)
    monkeypatch.setattr(cudss_handle, "_CUDSS", None)
    yield
    cudss_preload.wait(10)


def test_load_runs_once_off_the_callers_thread(fresh, monkeypatch):
    seen, gate = [], threading.Event()

    def problem():
        gate.wait(5)
        seen.append(threading.current_thread().name)
        return None

    monkeypatch.setattr(cudss, "cudss_problem", problem)
    cudss_preload.start()
    cudss_preload.start()          # started already: no second thread
    gate.set()
    cudss_preload.wait(5)
    assert seen == ["caspar-cudss-preload"]


def test_nothing_starts_once_the_bindings_are_loaded(fresh, monkeypatch):
    monkeypatch.setattr(cudss_handle, "_CUDSS", object())
    monkeypatch.setattr(cudss, "cudss_problem", lambda: pytest.fail("loaded twice"))
    cudss_preload.start()
    assert cudss_preload._thread is None


def test_a_failed_load_raises_nothing_in_the_thread(fresh, monkeypatch):
    """No CuPy / nvmath here, or a fake that fails: the thread ends quietly and the
    caller's check (device.gpu_problem) still says why."""
    errors = []
    monkeypatch.setattr(threading, "excepthook", lambda a: errors.append(a))

    def bindings():
        raise ImportError("no nvmath here")

    monkeypatch.setattr(cudss_handle, "bindings", bindings)
    cudss_preload.start()
    cudss_preload.wait(10)
    assert errors == []
    assert "no nvmath here" in cudss.cudss_problem()


_FRESH_PROCESS = r"""
import json, sys, numpy as np
import caspar_backend as cb
from caspar_backend.linsolve import cudss_handle, cudss_preload
from tests.support.problems import hs071
nlp, args = hs071()
problem = cb.from_casadi(nlp, **args)
assert cudss_handle._CUDSS is None and "nvmath" not in sys.modules
problem.evaluator("cuda")
started = cudss_preload._thread is not None
gpu = problem.solve(device="cuda", print_level=0)
cpu = problem.solve(device="cpu", print_level=0)
print(json.dumps(dict(started=started, loaded=cudss_handle._CUDSS is not None,
                      thread=cudss_preload._thread.name, status=[gpu.status, cpu.status],
                      it=[int(gpu.iterations), int(cpu.iterations)],
                      f=[float(gpu.f), float(cpu.f)])))
"""


@pytest.mark.gpu
def test_a_fresh_process_loads_the_stack_beside_the_evaluator_build():
    from caspar_backend.device import gpu_problem

    why = gpu_problem()
    if why is not None:
        pytest.skip(why)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", _FRESH_PROCESS], cwd=root, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["started"] and r["loaded"] and r["thread"] == "caspar-cudss-preload"
    assert r["status"] == ["Solve_Succeeded"] * 2
    assert r["it"][0] == r["it"][1]
    assert r["f"][0] == pytest.approx(r["f"][1], rel=1e-8)
