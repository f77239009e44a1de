"""QDLDL's serial chains as straight-line CUDA C generated for one layout's pattern.

A 32-lane team (:mod:`.team`) runs everything but three chains in parallel; those stay
its leader's, each row waiting on earlier rows: the elimination
(:func:`..kernels.qdldl.ldl_eliminate`) and the two substitutions
(:func:`..kernels.qdldl.ldl_forward`, :func:`..kernels.qdldl.ldl_backward`).  Their loops
walk index arrays that the layout fixes: the schedule (slots I_LDL_ROW_PTR/COL/POS),
L's columns (I_L_INDPTR, I_L_INDICES) and rows (I_L_ROW_PTR/COL/POS), C's columns
(I_C_INDPTR, I_C_INDICES).  :func:`source` writes the same operations with every index a
constant, as three C functions with C linkage:

    int caspar_gen_eliminate(const double* C, double* L, double* D, double* Dinv)
        QDLDL's numeric elimination on C's values (slot F_C_VALUES) into L (F_L_VALUES),
        D (F_LDL_D) and 1/D (F_LDL_DINV); 1, or 0 at an exact zero pivot (QDLDL stops
        there, D[k] written, 1/D[k] not)
    int caspar_gen_forward(const double* L, double* t)     L t = t in place (F_LDL_T)
    int caspar_gen_backward(const double* L, double* t)    L^T t = t in place

Row k of the elimination: its working values y_c (c in row k's pattern of L) and D_k are
C locals, set from C's column k (0.0 where C has no entry); update q (column c = Rc[q],
L's entry t = Rt[q]) is

    y_r -= L[j] * y_c   for j = Lp[c] .. t - 1, r = Li[j];
    l = y_c * Dinv[c];  L[t] = l;  D_k -= y_c * l

then ``D[k] = D_k``, a zero D_k returns 0, ``Dinv[k] = 1.0 / D_k``.  A substitution row
``v = t[i]; v -= L[q] * t[c] ...; t[i] = v`` takes its terms in ldl_forward's
(increasing column) or ldl_backward's order.  The same operations in the same order as
the loops, so the same bits wherever a compiler contracts products into sums the same way
(g++ without contraction against the CPU kernels: tests/compiled/test_cuda_straight.py).
Rows are grouped into ``__noinline__`` functions of ``chunk`` rows (a basic block ptxas
schedules in seconds).  :data:`STUB` defines the three functions as -1: no code for
this pattern, the caller runs its loop.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ..kernels import slots

#: the generator's version, part of :func:`pattern_key` (bump when the source changes)
VERSION = 1
#: rows per ``__noinline__`` function: elimination, substitutions
CHUNK = 64
SUB_CHUNK = 128
#: the most elimination updates plus inner multiply-adds generated (beyond: the stub)
MAX_OPERATIONS = 200_000

#: the int slots the code is made of, in :func:`pattern_key`'s order
STRUCTURE = ("C_INDPTR", "C_INDICES", "L_INDPTR", "L_INDICES", "LDL_ROW_PTR", "LDL_ROW_COL",
             "LDL_ROW_POS", "L_ROW_PTR", "L_ROW_COL", "L_ROW_POS")

HEADER = ('#define CASPAR_DEV __device__\n'
          '#define CASPAR_DEV_NOINLINE __device__ __noinline__\n')

STUB = ('extern "C" __device__ int caspar_gen_eliminate(const double*, double*, double*, '
        "double*) { return -1; }\n"
        'extern "C" __device__ int caspar_gen_forward(const double*, double*) '
        "{ return -1; }\n"
        'extern "C" __device__ int caspar_gen_backward(const double*, double*) '
        "{ return -1; }\n")


def structure(lay) -> dict:
    """{name: int64 array} of :data:`STRUCTURE` in ``lay`` (a WorkspaceLayout)."""
    out = {}
    for name in STRUCTURE:
        k = slots.INT_SLOTS.index(name)
        out[name] = np.asarray(lay.Ib[lay.IO[k]:lay.IO[k + 1]], np.int64)
    return out


def operations(lay) -> int:
    """The elimination's updates plus its inner multiply-adds for ``lay``'s pattern."""
    s = structure(lay)
    Lp, Rc, Rt = s["L_INDPTR"], s["LDL_ROW_COL"], s["LDL_ROW_POS"]
    return int(len(Rc) + np.sum(Rt - Lp[Rc]))


def fits(lay) -> bool:
    """Whether :func:`source` generates code for ``lay`` (:data:`MAX_OPERATIONS`)."""
    return operations(lay) <= MAX_OPERATIONS


def pattern_key(lay) -> str:
    """A hash of ``lay``'s :data:`STRUCTURE`, :data:`VERSION` and the chunk sizes: the
    generated code is a function of these alone."""
    h = hashlib.sha256(f"{VERSION} {CHUNK} {SUB_CHUNK}".encode())
    for name, a in structure(lay).items():
        h.update(name.encode())
        h.update(np.ascontiguousarray(a, np.int64).tobytes())
    return h.hexdigest()[:32]


def _eliminate_row(k, s, out) -> None:
    Cp, Ci = s["C_INDPTR"], s["C_INDICES"]
    Lp, Li = s["L_INDPTR"], s["L_INDICES"]
    Rp, Rc, Rt = s["LDL_ROW_PTR"], s["LDL_ROW_COL"], s["LDL_ROW_POS"]
    cols = [int(c) for c in Rc[Rp[k]:Rp[k + 1]]]
    start = dict.fromkeys(cols, "0.0")
    dk = "0.0"
    for i in range(int(Cp[k]), int(Cp[k + 1])):
        b = int(Ci[i])
        if b == k:
            dk = f"C[{i}]"
        elif b in start:
            start[b] = f"C[{i}]"
        else:       # a structural entry of C outside row k's reach cannot occur
            raise ValueError(f"C({b}, {k}) is not in row {k}'s pattern of L")
    out.append(f"  {{ double Dk = {dk};")
    out.extend(f"    double y{c} = {start[c]};" for c in cols)
    for q in range(int(Rp[k]), int(Rp[k + 1])):
        c, t = int(Rc[q]), int(Rt[q])
        for j in range(int(Lp[c]), t):
            out.append(f"    y{int(Li[j])} -= L[{j}] * y{c};")
        out.append(f"    {{ double l = y{c} * Dinv[{c}]; L[{t}] = l; Dk -= y{c} * l; }}")
    out.append(f"    D[{k}] = Dk; if (Dk == 0.0) return 0; Dinv[{k}] = 1.0 / Dk; }}")


def _elimination(s, chunk) -> list:
    n = len(s["L_INDPTR"]) - 1
    out, parts = [], []
    args = ("const double* __restrict__ C, double* __restrict__ L, double* __restrict__ D, "
            "double* __restrict__ Dinv")
    for a in range(1, n, chunk):
        name = f"caspar_gen_rows_{a}"
        parts.append(name)
        out.append(f"static CASPAR_DEV_NOINLINE int {name}({args}) {{")
        for k in range(a, min(n, a + chunk)):
            _eliminate_row(k, s, out)
        out.append("  return 1;\n}")
    out.append(f'extern "C" CASPAR_DEV int caspar_gen_eliminate({args}) {{')
    if n > 0:
        out.append("  D[0] = C[0]; if (D[0] == 0.0) return 0; Dinv[0] = 1.0 / D[0];")
    out.extend(f"  if (!{p}(C, L, D, Dinv)) return 0;" for p in parts)
    out.append("  return 1;\n}")
    return out


def _substitution(s, kind, chunk) -> list:
    n = len(s["L_INDPTR"]) - 1
    order = range(n) if kind == "forward" else range(n - 1, -1, -1)
    order = list(order)
    out, parts = [], []
    args = "const double* __restrict__ L, double* __restrict__ t"
    for a in range(0, n, chunk):
        name = f"caspar_gen_{kind}_{a}"
        parts.append(name)
        out.append(f"static CASPAR_DEV_NOINLINE void {name}({args}) {{")
        for i in order[a:a + chunk]:
            if kind == "forward":
                Fp, Fc, Fq = s["L_ROW_PTR"], s["L_ROW_COL"], s["L_ROW_POS"]
                terms = "".join(f" v -= L[{int(Fq[q])}] * t[{int(Fc[q])}];"
                                for q in range(int(Fp[i]), int(Fp[i + 1])))
            else:
                Lp, Li = s["L_INDPTR"], s["L_INDICES"]
                terms = "".join(f" v -= L[{j}] * t[{int(Li[j])}];"
                                for j in range(int(Lp[i]), int(Lp[i + 1])))
            out.append(f"  {{ double v = t[{i}];{terms} t[{i}] = v; }}")
        out.append("}")
    out.append(f'extern "C" CASPAR_DEV int caspar_gen_{kind}({args}) {{')
    out.extend(f"  {p}(L, t);" for p in parts)
    out.append("  return 1;\n}")
    return out


def source(lay, chunk: int = CHUNK, sub_chunk: int = SUB_CHUNK) -> str:
    """The three functions of the module doc for ``lay``'s pattern, after
    :data:`HEADER` (which a host build replaces)."""
    s = structure(lay)
    lines = (_elimination(s, chunk) + _substitution(s, "forward", sub_chunk)
             + _substitution(s, "backward", sub_chunk))
    return HEADER + "\n".join(lines) + "\n"
