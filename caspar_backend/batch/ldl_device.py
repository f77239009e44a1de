"""CuPy numeric phases of the batched LDL^T: one CUDA thread, or one block, per instance.

The kernels of ``kernels/batch_ldl.cu`` loop over the op tables of
:mod:`.ldl_symbolic`, copied to the device once here, so one compiled module serves
every pattern.  One launch each for factorize, solve and matvec.  Factor and work
arrays are row-major ``(rows, B)`` (element (r, b) at ``r*B + b``).  The caller's arrays
stay as given, (B, nnz) and (B, n) in C order.

Two launch shapes, chosen by the batch size (:data:`BLOCK_VARIANT_MAX_B`):

* one thread per instance: the threads of a warp are consecutive instances and read
  consecutive addresses at every op -- efficient once the instances fill the GPU;
* one block of :data:`BLOCK_THREADS` threads per instance (``*_blk``): the rows of one
  level of the elimination tree shared among the block's threads, level after level,
  and the product with K one thread per (instance, row) (``*_flat``) -- for the smaller
  batches, where a thread per instance would leave most of the GPU idle while each
  thread walks its instance's chain of dependent loads.

The arithmetic is that of :mod:`.ldl_host` operation for operation (no fused
multiply-add) in both shapes, so the backends give the same numbers bit for bit.
"""
from __future__ import annotations

import numpy as np

from .ldl_symbolic import LDLPlan

#: the kernels of kernels/batch_ldl.cu
KERNEL_FILE = "batch_ldl.cu"
KERNELS = ("caspar_batch_ldl_factor", "caspar_batch_ldl_solve", "caspar_batch_ldl_matvec",
           "caspar_batch_ldl_factor_blk", "caspar_batch_ldl_solve_blk",
           "caspar_batch_ldl_matvec_flat")
#: threads of a block of the ``*_blk`` kernels (their CASPAR_LDL_BLOCK)
BLOCK_THREADS = 64
#: most instances for which the factorization and solves run one block per instance
#: (the ``*_blk`` kernels) rather than one thread per instance: below it a thread per
#: instance leaves the GPU mostly idle, each thread walking a chain of dependent loads.
#: Measured on the H200 (Van der Pol collocation, N = 854, lockstep batch end to end):
#: B = 1,000 0.66 s per block against 0.98-1.03 s per thread; B = 10,000 4.1 s against
#: 3.5 s (there the strided rows of the block shape cost more than the idle lanes)
BLOCK_VARIANT_MAX_B = 4096


def cuda_kernels(cp) -> dict:
    """``{name: kernel}`` for :data:`KERNELS`, compiled once per process; a kernel is
    called as ``kernel(grid, block, args)`` (CuPy's RawKernel convention)."""
    from ..arrays.raw_kernels import raw_kernel

    return {name: raw_kernel(cp, KERNEL_FILE, name) for name in KERNELS}


