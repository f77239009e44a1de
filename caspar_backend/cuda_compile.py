"""NVRTC compilation of generated CUDA source, cached on disk.

A module is compiled to a cubin for the current device's architecture and
stored under ``$CASPAR_CACHE_DIR`` (default ``~/.cache/caspar/cuda``) as
``<key>.cubin`` next to ``<key>.cu`` (the source, for inspection), where

    key = sha256(source, arch, NVRTC options, caspar version, NVRTC version).

A second process with the same source reuses the cubin without compiling.
No fast-math: the options are IEEE double precision as written.  A compile
failure raises :class:`CudaCompileError` carrying the source and NVRTC's log.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .cache_dir import cache_subdir, write_atomically
from .errors import CasparError, DeviceError

OPTIONS = ("--std=c++14", "-default-device")


class CudaCompileError(CasparError, RuntimeError):
    """NVRTC rejected generated source (final)."""

    def __init__(self, message: str, source: str, log: str):
        super().__init__(f"{message}\n--- NVRTC log ---\n{log}")
        self.source = source
        self.log = log


def cache_dir() -> Path:
    return cache_subdir("cuda")


def _arch() -> str:
    import cupy

    cc = cupy.cuda.Device().compute_capability  # e.g. "90"
    return f"sm_{cc}"


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc
    except ImportError as e:  # pragma: no cover - depends on the CuPy build
        raise DeviceError(f"CuPy's NVRTC bindings are not importable: {e}") from e
    return nvrtc


def cache_key(source: str, arch: str, options=OPTIONS) -> str:
    from .version import __version__

    nvrtc = _nvrtc()
    h = hashlib.sha256()
    for part in (source, arch, " ".join(options), __version__, str(nvrtc.getVersion())):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def compile_module(source: str, name: str = "caspar.cu", options=OPTIONS):
    """A ``cupy.RawModule`` for ``source``, compiled or loaded from the cache.

    Returns ``(module, cached)`` where ``cached`` says whether the cubin came
    from the disk cache.
    """
    import cupy

    arch = _arch()
    key = cache_key(source, arch, options)
    d = cache_dir()
    cubin = d / f"{key}.cubin"
    if cubin.exists():
        return cupy.RawModule(path=str(cubin)), True
    nvrtc = _nvrtc()
    prog = nvrtc.createProgram(source, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, list(options) + [f"--gpu-architecture={arch}"])
        except nvrtc.NVRTCError as e:
            log = nvrtc.getProgramLog(prog)
            raise CudaCompileError(f"NVRTC failed to compile {name}: {e}", source, log) from None
        binary = nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
    # written atomically: a concurrent process, or the next one after a Ctrl-C here,
    # never loads half a file (caspar_backend.cache_dir)
    write_atomically(d / f"{key}.cu", source.encode())
    write_atomically(cubin, binary)
    return cupy.RawModule(path=str(cubin)), False
