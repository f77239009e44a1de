"""A straight-line LDL^T elimination generated for one pattern (QDLDL's numeric steps,
QDLDL's order, every index a constant), and the loop form it replaces, as CUDA C.

Input: the layout's permuted upper CSC pattern C (Cp, Ci), L's columns (Lp, Li) and the
elimination schedule (Rp, Rc, Rt: row k's updates q = Rp[k] .. Rp[k+1]-1, update q
eliminating column Rc[q] into L's entry Rt[q]) -- kernels/qdldl.ldl_eliminate's slots.

Generated form, per row k: the working values y_c (c in row k's pattern) and D_k are C
locals (registers), initialised from C's column k (0.0 where C has no entry); each
update

    yv = y_c;  y_r -= Lx[j] * yv  (j = Lp[c] .. Rt[q]-1, r = Li[j]);
    l = yv * Dinv[c];  Lx[Rt[q]] = l;  D_k -= yv * l

then D[k] = D_k, a zero pivot returns 0, Dinv[k] = 1 / D_k.  The same operations in the
same order as ldl_eliminate, so the same bits where the compiler contracts products the
same way (both or neither).  Rows are grouped into ``__noinline__`` functions of
``chunk`` rows (a bounded basic block for ptxas).
"""
from __future__ import annotations

import numpy as np


def _row_code(k, Cp, Ci, Lp, Li, Rp, Rc, Rt, out):
    pat = [int(c) for c in Rc[Rp[k]:Rp[k + 1]]]
    where = set(pat)
    init = {c: "0.0" for c in pat}
    dk = "0.0"
    for i in range(int(Cp[k]), int(Cp[k + 1])):
        b = int(Ci[i])
        if b == k:
            dk = f"Cx[{i}]"
        else:
            assert b in where, (k, b)
            init[b] = f"Cx[{i}]"
    out.append(f"  {{ /* row {k} */")
    out.append(f"    double Dk = {dk};")
    for c in pat:
        out.append(f"    double y{c} = {init[c]};")
    for q in range(int(Rp[k]), int(Rp[k + 1])):
        c, t = int(Rc[q]), int(Rt[q])
        for j in range(int(Lp[c]), t):
            r = int(Li[j])
            assert r in where, (k, c, r)
            out.append(f"    y{r} -= Lx[{j}] * y{c};")
        out.append(f"    {{ double l = y{c} * Dinv[{c}]; Lx[{t}] = l; Dk -= y{c} * l; }}")
    out.append(f"    D[{k}] = Dk; if (Dk == 0.0) return 0; Dinv[{k}] = 1.0 / Dk;")
    out.append("  }")


def straight_source(Cp, Ci, Lp, Li, Rp, Rc, Rt, chunk=64, prefix="gen") -> str:
    """C source: ``int {prefix}_eliminate(const double* Cx, double* Lx, double* D,
    double* Dinv)`` (1: done; 0: an exact zero pivot, QDLDL's stop), as ``__device__``
    functions (the macro DEV, defined by the includer)."""
    n = len(Lp) - 1
    out = []
    parts = []
    for a in range(1, n, chunk):
        b = min(n, a + chunk)
        name = f"{prefix}_rows_{a}_{b}"
        parts.append(name)
        out.append(f"DEV_NOINLINE int {name}(const double* __restrict__ Cx, "
                   "double* __restrict__ Lx, double* __restrict__ D, "
                   "double* __restrict__ Dinv) {")
        for k in range(a, b):
            _row_code(k, Cp, Ci, Lp, Li, Rp, Rc, Rt, out)
        out.append("  return 1;\n}")
    out.append(f"DEV int {prefix}_eliminate(const double* __restrict__ Cx, "
               "double* __restrict__ Lx, double* __restrict__ D, "
               "double* __restrict__ Dinv) {")
    out.append("  D[0] = Cx[0]; if (D[0] == 0.0) return 0; Dinv[0] = 1.0 / D[0];")
    for name in parts:
        out.append(f"  if (!{name}(Cx, Lx, D, Dinv)) return 0;")
    out.append("  return 1;\n}")
    return "\n".join(out) + "\n"


