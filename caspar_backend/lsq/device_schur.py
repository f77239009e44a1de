"""DENSE_SCHUR on the GPU: the elimination as dense products over one block-sparse pass.

With the split of :mod:`caspar_backend.lsq.schur` (e-columns: the eliminated blocks,
``n_E = n_eb s_e`` of them; f-columns: the reduced system, ``N = n_fb s_f``), one pass
over J's rows (one thread per row, atomic adds) accumulates

    U   = F^T F            (N, N)         gf  = -F^T r           (N,)
    W^T = E^T F            (n_E, N)       g_e =  E^T r           (n_E,)
    V_b = E_b^T E_b        (n_eb, s_e, s_e)

and the rest is dense linear algebra on the device (cuBLAS / cuSOLVER through CuPy):

    V_b += D_b^2;   Vinv = V^{-1} (batched);   T^T = Vinv W^T   (n_eb batched products)
    S = U + D_f^2 - W T^T            (one GEMM, N x n_E x N)
    rhs = gf + W (Vinv g_e)
    S dx_f = rhs  (Cholesky);        dx_e = -Vinv (g_e + W^T dx_f)

W is held dense: ``n_E N`` doubles (141 MB for 10,000 points and 98 free cameras), which
:func:`fits` bounds; its product is the GEMM the GPU is built for, where a block-sparse
product would be launch- and atomic-bound.  The same algebra runs on NumPy arrays
(``xp = numpy``, the pass by ``np.add.at``) to test it without a GPU; the CUDA pass is
tested against it on the GPU machine.

Entries of J, in CSR order, carry a *code*: ``c < N`` an f-column (its position in the
reduced system), ``c >= N`` the e-column ``c - N`` (block ``(c - N) // s_e``), ``-1`` a
column in neither (none: every free column is in one of them).
"""

from __future__ import annotations

import numpy as np

from .linear_solvers import StepSolver

#: the most device memory the dense W, S and U may take (bytes)
MAX_DENSE_BYTES = 16 << 30
#: automatic choice on the GPU: DENSE_SCHUR while its product ``W (V^{-1} W^T)``
#: (``2 n_E N^2`` flops) costs at most this, ITERATIVE_SCHUR above
DENSE_FLOPS_MAX = 1e12

_ACCUMULATE = r"""
extern "C" __global__ void accumulate(const long long* row_ptr, const int* src,
                                      const int* code, const double* vals, const double* r,
                                      const int m, const int N, const int s_e,
                                      double* U, double* Wt, double* V, double* ge,
                                      double* gf)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const long long a = row_ptr[i], b = row_ptr[i + 1];
    const double ri = r[i];
    for (long long q = a; q < b; ++q) {
        const int cq = code[q];
        const double vq = vals[src[q]];
        if (cq < N) {
            atomicAdd(&gf[cq], -vq * ri);
            for (long long q2 = a; q2 < b; ++q2) {
                const int c2 = code[q2];
                const double p = vq * vals[src[q2]];
                if (c2 < N) atomicAdd(&U[(long long)cq * N + c2], p);
                else atomicAdd(&Wt[(long long)(c2 - N) * N + cq], p);
            }
        } else {
            const int e = cq - N;
            atomicAdd(&ge[e], vq * ri);
            const long long base = (long long)(e / s_e) * s_e * s_e + (e % s_e) * s_e;
            for (long long q2 = a; q2 < b; ++q2) {
                const int c2 = code[q2];
                if (c2 >= N) atomicAdd(&V[base + (c2 - N) % s_e], vq * vals[src[q2]]);
            }
        }
    }
}
"""


def dense_is_cheap(structure) -> bool:
    """Whether the dense product of :func:`fits`'s W costs at most
    :data:`DENSE_FLOPS_MAX`."""
    N, n_E = float(structure.f_cols.size), float(structure.e_cols.size)
    return 2.0 * n_E * N * N <= DENSE_FLOPS_MAX


def fits(structure) -> bool:
    """Whether the dense W, U and S of ``structure`` stay within :data:`MAX_DENSE_BYTES`."""
    N = int(structure.f_cols.size)
    n_E = int(structure.e_cols.size)
    return 8 * N * (n_E + 2 * N) <= MAX_DENSE_BYTES


