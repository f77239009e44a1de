"""QDLDL's serial chains and the tape interpreter calling code generated for the layout's
pattern (the CUDA build's 'extern' variant, :func:`.retarget.device_version` with
``chains='extern'``).

The elimination and the two substitutions (:func:`..kernels.qdldl.ldl_eliminate`,
``ldl_forward``, ``ldl_backward``) are, in this variant, calls of three C functions
(:mod:`.straight` generates them for a pattern; :data:`.straight.STUB` answers -1 for
every pattern) with the data pointers of their slots:

    caspar_gen_eliminate(C = F_C_VALUES, L = F_L_VALUES, D = F_LDL_D, Dinv = F_LDL_DINV)
        -> 1, 0 at an exact zero pivot, -1: not generated
    caspar_gen_forward(L, t = F_LDL_T), caspar_gen_backward(L, t) -> 0, -1: not generated

and the tape interpreter (:func:`..kernels.tape_eval.run_tape`) a call of
``caspar_gen_tape`` (:mod:`.tape_code`: the tape ts:te of the pattern, 0; -1 where the
pattern has no code for it), and where a function answers -1 the loop runs (the
variant's ``*_loop`` globals: the loops' own CUDA versions, bound by the retargeting).
The generated code performs the loops' operations in their order, so a kernel linked
with it gives the loops' bits.
The slots must be contiguous: the rows arrangement (:mod:`.workspaces`) only.

The kernel of this variant has unresolved externs until it is linked (:mod:`.link`)
with the stub or a pattern's code.
"""
from __future__ import annotations

from numba import cuda
from numba import types as nt
from numba.core.extending import intrinsic

from ..kernels import qdldl, tape_eval
from ..kernels._jit import _f, _fv
from ..kernels.slots import F_C_VALUES, F_L_VALUES, F_LDL_D, F_LDL_DINV, F_LDL_T

_P = nt.CPointer(nt.float64)
_Q = nt.CPointer(nt.int64)
_L = nt.int64
gen_eliminate = cuda.declare_device("caspar_gen_eliminate", nt.int32(_P, _P, _P, _P),
                                    abi="c")
gen_forward = cuda.declare_device("caspar_gen_forward", nt.int32(_P, _P), abi="c")
gen_backward = cuda.declare_device("caspar_gen_backward", nt.int32(_P, _P), abi="c")
gen_tape = cuda.declare_device(
    "caspar_gen_tape", nt.int32(_L, _L, _P, _Q, _L, _P, _Q, _L, _P, _L, _L, _L, _L, _P, _L, _L),
    abi="c")


@intrinsic
def data(typingctx, a):
    """The data pointer of a 1-D float64 or int64 array view (its entries contiguous:
    the rows arrangement; a view typed 'A' included)."""
    if not (isinstance(a, nt.Array) and a.ndim == 1 and a.dtype in (nt.float64, nt.int64)
            and a.layout in ("C", "A")):
        return None

    def codegen(context, builder, signature, args):
        return context.make_array(a)(context, builder, args[0]).data
    return nt.CPointer(a.dtype)(a), codegen


def ldl_eliminate_chain(Fb, FO, Ib, IO):
    """qdldl.ldl_eliminate by the pattern's code, else its loop."""
    r = gen_eliminate(data(_f(Fb, FO, F_C_VALUES)), data(_f(Fb, FO, F_L_VALUES)),
                      data(_fv(Fb, FO, Ib, IO, F_LDL_D)), data(_fv(Fb, FO, Ib, IO, F_LDL_DINV)))
    if r < 0:
        return ldl_eliminate_loop(Fb, FO, Ib, IO)  # noqa: F821 (bound by retarget)
    return r == 1


def ldl_forward_chain(Fb, FO, Ib, IO):
    """qdldl.ldl_forward by the pattern's code, else its loop."""
    if gen_forward(data(_f(Fb, FO, F_L_VALUES)), data(_fv(Fb, FO, Ib, IO, F_LDL_T))) < 0:
        ldl_forward_loop(Fb, FO, Ib, IO)  # noqa: F821 (bound by retarget)


def ldl_backward_chain(Fb, FO, Ib, IO):
    """qdldl.ldl_backward by the pattern's code, else its loop."""
    if gen_backward(data(_f(Fb, FO, F_L_VALUES)), data(_fv(Fb, FO, Ib, IO, F_LDL_T))) < 0:
        ldl_backward_loop(Fb, FO, Ib, IO)  # noqa: F821 (bound by retarget)


def run_tape_chain(op, arg, cval, ts, te, x, vt, vo, p, pt, po, dt, do, N, i0, C, reg, c0,
                   c1):
    """tape_eval.run_tape by the pattern's code for the tape ts:te, else the interpreter."""
    if gen_tape(ts, te, data(x), data(vt), vo, data(p), data(pt), po, data(dt), do, N, i0,
                C, data(reg), c0, c1) < 0:
        run_tape_loop(op, arg, cval, ts, te, x, vt, vo, p, pt, po, dt, do,  # noqa: F821
                      N, i0, C, reg, c0, c1)


#: CPU kernel -> the function taking its place in this variant
REPLACED = {qdldl.ldl_eliminate: ldl_eliminate_chain, qdldl.ldl_forward: ldl_forward_chain,
            qdldl.ldl_backward: ldl_backward_chain, tape_eval.run_tape: run_tape_chain}
#: each function's fallback: the global name retarget binds to the loop's CUDA version
LOOP_NAMES = {ldl_eliminate_chain: "ldl_eliminate_loop", ldl_forward_chain: "ldl_forward_loop",
              ldl_backward_chain: "ldl_backward_loop", run_tape_chain: "run_tape_loop"}