#: ldl_eliminate's loops (kernels/qdldl.py) on the shared int64 structure; yVals and D
#: zeroed first (load_values' part), as the kernel's factorization does.  Macros: LOOP_NAME
#: the function's name, IDX the structure's int type (long long as the kernel's, or int),
#: SR empty or __restrict__ on the structure's pointers (which lets the compiler move
#: their loads past the stores)
LOOP_SOURCE = r"""
DEV int LOOP_NAME(IDX n, const IDX* SR Cp, const IDX* SR Ci, const IDX* SR Lp,
                  const IDX* SR Li, const IDX* SR Rp, const IDX* SR Rc, const IDX* SR Rt,
                  const double* Cx, double* Lx, double* D, double* Dinv, double* yVals) {
  for (IDX i = 0; i < n; ++i) { yVals[i] = 0.0; D[i] = 0.0; }
  D[0] = Cx[0];
  if (D[0] == 0.0) return 0;
  Dinv[0] = 1.0 / D[0];
  for (IDX k = 1; k < n; ++k) {
    for (IDX i = Cp[k]; i < Cp[k + 1]; ++i) {
      IDX b = Ci[i];
      if (b == k) D[k] = Cx[i]; else yVals[b] = Cx[i];
    }
    for (IDX q = Rp[k]; q < Rp[k + 1]; ++q) {
      IDX c = Rc[q], t = Rt[q];
      double yv = yVals[c];
      for (IDX j = Lp[c]; j < t; ++j) yVals[Li[j]] -= Lx[j] * yv;
      Lx[t] = yv * Dinv[c];
      D[k] -= yv * Lx[t];
      yVals[c] = 0.0;
    }
    if (D[k] == 0.0) return 0;
    Dinv[k] = 1.0 / D[k];
  }
  return 1;
}
"""


def pattern(lay):
    """(Cp, Ci, Lp, Li, Rp, Rc, Rt) of a WorkspaceLayout, int64."""
    from caspar_backend.compiled.kernels import slots

    def I(name):
        k = slots.INT_SLOTS.index(name)
        return np.asarray(lay.Ib[lay.IO[k]:lay.IO[k + 1]], np.int64)
    return tuple(I(s) for s in ("C_INDPTR", "C_INDICES", "L_INDPTR", "L_INDICES",
                                "LDL_ROW_PTR", "LDL_ROW_COL", "LDL_ROW_POS"))


def test_values(Cp, Ci, B, seed=0):
    """(B, nnzC) values on C's pattern: off-diagonals N(0, 1), diagonals +-(5 + |N|)
    alternating by column (a quasi-definite-looking K with no zero pivot)."""
    rng = np.random.default_rng(seed)
    n = len(Cp) - 1
    V = rng.standard_normal((B, len(Ci)))
    col = np.repeat(np.arange(n), np.diff(Cp))
    diag = Ci == col
    sign = np.where(col % 2 == 0, 1.0, -1.0)
    V[:, diag] = (sign * (5.0 + np.abs(V)))[:, diag]
    return V


def straight_solve_source(perm, Lp, Li, Fp, Fc, Fq, chunk=128, prefix="gen") -> str:
    """C source: ``void {prefix}_solve(const double* b, double* x, const double* Lx,
    const double* Dinv, double* t)``: x = K^{-1} b through the factors, kernels/qdldl.
    ldl_solve's steps -- permute, :func:`straight_substitutions_source`'s forward
    substitution, t *= 1/D, its backward substitution, unpermute -- with every index a
    constant."""
    n = len(Lp) - 1
    args = ("const double* __restrict__ b, double* __restrict__ x, "
            "const double* __restrict__ Lx, const double* __restrict__ Dinv, "
            "double* __restrict__ t")
    out = [straight_substitutions_source(Lp, Li, Fp, Fc, Fq, chunk=chunk, prefix=prefix)]
    for name, lines in (("permute", [f"  t[{i}] = b[{int(perm[i])}];" for i in range(n)]),
                        ("scale", [f"  t[{i}] *= Dinv[{i}];" for i in range(n)]),
                        ("unpermute", [f"  x[{int(perm[i])}] = t[{i}];" for i in range(n)])):
        out += [f"DEV_NOINLINE void {prefix}_{name}({args}) {{", *lines, "}"]
    out += [f"DEV void {prefix}_solve({args}) {{",
            f"  {prefix}_permute(b, x, Lx, Dinv, t);",
            f"  {prefix}_forward(Lx, t);",
            f"  {prefix}_scale(b, x, Lx, Dinv, t);",
            f"  {prefix}_backward(Lx, t);",
            f"  {prefix}_unpermute(b, x, Lx, Dinv, t);",
            "}"]
    return "\n".join(out) + "\n"


