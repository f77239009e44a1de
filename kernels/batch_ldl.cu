// Batched LDL^T without pivoting over one sparsity pattern: one thread per instance.
//
// Every kernel loops over op tables built once on the host
// (caspar_backend/batch/ldl_symbolic.py), so this one compiled module serves any pattern.
// Factor and work arrays are row-major (rows, B): element (r, b) at r * B + b, so the
// threads of a warp (consecutive b) read consecutive addresses for every op.  The
// caller's values (B, nnz), right-hand sides and vectors (B, n) are C-order rows.
//
// Arithmetic goes through __dmul_rn / __dadd_rn / __dsub_rn / __ddiv_rn (never fused
// into an FMA) in QDLDL's order of operations as ldl_symbolic.py states it (the op
// tables are sorted that way), which the NumPy backend (ldl_host.py) follows too: the
// two give the same factors and solutions bit for bit, and QDLDL's.

// P K_b P^T = (I + L) D (I + L)^T for the instances b = active[i], i < n_active.
// T: the values s before the scaling by the pivot's reciprocal (T_kc; d_k at pivot
// rows), F: L (L_kc = T_kc * dinv_c; dinv_k = 1 / d_k at pivot rows), both (n_f, B).
// Inertia by Sylvester's law, pivots in elimination order: a pivot that is 0 or not
// finite ends the count (it and every later one count as zero).
extern "C" __global__ void caspar_batch_ldl_factor(
        const double* __restrict__ values, const long long* __restrict__ active,
        const int n_active, const long long B, const long long nnz, const long long n,
        const long long n_f, const long long* __restrict__ a_src,
        const long long* __restrict__ op_ptr, const long long* __restrict__ op_t,
        const long long* __restrict__ op_l, const long long* __restrict__ pivot_row,
        const long long* __restrict__ elim_diag_row, double* __restrict__ T,
        double* __restrict__ F, long long* __restrict__ n_pos,
        long long* __restrict__ n_neg, long long* __restrict__ n_zero) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_active) return;
    const long long b = active[i];
    const double* a = values + b * nnz;
    for (long long t = 0; t < n_f; ++t) {
        const long long e = a_src[t];          // the entry of K at this row, -1 for fill
        double s = e >= 0 ? a[e] : 0.0;
        for (long long u = op_ptr[t]; u < op_ptr[t + 1]; ++u)
            s = __dsub_rn(s, __dmul_rn(T[op_t[u] * B + b], F[op_l[u] * B + b]));
        T[t * B + b] = s;
        const long long p = pivot_row[t];      // p == t: t is a pivot
        F[t * B + b] = p == t ? __ddiv_rn(1.0, s) : __dmul_rn(s, F[p * B + b]);
    }
    long long pos = 0, neg = 0;
    for (long long k = 0; k < n; ++k) {
        const double d = T[elim_diag_row[k] * B + b];
        // d - d is 0 for a finite d and NaN for +-inf and NaN (no math header needed)
        if (__dsub_rn(d, d) != 0.0 || d == 0.0) break;
        if (d > 0.0) ++pos; else ++neg;
    }
    n_pos[b] = pos;
    n_neg[b] = neg;
    n_zero[b] = n - pos - neg;
}

// x_b = P^T (I + L)^-T D^-1 (I + L)^-1 P rhs_b for b < B; Y (n, B) work, level order.
extern "C" __global__ void caspar_batch_ldl_solve(
        const double* rhs, double* out, const int n_inst,
        const long long B, const long long n, const long long* __restrict__ src,
        const long long* __restrict__ dst, const long long* __restrict__ fw_ptr,
        const long long* __restrict__ fw_row, const long long* __restrict__ fw_pos,
        const long long* __restrict__ diag_row, const long long* __restrict__ bw_ptr,
        const long long* __restrict__ bw_row, const long long* __restrict__ bw_pos,
        const double* __restrict__ F, double* __restrict__ Y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_inst) return;
    const long long b = i;
    const double* c = rhs + b * n;
    for (long long r = 0; r < n; ++r) {          // (I + L) y = P c
        double s = c[src[r]];
        for (long long u = fw_ptr[r]; u < fw_ptr[r + 1]; ++u)
            s = __dsub_rn(s, __dmul_rn(Y[fw_pos[u] * B + b], F[fw_row[u] * B + b]));
        Y[r * B + b] = s;
    }
    for (long long r = 0; r < n; ++r)            // z = y * dinv
        Y[r * B + b] = __dmul_rn(Y[r * B + b], F[diag_row[r] * B + b]);
    for (long long r = n - 1; r >= 0; --r) {     // (I + L)^T x = z, ancestors first
        double s = Y[r * B + b];
        for (long long u = bw_ptr[r]; u < bw_ptr[r + 1]; ++u)
            s = __dsub_rn(s, __dmul_rn(Y[bw_pos[u] * B + b], F[bw_row[u] * B + b]));
        Y[r * B + b] = s;
    }
    double* o = out + b * n;
    for (long long q = 0; q < n; ++q) o[q] = Y[dst[q] * B + b];
}

// out_b = K_b x_b with K_b's upper triangle (CSC, diagonal last in each column):
// (U x) + (U^T x) - diag(U) x, each product summed in CSC order (as SciPy's csc_matvec
// and csr_matvec do on the host).  W (n, B) holds U x.
extern "C" __global__ void caspar_batch_ldl_matvec(
        const double* __restrict__ values, const double* __restrict__ x,
        double* __restrict__ out, const int n_inst, const long long B, const long long n,
        const long long nnz, const long long* __restrict__ indptr,
        const long long* __restrict__ indices, double* __restrict__ W) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_inst) return;
    const long long b = i;
    const double* v = values + b * nnz;
    const double* xb = x + b * n;
    double* o = out + b * n;
    for (long long r = 0; r < n; ++r) W[r * B + b] = 0.0;
    for (long long j = 0; j < n; ++j) {
        const double xj = xb[j];
        double s = 0.0;
        for (long long e = indptr[j]; e < indptr[j + 1]; ++e) {
            const long long r = indices[e];
            W[r * B + b] = __dadd_rn(W[r * B + b], __dmul_rn(v[e], xj));
            s = __dadd_rn(s, __dmul_rn(v[e], xb[r]));
        }
        o[j] = s;                                // (U^T x)_j, complete after column j
    }
    for (long long j = 0; j < n; ++j)
        o[j] = __dsub_rn(__dadd_rn(W[j * B + b], o[j]), __dmul_rn(v[indptr[j + 1] - 1], xb[j]));
}
