"""Which KKT matrices the qdldl linear solver factorizes densely from the start (a leaf
module: the compiled path asks it too, without importing the solver)."""

#: a K of at least DENSE_KKT_MIN_N rows whose stored upper triangle holds at least this
#: fraction of its N (N + 1) / 2 entries is factorized densely from the start
#: (:func:`dense_kkt`): QDLDL's column-by-column elimination of a dense K is ~10x
#: LAPACK's blocked dsytrf (single shooting's dense Hessian, N = 1000: 0.23 s against
#: ~0.03 s), and Bunch-Kaufman's pivoting is what IPOPT's MUMPS does on such a matrix
DENSE_KKT_FILL = 0.2
#: the sizes of that rule: below, QDLDL's lower overhead wins (measured: a 200-step
#: single shooting solves faster with QDLDL, a 1000-step one 1.6x faster densely);
#: above, the dense matrix's memory (8 N^2 bytes) and O(N^3) work
DENSE_KKT_MIN_N = 500
DENSE_KKT_MAX_N = 3000
#: a K of at most this many rows is factorized with Bunch-Kaufman pivoting and no
#: static term, as IPOPT's MUMPS factorizes every K (:func:`small_pivoting`)
SMALL_PIVOTING_MAX_N = 48


def dense_kkt(n: int, nnz_upper: int) -> bool:
    """Whether a K of ``n`` rows with ``nnz_upper`` stored upper-triangle entries is
    factorized densely (Bunch-Kaufman) from the start: DENSE_KKT_MIN_N <= n <=
    DENSE_KKT_MAX_N and nnz_upper >= DENSE_KKT_FILL n (n + 1) / 2.  The compiled path
    (whose kernels factorize with QDLDL only) leaves such systems to this one."""
    return (DENSE_KKT_MIN_N <= n <= DENSE_KKT_MAX_N
            and nnz_upper >= DENSE_KKT_FILL * n * (n + 1) / 2)


def small_pivoting(n: int) -> bool:
    """Whether a K of ``n`` rows is small enough to be factorized densely with
    Bunch-Kaufman pivoting and without a static term from its first factorization
    (``n <= SMALL_PIVOTING_MAX_N``), on every path: the general one, the kernels
    (:mod:`caspar_backend.compiled.kernels.bunch_kaufman`, which the general path calls
    too, so both factorize bit for bit alike) and the CUDA batch."""
    return 0 < n <= SMALL_PIVOTING_MAX_N
