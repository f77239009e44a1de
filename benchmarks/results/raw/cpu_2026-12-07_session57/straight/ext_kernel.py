"""The batch kernel whose serial QDLDL chains call code generated per pattern: the CUDA
build's ldl_eliminate, ldl_forward and ldl_backward replaced by functions calling
external ``caspar_gen_eliminate(C, L, D, 1/D)``, ``caspar_gen_forward(L, t)``,
``caspar_gen_backward(L, t)`` (C ABI, raw float64 pointers of the slots), each falling
back to the loop where the extern answers -1 (the stub: no code for this pattern).  The
kernel is compiled once to a relocatable object; a pattern's code alone, then linked.

Rows arrangement only (the slots are contiguous views: their data pointer is the slot)."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from numba import cuda
from numba import types as nt
from numba.core.extending import intrinsic

from caspar_backend.compiled.kernels import qdldl
from caspar_backend.compiled.kernels._jit import _f, _fv, _i  # noqa: F401
from caspar_backend.compiled.kernels.slots import *  # noqa: F401,F403
from caspar_backend.compiled.cuda import launch, retarget

from gen_ldl import (pattern, solve_pattern, straight_source,
                     straight_substitutions_source)

P = nt.CPointer(nt.float64)
gen_elim = cuda.declare_device("caspar_gen_eliminate", nt.int32(P, P, P, P), abi="c")
gen_fwd = cuda.declare_device("caspar_gen_forward", nt.int32(P, P), abi="c")
gen_bwd = cuda.declare_device("caspar_gen_backward", nt.int32(P, P), abi="c")


@intrinsic
def data(typingctx, a):
    """The data pointer of a 1-D contiguous float64 view."""
    def codegen(context, builder, signature, args):
        return context.make_array(a)(context, builder, args[0]).data
    return P(a), codegen


def ldl_eliminate_ext(Fb, FO, Ib, IO):
    r = gen_elim(data(_f(Fb, FO, F_C_VALUES)), data(_f(Fb, FO, F_L_VALUES)),
                 data(_fv(Fb, FO, Ib, IO, F_LDL_D)), data(_fv(Fb, FO, Ib, IO, F_LDL_DINV)))
    if r < 0:
        return loop_eliminate(Fb, FO, Ib, IO)
    return r == 1


def ldl_forward_ext(Fb, FO, Ib, IO):
    if gen_fwd(data(_f(Fb, FO, F_L_VALUES)), data(_fv(Fb, FO, Ib, IO, F_LDL_T))) < 0:
        loop_forward(Fb, FO, Ib, IO)


def ldl_backward_ext(Fb, FO, Ib, IO):
    if gen_bwd(data(_f(Fb, FO, F_L_VALUES)), data(_fv(Fb, FO, Ib, IO, F_LDL_T))) < 0:
        loop_backward(Fb, FO, Ib, IO)


def dispatcher(**jit_options):
    """The rows kernel (launch._solve_rows) with the three chains calling the externs."""
    dev = retarget.device_functions()
    g = dict(globals())
    g.update(_f=retarget._device[id(_f)], _fv=retarget._device[id(_fv)],
             _i=retarget._device[id(_i)], loop_eliminate=dev["ldl_eliminate"],
             loop_forward=dev["ldl_forward"], loop_backward=dev["ldl_backward"])
    for cpu, fn in ((qdldl.ldl_eliminate, ldl_eliminate_ext),
                    (qdldl.ldl_forward, ldl_forward_ext),
                    (qdldl.ldl_backward, ldl_backward_ext)):
        d = cuda.jit(device=True)(retarget._copy(fn, g))
        old = retarget._device[id(cpu)]
        for mg in retarget._globals.values():
            for name, v in list(mg.items()):
                if v is old:
                    mg[name] = d
    return retarget.device_version(launch._solve_rows, **jit_options)


STUB = ('extern "C" __device__ int caspar_gen_eliminate(double*, double*, double*, double*) '
        "{ return -1; }\n"
        'extern "C" __device__ int caspar_gen_forward(double*, double*) { return -1; }\n'
        'extern "C" __device__ int caspar_gen_backward(double*, double*) { return -1; }\n')


def generated(lay, chunk=64, sub_chunk=128) -> str:
    """The externs for ``lay``'s pattern (gen_ldl's straight-line forms)."""
    sp = solve_pattern(lay)
    return ("#define DEV __device__\n#define DEV_NOINLINE __device__ __noinline__\n"
            + straight_source(*pattern(lay), chunk=chunk)
            + straight_substitutions_source(*sp[1:], chunk=sub_chunk)
            + 'extern "C" __device__ int caspar_gen_eliminate(double* C, double* L, '
              "double* D, double* Di) { return gen_eliminate(C, L, D, Di); }\n"
              'extern "C" __device__ int caspar_gen_forward(double* L, double* t) '
              "{ return gen_forward(L, t); }\n"
              'extern "C" __device__ int caspar_gen_backward(double* L, double* t) '
              "{ return gen_backward(L, t); }\n")


def tool(name: str) -> str:
    for p in (shutil.which(name), f"/usr/local/cuda/bin/{name}"):
        if p and Path(p).exists():
            return p
    raise FileNotFoundError(name)


def run(log, *cmd) -> float:
    t = time.time()
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    dt = time.time() - t
    log(f"{Path(str(cmd[0])).name} {dt:.1f} s rc {r.returncode} {r.stderr[-400:]}")
    if r.returncode:
        raise RuntimeError(f"{cmd[0]} failed")
    return dt


def build_cubins(ptx: str, lay, out: Path, log=print, arch="sm_90") -> dict:
    """{'stub': cubin bytes, 'gen': cubin bytes}: ``ptx`` (the kernel) relocatable once,
    each extern source alone, each linked with it."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "kernel.ptx").write_text(ptx)
    run(log, tool("ptxas"), f"-arch={arch}", "-O3", "-c", out / "kernel.ptx", "-o",
        out / "kernel.o")
    cubins = {}
    for name, src in (("stub", STUB), ("gen", generated(lay))):
        (out / f"{name}.cu").write_text(src)
        run(log, tool("nvcc"), f"-arch={arch}", "-rdc=true", "-cubin", "-O3",
            out / f"{name}.cu", "-o", out / f"{name}.o")
        run(log, tool("nvlink"), f"-arch={arch}", out / "kernel.o", out / f"{name}.o", "-o",
            out / f"kernel_{name}.cubin")
        cubins[name] = (out / f"kernel_{name}.cubin").read_bytes()
    return cubins
