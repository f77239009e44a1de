"""B instances in one kernel call without Python per instance: the CPU batch
(:mod:`caspar_backend.compiled.batch_cpu`).  The GPU runs the same solve per instance as
its grid, on a workspace row per instance (:mod:`caspar_backend.compiled.cuda.launch`).

On the CPU an instance's workspace lives only while it is solved.  Each thread that runs
instances owns one float workspace and one int array (rows ``t`` of ``Fbuf`` (NT, LF) and
``Ibuf`` (NT, LI), ``t`` the thread's Numba id; the calling thread alone is ``t = 0``).
Instance b, on thread t:

1. ``Fbuf[t] = Fb0`` (the layout's float template); ``Ibuf[t]`` = ``Ib0``: in full at
   the thread's first instance of the call (``ready[t]`` then set), afterwards only the
   scratch slots ``Ib0[IO[I_FIRST_SCRATCH]:]`` -- no solve writes the structure before them;
2. the float slots numbered ``put`` (k,) take row b of ``In`` (B, sum of their sizes),
   slot after slot (the parameters, a warm start's multipliers);
3. :func:`.ipm.solve_instance` from ``X0[b]`` with bounds ``LBX[b]`` ... (B, n') / (B, m');
4. row b of ``Kept`` (B, sum of sizes) takes the float slots numbered ``keep``, slot after
   slot (what the result is built from), and ``code[b], iters[b], fval[b]`` what the
   solve returned, ``Outs[b]`` (B, OUT_SIZE) its statistics.

So each instance starts from exactly the values a fresh copy of the template would hold
(as the GPU's rows and a single solve's buffer do), its answer does not depend on which
thread or call solved it, and a batch's memory is NT workspaces, not B: Van der Pol
collocation N = 50 holds 62,045 floats and 79,024 ints per workspace, 1.1 GB for
1,000 instances as rows.  ``Ib0`` is the caller's copy of the template: a deadline sets its
stop slot with the threads' (:mod:`caspar_backend.compiled.deadline`), so that an
instance started later stops at its first test.  ``Hist`` (R, HIST_COLUMNS) is shared
(R = 0: no history; a parallel call must pass it empty).
"""
from numba import get_thread_id, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._jit import _f, kernel, parallel_kernel
from .ipm import solve_instance
from .slots import I_FIRST_SCRATCH


@kernel
def solve_pooled(b, t, Fb0, FO, Ib0, IO, Fbuf, Ibuf, ready, put, In, keep, Kept, O, X0,
                 LBX, UBX, LBG, UBG, Hist, Outs, code, iters, fval):
    """Instance b on thread t's workspace (module doc, steps 1-4)."""
    Fb = Fbuf[t]
    Ib = Ibuf[t]
    for q in range(Fb0.shape[0]):
        Fb[q] = Fb0[q]
    first = IO[I_FIRST_SCRATCH] if ready[t] == 1 else 0
    ready[t] = 1
    for q in range(first, Ib0.shape[0]):
        Ib[q] = Ib0[q]
    j = 0
    for s in range(put.shape[0]):
        dst = _f(Fb, FO, put[s])
        for q in range(dst.shape[0]):
            dst[q] = In[b, j]
            j += 1
    c, it, f = solve_instance(Fb, FO, Ib, IO, O, X0[b], LBX[b], UBX[b], LBG[b], UBG[b],
                              Hist, Outs[b])
    j = 0
    for s in range(keep.shape[0]):
        src = _f(Fb, FO, keep[s])
        for q in range(src.shape[0]):
            Kept[b, j] = src[q]
            j += 1
    code[b] = c
    iters[b] = it
    fval[b] = f


@kernel
def solve_rows(Fb0, FO, Ib0, IO, Fbuf, Ibuf, ready, put, In, keep, Kept, O, X0, LBX, UBX,
               LBG, UBG, Hist, Outs, code, iters, fval):
    """Instances b = 0 ... B - 1 in order on the calling thread, workspace 0
    (B = ``code.shape[0]``)."""
    for b in range(code.shape[0]):
        solve_pooled(b, 0, Fb0, FO, Ib0, IO, Fbuf, Ibuf, ready, put, In, keep, Kept, O, X0,
                     LBX, UBX, LBG, UBG, Hist, Outs, code, iters, fval)


@intrinsic
def fetch_add(typingctx, counter, value):
    """``counter[0] += value`` as one atomic step (sequentially consistent, LLVM's
    ``atomicrmw add``); returns ``counter[0]`` before it.  ``counter`` a 1-d int64 array,
    ``value`` an integer."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64
            and isinstance(value, types.Integer)):
        return None
    sig = types.int64(counter, value)

    def codegen(context, builder, signature, args):
        arr_t = signature.args[0]
        arr = context.make_array(arr_t)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, arr_t, arr,
                                       [context.get_constant(types.intp, 0)])
        v = context.cast(builder, args[1], signature.args[1], types.int64)
        return builder.atomic_rmw("add", ptr, v, "seq_cst")

    return sig, codegen


@parallel_kernel
def solve_rows_shared(counter, threads, Fb0, FO, Ib0, IO, Fbuf, Ibuf, ready, put, In, keep,
                      Kept, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters, fval):
    """Instances b = 0 ... B - 1 on Numba's threads, handed out one at a time: each
    thread takes the next instance not yet taken (``counter[0]``, 0 on entry, advanced
    by :func:`fetch_add`) whenever its last one is done, on its thread's workspace.  So a
    call lasts about its instances' work spread evenly, or its longest instance --
    not, as with a static share per thread, its slowest share (IK: 16 iterations an
    instance on average, up to 68).  One loop index per thread of the call: ``threads``,
    the call's Numba thread count (``numba.get_num_threads()`` inside a kernel would keep
    it from Numba's cache); ``Fbuf``, ``Ibuf`` and ``ready`` need a row per Numba thread
    id."""
    B = code.shape[0]
    for _ in prange(threads):
        t = get_thread_id()
        b = fetch_add(counter, 1)
        while b < B:
            solve_pooled(b, t, Fb0, FO, Ib0, IO, Fbuf, Ibuf, ready, put, In, keep, Kept, O,
                         X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters, fval)
            b = fetch_add(counter, 1)