class DeviceDenseSchur(StepSolver):
    """DENSE_SCHUR with W dense, on ``xp`` (CuPy on the GPU; NumPy for tests) (final).
    See the module docstring.  ``solve(vals, r, d)`` takes and returns ``xp`` arrays."""

    name = "DENSE_SCHUR"

    def __init__(self, jac, structure, xp):
        """``jac``: the pattern's CSR form -- ``indptr`` (m + 1,), ``order`` (nnz,: the
        pattern entry of each CSR entry), ``indices`` (nnz,), ``m``, ``n`` -- as ``xp``
        arrays (a :class:`~caspar_backend.lsq.jacobian.SparseJacobian` on the host, a
        :class:`~caspar_backend.lsq.device_pattern.DevicePattern` on the GPU);
        ``structure``'s tables NumPy or ``xp`` arrays."""
        super().__init__(jac)
        self.xp = xp
        st = self.structure = structure
        f_cols, e_cols = xp.asarray(st.f_cols), xp.asarray(st.e_cols)
        self.s_e, self.s_f = s_e, s_f = e_cols.shape[1], f_cols.shape[1]
        self.n_eb, self.n_fb = n_eb, n_fb = e_cols.shape[0], f_cols.shape[0]
        self.N, self.n_E = N, n_E = n_fb * s_f, n_eb * s_e
        code_of_col = xp.full(jac.n, -1, dtype=xp.int64)
        valid = f_cols >= 0
        self.f_slot = xp.flatnonzero(valid.reshape(-1))
        self.f_col = f_cols[valid]
        code_of_col[self.f_col] = self.f_slot
        valid_e = e_cols >= 0
        self.e_slot = xp.flatnonzero(valid_e.reshape(-1))
        self.e_col = e_cols[valid_e]
        code_of_col[self.e_col] = N + self.e_slot
        code = code_of_col[jac.indices]
        self._host = (jac.indptr, jac.order, code)
        self.row_ptr = xp.asarray(jac.indptr, dtype=xp.int64)
        self.src = jac.order.astype(xp.int32)
        self.code = code.astype(xp.int32)
        self.U = xp.zeros((N, N))
        self.Wt = xp.zeros((n_E, N))
        self.V = xp.zeros((n_eb, s_e, s_e))
        self.ge = xp.zeros(n_E)
        self.gf = xp.zeros(N)
        self._kernel = None
        if xp is not np:
            self._kernel = xp.RawKernel(_ACCUMULATE, "accumulate")

    # ------------------------------------------------------------------ pass
    def _accumulate(self, vals, r):
        for a in (self.U, self.Wt, self.V, self.ge, self.gf):
            a.fill(0.0)
        m = self.jac.m
        if self._kernel is not None:
            threads = 128
            self._kernel(((m + threads - 1) // threads,), (threads,),
                         (self.row_ptr, self.src, self.code, vals, r, np.int32(m),
                          np.int32(self.N), np.int32(self.s_e), self.U, self.Wt, self.V,
                          self.ge, self.gf))
            return
        # NumPy: the same sums over the ordered entry pairs of each row
        from .jacobian import segment_pairs

        indptr, order, code = self._host
        row = np.repeat(np.arange(m), np.diff(indptr))
        a, b = segment_pairs(row)
        a, b = np.r_[a, b[a != b]], np.r_[b, a[a != b]]       # ordered pairs, both ways
        v = np.asarray(vals)[order]
        ca, cb, p = code[a], code[b], v[a] * v[b]
        N, s_e = self.N, self.s_e
        ff, fe = (ca < N) & (cb < N), (ca < N) & (cb >= N)
        ee = (ca >= N) & (cb >= N)
        np.add.at(self.U.reshape(-1), ca[ff] * N + cb[ff], p[ff])
        np.add.at(self.Wt.reshape(-1), (cb[fe] - N) * N + ca[fe], p[fe])
        e1, e2 = ca[ee] - N, cb[ee] - N
        np.add.at(self.V.reshape(-1), (e1 // s_e) * s_e * s_e + (e1 % s_e) * s_e + e2 % s_e,
                  p[ee])
        rr = np.asarray(r)[row]
        f = code < N
        np.add.at(self.gf, code[f], -v[f] * rr[f])
        np.add.at(self.ge, code[~f] - N, v[~f] * rr[~f])

    # ----------------------------------------------------------------- solve
    def solve(self, vals, r, d):
        xp = self.xp
        s_e, n_eb, N, n_E = self.s_e, self.n_eb, self.N, self.n_E
        self._accumulate(vals, r)
        dd = d * d
        diag_e = xp.ones(n_E)
        diag_e[self.e_slot] = dd[self.e_col]
        k = xp.arange(s_e)
        self.V[:, k, k] += diag_e.reshape(n_eb, s_e)
        Vinv = xp.linalg.inv(self.V)
        Wt3 = self.Wt.reshape(n_eb, s_e, N)
        Tt = xp.matmul(Vinv, Wt3).reshape(n_E, N)
        S = self.U - self.Wt.T @ Tt
        Vg = xp.matmul(Vinv, self.ge.reshape(n_eb, s_e, 1)).reshape(n_E)
        rhs = self.gf + self.Wt.T @ Vg
        diag_f = xp.ones(N)
        diag_f[self.f_slot] = dd[self.f_col]
        idx = xp.arange(N)
        S[idx, idx] += diag_f
        try:
            L = xp.linalg.cholesky(S)
        except np.linalg.LinAlgError:
            return None
        dxf = _cho_solve(xp, L, rhs)
        acc = (self.Wt @ dxf).reshape(n_eb, s_e, 1)
        dxe = -xp.matmul(Vinv, self.ge.reshape(n_eb, s_e, 1) + acc).reshape(n_E)
        dx = xp.zeros(self.jac.n)
        dx[self.f_col] = dxf[self.f_slot]
        dx[self.e_col] = dxe[self.e_slot]
        return dx if bool(xp.all(xp.isfinite(dx))) else None


def _cho_solve(xp, L, b):
    """x with ``L L^T x = b`` (L lower triangular)."""
    if xp is np:
        from scipy.linalg import solve_triangular
    else:
        from cupyx.scipy.linalg import solve_triangular
    y = solve_triangular(L, b, lower=True)
    return solve_triangular(L.T, y, lower=False)
