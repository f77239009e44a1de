"""B instances in one kernel call, each on its own workspace row: the CPU batch without
Python per instance (:mod:`caspar_backend.compiled.batch_cpu`; the GPU runs the same loop
body as its grid, :mod:`caspar_backend.compiled.cuda.launch`).

:func:`solve_rows` runs the instances one after the other on the calling thread,
:func:`solve_rows_parallel` spreads them over Numba's native threads (``prange``; as many
as ``numba.set_num_threads`` allows the calling thread).  Both run :func:`solve_row` per
instance, so an instance's answer is the same bit for bit whichever runs it: the rows
share only read-only inputs (offsets, options) and ``Hist``, which a batch passes empty."""
from numba import prange

from ._jit import kernel, parallel_kernel
from .ipm import solve_instance


@kernel
def solve_row(b, Fall, FO, Iall, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters,
              fval):
    """Instance b on rows ``Fall[b]`` (B, LF), ``Iall[b]`` (B, LI) with inputs ``X0[b]``,
    ``LBX[b]``, ... (B, n) / (B, m) and its statistics in ``Outs[b]`` (B, OUT_SIZE);
    ``Hist`` (R, HIST_COLUMNS) is shared (R = 0: no history).  Writes ``code[b]``,
    ``iters[b]``, ``fval[b]`` as :func:`.ipm.solve_instance` returns them."""
    c, it, f = solve_instance(Fall[b], FO, Iall[b], IO, O, X0[b], LBX[b], UBX[b], LBG[b],
                              UBG[b], Hist, Outs[b])
    code[b] = c
    iters[b] = it
    fval[b] = f


@kernel
def solve_rows(Fall, FO, Iall, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters, fval):
    """:func:`solve_row` for b = 0 ... B - 1 in order (B = ``code.shape[0]``)."""
    for b in range(code.shape[0]):
        solve_row(b, Fall, FO, Iall, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters,
                  fval)


@parallel_kernel
def solve_rows_parallel(Fall, FO, Iall, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code,
                        iters, fval):
    """:func:`solve_row` for b = 0 ... B - 1 on Numba's threads (``Hist`` must be empty:
    rows solved at once would interleave their history)."""
    for b in prange(code.shape[0]):
        solve_row(b, Fall, FO, Iall, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters,
                  fval)
