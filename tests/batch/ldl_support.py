"""Matrices and references for the batched LDL^T tests (:mod:`test_ldl`, :mod:`test_ldl_device`).

* :func:`kkt_case`: B augmented KKT matrices of one random pattern, assembled by
  :class:`~caspar_backend.kkt.augmented.AugmentedKKT` itself (so the pattern is the
  solver's), with random W, Sigma > 0 and a chosen delta_c;
* :func:`arm_case`: the same for the three-link-arm inverse kinematics NLP built in
  CasADi and compiled by caspar (real Hessian and Jacobian values);
* :func:`mpc_case`: a banded MPC-like KKT (stage-wise variables and dynamics rows);
* :func:`dense`, :func:`reference_inertia`: the dense matrix of one instance and the
  inertia rule of the batched factorization (QDLDL's scalar operations:
  :mod:`.qdldl_reference`); :func:`csc`, :func:`qdldl_perm`: one instance as qdldl
  takes it, and qdldl's AMD permutation;
* :func:`host_kernels`: ``kernels/batch_ldl.cu`` compiled as C++ for the host, launched
  thread by thread (CuPy's RawKernel call convention; a block kernel's threads at once,
  one host thread each), or None without a C++ compiler.
"""

from __future__ import annotations

import ctypes
import pathlib
import shutil
import subprocess
import threading

import numpy as np

from caspar_backend.kkt import AugmentedKKT
from caspar_backend.linsolve.base import SparseStructure
from caspar_backend.linsolve.qdldl import QDLDLSolver

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _assemble(nw, m, hr, hc, jr, jc, B, fill, eps=0.0):
    """B value rows of the AugmentedKKT of this pattern (static regularization
    ``eps``); ``fill(k, b)`` sets instance b's hess_values, jac_values, sigma, delta_w
    and delta_c on ``k``."""
    k = AugmentedKKT(nw, m, hr, hc, jr, jc, QDLDLSolver(), static_regularization=eps)
    values = np.zeros((B, k.nnz))
    for b in range(B):
        fill(k, b)
        k.build()
        values[b] = k.values
    return k.structure, values


def kkt_case(seed, nx=12, m=5, n_slack=0, B=6, delta_c=1e-2, convex=True, eps=0.0,
             w_density=0.3, a_density=0.3):
    """(structure, values (B, nnz)) of augmented KKT matrices, w = [x (nx), slacks]:
    random lower W on x with its diagonal, A (m, nx) with an entry in every row, and a
    private slack column (coefficient -1, Sigma > 0) for each of the first ``n_slack``
    rows.  ``convex``: W + Sigma positive definite (with delta_c > 0, K is then
    quasi-definite), else an indefinite W.  ``eps``: AugmentedKKT's static
    regularization."""
    rng = np.random.default_rng(seed)
    nw = nx + n_slack
    lo = np.tril(rng.random((nx, nx)) < w_density, -1) | np.eye(nx, dtype=bool)
    hr, hc = np.nonzero(lo)
    a = rng.random((m, nx)) < a_density
    a[np.arange(m), rng.integers(0, nx, m)] = True
    jr, jc = np.nonzero(a)
    jr, jc = np.r_[jr, np.arange(n_slack)], np.r_[jc, nx + np.arange(n_slack)]

    def fill(k, b):
        h = rng.standard_normal(len(hr))
        if convex:              # diagonally dominant: W positive definite
            off, dg = hr != hc, hr == hc
            row_sum = (np.bincount(hr[off], np.abs(h[off]), nx)
                       + np.bincount(hc[off], np.abs(h[off]), nx))
            h[dg] = row_sum[hr[dg]] + 1.0
        k.hess_values[:] = h
        k.jac_values[:] = np.r_[rng.standard_normal(len(jr) - n_slack), -np.ones(n_slack)]
        k.sigma[:] = np.r_[rng.random(nx) * convex, rng.uniform(0.1, 10.0, n_slack)]
        k.delta_c = delta_c
    return _assemble(nw, m, hr, hc, jr, jc, B, fill, eps)


