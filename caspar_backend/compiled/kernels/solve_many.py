"""B instances one after the other in one kernel call, each on its own workspace row:
the CPU batch without Python per instance (:mod:`caspar_backend.compiled.batch_cpu`; the
GPU runs the same loop body as its grid, :mod:`caspar_backend.compiled.cuda.launch`)."""
from ._jit import kernel
from .ipm import solve_instance


@kernel
def solve_rows(Fall, FO, Iall, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters, fval):
    """Instance b on rows ``Fall[b]`` (B, LF), ``Iall[b]`` (B, LI) with inputs ``X0[b]``,
    ``LBX[b]``, ... (B, n) / (B, m) and its statistics in ``Outs[b]`` (B, OUT_SIZE);
    ``Hist`` (R, HIST_COLUMNS) is shared (R = 0: no history).  Writes ``code[b]``,
    ``iters[b]``, ``fval[b]`` as :func:`.ipm.solve_instance` returns them."""
    for b in range(code.shape[0]):
        c, it, f = solve_instance(Fall[b], FO, Iall[b], IO, O, X0[b], LBX[b], UBX[b], LBG[b],
                                  UBG[b], Hist, Outs[b])
        code[b] = c
        iters[b] = it
        fval[b] = f