#: ldl_solve's loops (kernels/qdldl.py) on the shared structure (macros IDX, SR, SOLVE_NAME)
SOLVE_LOOP_SOURCE = r"""
DEV void SOLVE_NAME(IDX n, const IDX* SR perm, const IDX* SR Lp, const IDX* SR Li,
                    const IDX* SR Fp, const IDX* SR Fc, const IDX* SR Fq, const double* b,
                    double* x, const double* Lx, const double* Dinv, double* t) {
  for (IDX i = 0; i < n; ++i) t[i] = b[perm[i]];
  for (IDX i = 0; i < n; ++i) {
    double v = t[i];
    for (IDX k = Fp[i]; k < Fp[i + 1]; ++k) v -= Lx[Fq[k]] * t[Fc[k]];
    t[i] = v;
  }
  for (IDX i = 0; i < n; ++i) t[i] *= Dinv[i];
  for (IDX i = n - 1; i >= 0; --i) {
    double v = t[i];
    for (IDX j = Lp[i]; j < Lp[i + 1]; ++j) v -= Lx[j] * t[Li[j]];
    t[i] = v;
  }
  for (IDX i = 0; i < n; ++i) x[perm[i]] = t[i];
}
"""


def solve_pattern(lay):
    """(perm, Lp, Li, Fp, Fc, Fq) of a WorkspaceLayout, int64 (L's row form: I_L_ROW_*)."""
    from caspar_backend.compiled.kernels import slots

    def I(name):
        k = slots.INT_SLOTS.index(name)
        return np.asarray(lay.Ib[lay.IO[k]:lay.IO[k + 1]], np.int64)
    return tuple(I(s) for s in ("PERM", "L_INDPTR", "L_INDICES", "L_ROW_PTR", "L_ROW_COL",
                                "L_ROW_POS"))


def straight_substitutions_source(Lp, Li, Fp, Fc, Fq, chunk=128, prefix="gen") -> str:
    """C source: ``int {prefix}_forward(const double* Lx, double* t)`` (L t = t in place,
    kernels/qdldl.ldl_forward's rows gathering in increasing column) and ``int
    {prefix}_backward(const double* Lx, double* t)`` (L^T t = t, ldl_backward's columns
    from n-1 down), every index a constant; each returns 1."""
    n = len(Lp) - 1
    out = []
    for kind in ("forward", "backward"):
        names = []
        order = list(range(n)) if kind == "forward" else list(range(n - 1, -1, -1))
        for a in range(0, n, chunk):
            name = f"{prefix}_{kind}_{a}"
            names.append(name)
            out.append(f"DEV_NOINLINE void {name}(const double* __restrict__ Lx, "
                       "double* __restrict__ t) {")
            for i in order[a:a + chunk]:
                if kind == "forward":
                    terms = "".join(f" v -= Lx[{int(Fq[k])}] * t[{int(Fc[k])}];"
                                    for k in range(int(Fp[i]), int(Fp[i + 1])))
                else:
                    terms = "".join(f" v -= Lx[{j}] * t[{int(Li[j])}];"
                                    for j in range(int(Lp[i]), int(Lp[i + 1])))
                out.append(f"  {{ double v = t[{i}];{terms} t[{i}] = v; }}")
            out.append("}")
        out.append(f"DEV int {prefix}_{kind}(const double* __restrict__ Lx, "
                   "double* __restrict__ t) {")
        out.extend(f"  {c}(Lx, t);" for c in names)
        out.append("  return 1;\n}")
    return "\n".join(out) + "\n"