def arm_problem():
    """The three-link planar arm: angles q (3), target p (2); minimize the squared
    distance of the hand to p plus 1e-3 |q|^2, with the elbow above the floor
    (l0 sin q0 >= 0: an inequality, so one slack).  A caspar Problem."""
    import casadi as ca

    from caspar_backend.adapters.casadi.nlp import from_casadi

    q, p = ca.SX.sym("q", 3), ca.SX.sym("p", 2)
    lens = (1.0, 0.8, 0.5)
    a = ca.cumsum(q)
    hx = sum(lens[i] * ca.cos(a[i]) for i in range(3))
    hy = sum(lens[i] * ca.sin(a[i]) for i in range(3))
    f = (hx - p[0]) ** 2 + (hy - p[1]) ** 2 + 1e-3 * ca.sumsqr(q)
    nlp = dict(x=q, p=p, f=f, g=lens[0] * ca.sin(q[0]))
    return from_casadi(nlp, x0=[0.3, 0.2, 0.1], lbg=[0.0], ubg=[np.inf], p=[1.0, 1.0])


def arm_case(seed, B=8, delta_c=0.0):
    """(structure, values): the arm's augmented KKT (w = [q, s], one row g(q) - s) at B
    random points, multipliers and barrier terms, with its real derivative values."""
    rng = np.random.default_rng(seed)
    prob = arm_problem()
    ev = prob.evaluator("cpu")
    n = prob.n
    hr, hc = np.asarray(ev.hess_rows), np.asarray(ev.hess_cols)
    jr = np.r_[np.asarray(ev.jac_rows), 0]           # the slack's entry -1
    jc = np.r_[np.asarray(ev.jac_cols), n]
    hv, jv = np.zeros(len(hr)), np.zeros(len(jr) - 1)

    def fill(k, b):
        x = rng.uniform(-np.pi, np.pi, n)
        ev.hess_values(x, rng.uniform(-1, 1, 1), 1.0, hv)
        ev.jac_values(x, jv)
        k.hess_values[:] = hv
        k.jac_values[:] = np.r_[jv, -1.0]
        k.sigma[:] = np.r_[np.zeros(n), rng.uniform(0.1, 10.0)]   # the slack's bound
        k.delta_w = 1e-4 * (b % 2)
        k.delta_c = delta_c
    return _assemble(n + 1, 1, hr, hc, jr, jc, B, fill)


def mpc_case(seed, T=90, nx=4, nu=2, B=4):
    """(structure, values): a banded MPC-like KKT, N = T (nx + nu + nx): per stage t the
    variables (x_t, u_t) with a dense stage Hessian, and the dynamics row block
    x_{t+1} - A x_t - B u_t (the last stage's x_{t+1} is its own terminal variable);
    interleaved stage by stage, so the bandwidth is ~2 (nx + nu).  delta_c = 1e-8."""
    rng = np.random.default_rng(seed)
    nz = nx + nu
    nw, m = T * nz + nx, T * nx
    hr, hc, jr, jc = [], [], [], []
    for t in range(T + 1):
        s = t * nz
        size = nz if t < T else nx
        r, c = np.tril_indices(size)
        hr.append(s + r)
        hc.append(s + c)
    for t in range(T):
        rows = t * nx + np.arange(nx)
        dense_r, dense_c = np.meshgrid(rows, t * nz + np.arange(nz), indexing="ij")
        jr += [dense_r.ravel(), rows]
        jc += [dense_c.ravel(), (t + 1) * nz + np.arange(nx)]
    hr, hc, jr, jc = (np.concatenate(v) for v in (hr, hc, jr, jc))

    def fill(k, b):
        h = 0.1 * rng.standard_normal(len(hr))
        h[hr == hc] += 2.0
        k.hess_values[:] = h
        k.jac_values[:] = rng.standard_normal(len(jr))
        k.sigma[:] = rng.random(nw)
        k.delta_c = 1e-8
    return _assemble(nw, m, hr, hc, jr, jc, B, fill)


def structure_arrays(s: SparseStructure):
    """(rows, cols) int64 of every structure entry (upper triangle, CSC order)."""
    return s.indices, np.repeat(np.arange(s.n), np.diff(s.indptr))


def dense(s: SparseStructure, v) -> np.ndarray:
    """The full symmetric N x N matrix of one instance's values (nnz,)."""
    r, c = structure_arrays(s)
    K = np.zeros((s.n, s.n))
    K[r, c] = v
    K[c, r] = v
    return K


