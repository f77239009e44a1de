"""Per-pattern device code compiled and linked at run time, with the libraries numba-cuda's
``cu13`` extra already installs (NVRTC, nvJitLink; no CUDA toolkit binaries, no GPU).

The batch kernel's serial QDLDL chains can run code generated for one layout's pattern
(:mod:`.straight`): the kernel calls three ``extern "C" __device__`` functions and is
linked either with :data:`.straight.STUB` (every function answers -1: the kernel's own
loops run) or with a pattern's generated functions.  Both links are built here:

* :func:`compile_ptx` -- CUDA C++ to relocatable PTX by NVRTC
  (``-rdc=true -arch=compute_<cc>``; no fast-math flags: the generated code must give the
  loops' bits, and NVRTC contracts ``a * b + c`` into an FMA as the kernel's NVVM does);
* :func:`link_cubin` -- nvJitLink of the kernel (PTX, or a relocatable object where
  ptxas made one) with one or more such PTX modules into a cubin for ``sm_<cc>``;
  an unresolved extern is a :class:`LinkError` naming it, never a cubin that traps.

Inputs and outputs are bytes; errors carry the tool's log.
"""
from __future__ import annotations

from ...errors import CasparError


class LinkError(CasparError, RuntimeError):
    """NVRTC or nvJitLink refused its input; the message carries the tool's log."""


def _arch(cc: tuple[int, int]) -> str:
    return f"{cc[0]}{cc[1]}"


def compile_ptx(source: str, cc: tuple[int, int], name: str = "caspar_pattern.cu") -> bytes:
    """NVRTC: ``source`` (CUDA C++) to relocatable PTX for compute capability ``cc``."""
    return _nvrtc(source, cc, name, cubin=False)


def compile_object(source: str, cc: tuple[int, int],
                   name: str = "caspar_pattern.cu") -> bytes:
    """NVRTC: ``source`` to a relocatable cubin (an :data:`OBJECT` for :func:`link_cubin`)
    for ``sm_<cc>``: what a link repeated with other inputs need not compile again."""
    return _nvrtc(source, cc, name, cubin=True)


def _nvrtc(source: str, cc: tuple[int, int], name: str, cubin: bool) -> bytes:
    from cuda.bindings import nvrtc

    def check(result, what):
        err = result[0]
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise LinkError(f"NVRTC {what}: {err.name}")
        return result[1:]

    prog, = check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []),
                  "create")
    try:
        arch = f"-arch={'sm' if cubin else 'compute'}_{_arch(cc)}"
        opts = [b"-rdc=true", arch.encode(), b"-std=c++17"]
        err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size, = check(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
            log = b" " * size
            check(nvrtc.nvrtcGetProgramLog(prog, log), "log")
            raise LinkError(f"NVRTC could not compile {name}: "
                            f"{log.decode(errors='replace')[-2000:]}")
        get_size, get = ((nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN) if cubin
                         else (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX))
        size, = check(get_size(prog), "output size")
        out = b" " * size
        check(get(prog, out), "output")
        return out if cubin else out.rstrip(b"\0")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


#: input kinds of :func:`link_cubin`: PTX text, or an object (a relocatable cubin/ELF)
PTX, OBJECT = "ptx", "object"


def link_cubin(inputs: list[tuple[str, bytes]], cc: tuple[int, int]) -> bytes:
    """nvJitLink: the ``(kind, data)`` inputs (:data:`PTX` or :data:`OBJECT`) linked into
    one cubin for ``sm_<cc>`` (-O3)."""
    from cuda.bindings import nvjitlink

    kinds = {PTX: nvjitlink.InputType.PTX, OBJECT: nvjitlink.InputType.OBJECT}
    handle = nvjitlink.create(2, [f"-arch=sm_{_arch(cc)}", "-O3"])
    try:
        try:
            for i, (kind, data) in enumerate(inputs):
                nvjitlink.add_data(handle, kinds[kind], data, len(data), f"input{i}")
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as exc:
            size = nvjitlink.get_error_log_size(handle)
            log = bytearray(size)
            nvjitlink.get_error_log(handle, log)
            raise LinkError(f"nvJitLink: {exc}: {log.decode(errors='replace')[-2000:]}") \
                from None
        out = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, out)
        return bytes(out)
    finally:
        nvjitlink.destroy(handle)
