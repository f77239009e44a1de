"""Ctrl-C while caspar sets a solve up raises KeyboardInterrupt and breaks nothing.

Before the solve's SIGINT handler is in place -- reading the model, compiling it,
building the evaluator and the solver's structures -- Ctrl-C is what it is in any Python
program, and in IPOPT's front-ends (Pyomo's NL writer, casadi's nlpsol construction): a
KeyboardInterrupt reaches the caller.  (From the handler on, it ends the solve with
``User_Requested_Stop``: ``test_interrupt.py``.)  What caspar must add is that nothing
is left half made: the user's model is as it was, and the next attempt -- with the
Problem, nlpsol Function or Pyomo solver object the interrupted one made -- gives the
answer of an undisturbed run, bit for bit; no cache file is left half written.

The child (:mod:`tests.support.setup_interrupt_child`) sends itself SIGINT on entering
the k-th of caspar's functions, for k at the start of every phase of the setup (the
first entry into each of caspar's files) and at points spread over it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _points(api: str, cache: Path) -> tuple[dict, list]:
    run = subprocess.run([sys.executable, "-m", "tests.support.setup_interrupt_child", api,
                          "6"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "CASPAR_CACHE_DIR": str(cache)})
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [json.loads(ln) for ln in run.stdout.splitlines() if ln.startswith("{")]
    return lines[0], lines[1:]


@pytest.mark.parametrize("api", ["core", "casadi", "pyomo"])
def test_ctrl_c_during_setup(api, tmp_path):
    if api != "core":
        pytest.importorskip({"casadi": "casadi", "pyomo": "pyomo"}[api])
    head, points = _points(api, tmp_path)
    assert head["status"] in ("Solve_Succeeded", "optimal")
    assert len(points) >= 20, points                 # every phase of the setup, and more
    for p in points:
        assert p["outcome"] == "KeyboardInterrupt", p
        assert p["untouched"] and p["same"], p
        assert p["stray"] == [], p


def test_cache_entries_are_written_atomically(tmp_path, monkeypatch):
    """An entry is the old content or the new, whatever interrupts the write; the
    temporary file goes."""
    from caspar_backend.cache_dir import write_atomically

    entry = tmp_path / "entry.bin"
    entry.write_bytes(b"old")
    real = Path.write_bytes

    def half_then_ctrl_c(self, data):
        real(self, data[: len(data) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_bytes", half_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(entry, b"new content")
    monkeypatch.undo()
    assert entry.read_bytes() == b"old" and os.listdir(tmp_path) == ["entry.bin"]
    write_atomically(entry, b"new content")
    assert entry.read_bytes() == b"new content" and os.listdir(tmp_path) == ["entry.bin"]


def test_cache_entries_have_an_ordinary_files_permissions(tmp_path):
    """0666 less the umask, as any file the user writes: a cache built by one user (a
    container image's build) is readable by another."""
    from caspar_backend.cache_dir import write_atomically

    old = os.umask(0o022)
    try:
        write_atomically(tmp_path / "a.bin", b"x")
        os.umask(0o077)
        write_atomically(tmp_path / "b.bin", b"y")
    finally:
        os.umask(old)
    assert (tmp_path / "a.bin").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b.bin").stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["a.bin", "b.bin"]


def test_ctrl_c_while_building_the_casadi_loader(tmp_path, monkeypatch):
    """The C++ reader of saved nlpsol Functions (built once per machine) is never left
    half written by an interrupted compiler run; the next build works."""
    pytest.importorskip("casadi")
    from caspar_backend.adapters.casadi import casadi_loader

    try:
        casadi_loader._compiler()
    except casadi_loader.LoaderError as e:
        pytest.skip(str(e))

    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    real = subprocess.run

    def interrupted(cmd, **kw):
        Path(cmd[cmd.index("-o") + 1]).write_bytes(b"\x7fELF half a library")
        raise KeyboardInterrupt

    monkeypatch.setattr(casadi_loader.subprocess, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        casadi_loader.build()
    lib = casadi_loader.library_path()
    assert not lib.exists() and list(lib.parent.iterdir()) == []
    monkeypatch.setattr(casadi_loader.subprocess, "run", real)
    assert casadi_loader.build() == lib and lib.stat().st_size > 1000
    assert list(lib.parent.iterdir()) == [lib]


def test_ctrl_c_while_caching_a_cuda_module(tmp_path, monkeypatch):
    """The NVRTC cache (caspar_backend.cuda_compile) on a machine without CUDA, NVRTC
    and CuPy replaced by stand-ins: an interrupted write leaves no cubin and no
    temporary file; the next compile writes it and the one after reads it."""
    import types

    from caspar_backend import cuda_compile

    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    nvrtc = types.SimpleNamespace(
        NVRTCError=RuntimeError, getVersion=lambda: (12, 4),
        createProgram=lambda src, name, a, b: src, compileProgram=lambda prog, opts: None,
        getCUBIN=lambda prog: b"cubin of " + prog.encode(), destroyProgram=lambda prog: None)
    cupy = types.SimpleNamespace(
        RawModule=lambda path: Path(path).read_bytes(),
        cuda=types.SimpleNamespace(Device=lambda: types.SimpleNamespace(
            compute_capability="90")))
    monkeypatch.setattr(cuda_compile, "_nvrtc", lambda: nvrtc)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    real = Path.write_bytes

    def ctrl_c_on_the_cubin(self, data):
        real(self, data[:3])
        if str(self).endswith(".tmp") and b"cubin" in data:
            raise KeyboardInterrupt
        real(self, data)

    monkeypatch.setattr(Path, "write_bytes", ctrl_c_on_the_cubin)
    with pytest.raises(KeyboardInterrupt):
        cuda_compile.compile_module("kernel source")
    cache = tmp_path / "cuda"
    assert [p.suffix for p in cache.iterdir()] == [".cu"]      # the source, whole
    monkeypatch.setattr(Path, "write_bytes", real)
    assert cuda_compile.compile_module("kernel source") == (b"cubin of kernel source", False)
    assert cuda_compile.compile_module("kernel source") == (b"cubin of kernel source", True)
    assert sorted(p.suffix for p in cache.iterdir()) == [".cu", ".cubin"]