def csc(s: SparseStructure, v):
    """One instance's upper triangle as a SciPy CSC matrix (int32 indices, as the
    single path's QDLDLSolver builds it)."""
    import scipy.sparse as sp

    return sp.csc_matrix((v, s.indices.astype(np.int32), s.indptr.astype(np.int32)),
                         shape=(s.n, s.n))


def qdldl_perm(s: SparseStructure, values) -> np.ndarray:
    """qdldl's AMD permutation of the pattern (read from the first instance of
    ``values`` (B, nnz) that qdldl factorizes; AMD reads only the pattern)."""
    import qdldl

    for v in values:
        try:
            return np.asarray(qdldl.Solver(csc(s, v), upper=True).factors()[2], np.int64)
        except Exception:           # a zero pivot: try the next instance
            continue
    raise AssertionError("qdldl factorizes no instance")


def reference_inertia(d):
    """(pos, neg, zero) of pivots d in elimination order, counting stopped at the first
    pivot that is 0 or not finite."""
    bad = ~np.isfinite(d) | (d == 0)
    first = int(np.argmax(bad)) if bad.any() else len(d)
    head = d[:first]
    pos, neg = int((head > 0).sum()), int((head < 0).sum())
    return pos, neg, len(d) - pos - neg


# ------------------------------------------------------------------ host-compiled kernels
_HARNESS = r"""
// kernels/batch_ldl.cu compiled for the host: one call per CUDA thread; the threads of a
// block run at once (one host thread each) where the kernel synchronizes them
#include <pthread.h>
struct caspar_dim3 { unsigned x, y, z; };
static thread_local caspar_dim3 blockIdx, blockDim, threadIdx;
static pthread_barrier_t caspar_barrier;
#define __global__
#define __device__ static inline
#define __shared__ static
static inline void __syncthreads() { pthread_barrier_wait(&caspar_barrier); }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
#include "batch_ldl.cu"
extern "C" void caspar_set_thread(unsigned block, unsigned dim, unsigned thread) {
    blockIdx.x = block; blockDim.x = dim; threadIdx.x = thread;
}
extern "C" void caspar_begin_block(unsigned dim) { pthread_barrier_init(&caspar_barrier, 0, dim); }
extern "C" void caspar_end_block() { pthread_barrier_destroy(&caspar_barrier); }
"""


def host_kernels(tmp: pathlib.Path):
    """``{name: launcher}`` of the CUDA kernels compiled by g++ (no FMA contraction),
    each called as ``launcher(grid, block, args)`` like a CuPy RawKernel; None without
    g++."""
    gxx = shutil.which("g++")
    if gxx is None:
        return None
    src = tmp / "harness.cpp"
    src.write_text(_HARNESS)
    lib = tmp / "batch_ldl_host.so"
    subprocess.run([gxx, "-O1", "-ffp-contract=off", "-shared", "-fPIC", "-pthread",
                    f"-I{ROOT / 'kernels'}", str(src), "-o", str(lib)], check=True)
    so = ctypes.CDLL(str(lib))

    def launcher(name):
        fn = getattr(so, name)

        def launch(grid, block, args):
            conv = []
            for a in args:
                if isinstance(a, np.ndarray):
                    assert a.flags.c_contiguous
                    conv.append(ctypes.c_void_p(a.ctypes.data))
                elif isinstance(a, np.int64):
                    conv.append(ctypes.c_longlong(int(a)))
                elif isinstance(a, np.int32):
                    conv.append(ctypes.c_int(int(a)))
                else:
                    raise TypeError(f"unexpected kernel argument {type(a)}")
            for blk in range(grid[0]):
                if not name.endswith("_blk"):
                    for t in range(block[0]):
                        so.caspar_set_thread(blk, block[0], t)
                        fn(*conv)
                    continue
                # a block kernel's threads meet at __syncthreads: run them at once
                # (ctypes releases the GIL during the calls)
                so.caspar_begin_block(block[0])

                def thread(t, blk=blk):
                    so.caspar_set_thread(blk, block[0], t)
                    fn(*conv)
                threads = [threading.Thread(target=thread, args=(t,))
                           for t in range(block[0])]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
                so.caspar_end_block()
        return launch

    from caspar_backend.batch.ldl_device import KERNELS

    return {name: launcher(name) for name in KERNELS}