class DeviceLDL:
    """Final.  The CuPy backend of :class:`~.ldl.BatchLDL` (module doc).

    ``kernels``: the launchable kernels by name (default :func:`cuda_kernels`); any
    callables with RawKernel's ``(grid, block, args)`` convention will do, which lets
    the tests run the same source compiled for the host."""

    THREADS = 128

    def __init__(self, plan: LDLPlan, batch_size: int, xp, kernels=None,
                 per_block: bool | None = None):
        """``per_block``: the ``*_blk`` kernels (one block per instance, level by level)
        for the factorization and the solves; None: when ``batch_size`` is at most
        :data:`BLOCK_VARIANT_MAX_B`.  Both give the same bits."""
        self.plan = pl = plan
        self.xp = xp
        self.B = B = int(batch_size)
        self.per_block = B <= BLOCK_VARIANT_MAX_B if per_block is None else bool(per_block)
        n, n_f = pl.n, pl.n_f
        a_src = np.full(n_f, -1, np.int64)
        a_src[pl.a_row] = np.arange(pl.nnz, dtype=np.int64)
        # diag_row by level-order position: the pivots' reciprocals the solve multiplies
        # by (F's pivot rows)
        tables = dict(a_src=a_src, op_ptr=pl.op_ptr, op_t=pl.op_t, op_l=pl.op_l,
                      pivot_row=pl.pivot_row, elim_diag_row=pl.elim_diag_row,
                      src=pl.src, dst=pl.dst, fw_ptr=pl.fw_ptr, fw_row=pl.fw_row,
                      fw_pos=pl.fw_pos, diag_row=pl.diag_row, bw_ptr=pl.bw_ptr,
                      bw_row=pl.bw_row, bw_pos=pl.bw_pos, indptr=pl.indptr,
                      indices=pl.indices, row_ptr=pl.row_ptr, lev_ptr=pl.lev_ptr,
                      **_upper_rows(pl.indptr, pl.indices))
        # a zero-length device array may have a null pointer: pad every table
        self.t = {k: xp.asarray(np.concatenate([np.asarray(v, np.int64), [0]]))
                  for k, v in tables.items()}
        self.T = xp.zeros(n_f * B)
        self.F = xp.zeros(n_f * B)
        self.Y = xp.zeros(n * B)
        # the thread-per-instance product's work array (the flat product needs none)
        self.W = None if self.per_block else xp.zeros(n * B)
        self.all = xp.arange(B, dtype=xp.int64)
        self.n_pos = xp.zeros(B, xp.int64)
        self.n_neg = xp.zeros(B, xp.int64)
        self.n_zero = xp.full(B, n, xp.int64)
        self.k = kernels if kernels is not None else cuda_kernels(xp)

    def _grid(self, count):
        return ((count + self.THREADS - 1) // self.THREADS,), (self.THREADS,)

    def factorize(self, values, active=None):
        """As :meth:`.ldl_host.HostLDL.factorize`; ``values`` and ``active`` on the
        device."""
        xp, pl, t = self.xp, self.plan, self.t
        values = xp.ascontiguousarray(values, dtype=xp.float64)
        act = self.all if active is None else xp.ascontiguousarray(active, dtype=xp.int64)
        count = int(act.size)
        if count == 0 or pl.n == 0:
            return
        tail = (t["a_src"], t["op_ptr"], t["op_t"], t["op_l"], t["pivot_row"],
                t["elim_diag_row"], self.T, self.F, self.n_pos, self.n_neg, self.n_zero)
        head = (values, act, np.int32(count), np.int64(self.B), np.int64(pl.nnz),
                np.int64(pl.n))
        if self.per_block:
            self.k["caspar_batch_ldl_factor_blk"]((count,), (BLOCK_THREADS,), head + (
                np.int64(pl.n_levels), t["row_ptr"]) + tail)
        else:
            grid, block = self._grid(count)
            self.k["caspar_batch_ldl_factor"](grid, block, head + (np.int64(pl.n_f),) + tail)

    def factor_values(self, b: int):
        """As :meth:`.ldl_host.HostLDL.factor_values` (instance b's column of F and T
        copied to the host)."""
        pl = self.plan
        f = _to_host(self.F.reshape(pl.n_f, self.B)[:, b])
        t = _to_host(self.T.reshape(pl.n_f, self.B)[:, b])
        return f[pl.off_row], t[pl.elim_diag_row]

    def solve(self, rhs, out=None):
        xp, pl, t, B = self.xp, self.plan, self.t, self.B
        rhs = xp.ascontiguousarray(rhs, dtype=xp.float64)
        dest = out if out is not None and out.flags.c_contiguous else xp.empty((B, pl.n))
        if B and pl.n:
            tail = (t["src"], t["dst"], t["fw_ptr"], t["fw_row"], t["fw_pos"],
                    t["diag_row"], t["bw_ptr"], t["bw_row"], t["bw_pos"], self.F, self.Y)
            head = (rhs, dest, np.int32(B), np.int64(B), np.int64(pl.n))
            if self.per_block:
                self.k["caspar_batch_ldl_solve_blk"]((B,), (BLOCK_THREADS,), head + (
                    np.int64(pl.n_levels), t["lev_ptr"]) + tail)
            else:
                grid, block = self._grid(B)
                self.k["caspar_batch_ldl_solve"](grid, block, head + tail)
        if out is not None and dest is not out:
            out[...] = dest
            return out
        return dest

    def matvec(self, values, x, out=None):
        xp, pl, t, B = self.xp, self.plan, self.t, self.B
        values = xp.ascontiguousarray(values, dtype=xp.float64)
        x = xp.ascontiguousarray(x, dtype=xp.float64)
        # the kernel keeps (U^T x) in its output before reading x for the last time:
        # an output that is x itself gets a separate buffer
        direct = out is not None and out.flags.c_contiguous and not _shares(xp, out, x)
        dest = out if direct else xp.empty((B, pl.n))
        if B and pl.n and self.per_block:
            grid, block = self._grid(B * pl.n)
            self.k["caspar_batch_ldl_matvec_flat"](grid, block, (
                values, x, dest, np.int32(B), np.int64(pl.n), t["indptr"], t["indices"],
                t["u_ptr"], t["u_ent"], t["u_col"], np.int64(pl.nnz)))
        elif B and pl.n:
            grid, block = self._grid(B)
            self.k["caspar_batch_ldl_matvec"](grid, block, (
                values, x, dest, np.int32(B), np.int64(B), np.int64(pl.n),
                np.int64(pl.nnz), t["indptr"], t["indices"], self.W))
        if out is not None and not direct:
            out[...] = dest
            return out
        return dest


def _upper_rows(indptr, indices) -> dict:
    """The rows of the upper triangle U given in CSC: ``u_ptr`` (n+1,), and for each row
    its entries' positions in the CSC arrays (``u_ent``) and columns (``u_col``) by
    increasing column."""
    indptr = np.asarray(indptr, np.int64)
    indices = np.asarray(indices, np.int64)
    n = indptr.size - 1
    col = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    ent = np.lexsort((col, indices)).astype(np.int64)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(indices, minlength=n), out=ptr[1:])
    return dict(u_ptr=ptr, u_ent=ent, u_col=col[ent])


def _to_host(a) -> np.ndarray:
    """A NumPy copy of a CuPy array (or of a NumPy array standing in for one)."""
    return a.get() if hasattr(a, "get") else np.array(a)


def _shares(xp, a, b) -> bool:
    """Whether ``a`` and ``b`` may share memory (CuPy and NumPy both have this)."""
    return bool(xp.may_share_memory(a, b))
