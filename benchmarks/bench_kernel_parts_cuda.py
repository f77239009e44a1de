"""Benchmark (issue 22): what one GPU thread takes for each piece of the compiled kernel's
iteration -- the CUDA counterpart of ``profile_kernel_parts.py``.

    python benchmarks/bench_kernel_parts_cuda.py [--problem vdp|ik] [--sizes 1,1000]
        [--reps 20] [--pieces ldl_factor,ldl_solve,...] [--variants FILE.py]

One instance is solved by the CPU kernel (``solve_many.solve_rows``); its workspace at the
solution is copied to B rows of GPU buffers (the batch launch's arrangement: instances in
rows, the int structure shared, :class:`~caspar_backend.compiled.cuda.workspaces.
DeviceWorkspaces`).  For each piece a small global kernel has thread b call the piece's
CUDA device function -- retargeted from the CPU kernel's source, as the batch kernel's
are (:mod:`caspar_backend.compiled.cuda.retarget`) -- ``--reps`` times on row b, one
thread per block.  Printed per (piece, B), as JSON lines: the launch's best time of three
over reps (``us_per_call``: one thread's pace, the launch lasting as long as its slowest
thread) beside the CPU kernel's microseconds per call on one core of this host
(``cpu_us``), and for the factorization the nanoseconds per elimination update
(``ns_per_update``; Van der Pol N = 50: 4,438 updates of 2.4 multiply-adds on average).

Pieces (the kernel's own calls, on their own slots): ``nlp_zeroth`` (f and the
constraints at w, ``ev_zeroth`` inside), ``nlp_first`` (gradient and Jacobian),
``nlp_hess`` (the Lagrangian's Hessian), ``kkt_build`` (K's values and static terms),
``ldl_factor`` (QDLDL's numeric factorization), ``ldl_solve`` (its triangular solves),
``kkt_matvec`` (K x, the refinement's product), ``errors`` (the optimality test's norms),
``slacks``, ``aty`` (J^T y), ``barrier_phi`` (the barrier function at a trial point),
``trial`` (a line-search trial point: the step, f and g there, its measures); mu 0.1 and
the step 0.5 where a piece takes them.

``--variants FILE.py``: a module defining functions with a piece's name and signature
(kernel style: ``_f``/``_i``/``U`` from ``caspar_backend.compiled.kernels._jit``, slot
numbers from ``.slots``).  Each is compiled for the CPU (Numba) and checked to leave the
workspace bit for bit as the piece does, then timed on the GPU beside it (``variant``
true in its lines).  Run from the root of the tree to measure.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())

import numpy as np  # noqa: E402

#: piece -> (module under caspar_backend.compiled.kernels, arguments after Fb, FO, Ib, IO
#: as slot names (float slots' views, '#F_...' a float slot's number, 'O' the option
#: vector, numbers as written))
PIECES = {
    "nlp_zeroth": ("slack_nlp", ("#F_W", "#F_H")),
    "nlp_first": ("slack_nlp", ("F_W", "F_GRAD_W", "F_JV")),
    "nlp_hess": ("slack_nlp", ("F_W", "F_Y")),
    "kkt_build": ("kkt", ("O", 1e-8, 0.0, 0.0)),
    "ldl_factor": ("qdldl", ("F_K_VALUES",)),
    "ldl_solve": ("qdldl", ("F_KKT_RHS", "F_KKT_SOL")),
    "kkt_matvec": ("kkt", ()),
    "errors": ("quantities", ("O", "F_W", "F_Y", "F_ZL", "F_ZU", "F_H", "F_GRAD_W", "F_JV",
                              0.1)),
    "slacks": ("slack_nlp", ("F_W", "F_SL", "F_SU")),
    "aty": ("slack_nlp", ("#F_RHS_W",)),
    "barrier_phi": ("quantities", ("O", 1.0, "#F_W", 0.1)),
    "trial": ("linesearch", ("O", 0.5, "#F_DW", "#F_H_TRIAL", 0.1)),
}


def _global_source(piece: str, args) -> str:
    """The global kernel of ``piece``: thread b calls it ``reps`` times on row b."""
    call = []
    for a in args:
        if a == "O":
            call.append("O")
        elif isinstance(a, str) and a.startswith("#"):
            call.append(f"S.{a[1:]}")
        elif isinstance(a, str):
            call.append(f"_f(Fb, FO, S.{a})")
        else:
            call.append(repr(float(a)))
    return (f"def _run_{piece}(Fall, FO, Ishared, Iscratch, IO, O, reps, out):\n"
            f"    b = cuda.grid(1)\n"
            f"    if b < out.shape[0]:\n"
            f"        Fb = Fall[b]\n"
            f"        Ib = (Ishared, Iscratch[b])\n"
            f"        for r in range(reps):\n"
            f"            {piece}(Fb, FO, Ib, IO, {', '.join(call)})\n"
            f"        out[b] = Fb[0]\n")


def _module_with(functions: dict, name: str):
    """A module ``name`` (registered in sys.modules, as retarget reads a function's
    globals from its module) holding the kernels' accessors, the slots and
    ``functions``."""
    import types

    from numba import cuda

    from caspar_backend.compiled.kernels import _jit
    from caspar_backend.compiled.kernels import slots as S

    mod = types.ModuleType(name)
    mod.__dict__.update(cuda=cuda, S=S, U=_jit.U, _f=_jit._f, _i=_jit._i, **functions)
    sys.modules[name] = mod
    return mod


def _device_piece(fn, inline: bool):
    """The CUDA device version of ``fn`` (a plain Python function in kernel style, or a
    CPU kernel's ``py_func``): out of line (LLVM ``noinline``) as the batch kernel
    compiles the pieces (:data:`..retarget.OUT_OF_LINE_BYTES`), or left to NVVM's inliner
    -- which folds it into the global kernel."""
    from types import FunctionType

    from caspar_backend.compiled.cuda import retarget

    copy = FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                        fn.__closure__)
    copy.__module__ = fn.__module__
    copy.__qualname__ = fn.__qualname__ + ("_inlined" if inline else "_out_of_line")
    if not inline:
        retarget._out_of_line.add((copy.__module__, copy.__qualname__))
    return retarget.device_version(copy, device=True)


def _piece(name: str):
    """The CPU kernel of piece ``name`` (:data:`PIECES`)."""
    import importlib as il

    return getattr(il.import_module(f"caspar_backend.compiled.kernels.{PIECES[name][0]}"),
                   name)


def _globals_for(pieces, mode: str, variant_funcs=None):
    """{piece: CUDA global kernel} calling the piece: ``mode`` 'main' as the batch kernel
    does (the kernel's own device function), 'main_inline' the kernel's source inlined,
    'variant' / 'variant_inline' the variant's (out of line / inlined)."""
    from caspar_backend.compiled.cuda.retarget import device_functions

    if not hasattr(np, "row_stack"):       # as cuda.launch.kernel: numba-cuda <= 0.30
        np.row_stack = np.vstack           # overloads the alias NumPy 2.5 removed
    device_functions()                                  # (retarget's tables built)
    funcs = {}
    for p in pieces:
        cpu = _piece(p)
        if mode == "main":
            funcs[p] = cpu
        elif mode == "main_inline":
            funcs[p] = _device_piece(cpu.py_func, inline=True)
        else:
            funcs[p] = _device_piece(variant_funcs[p], inline=mode == "variant_inline")
    name = f"_caspar_parts_{mode}"
    m = _module_with(funcs, name)
    from caspar_backend.compiled.cuda.retarget import device_version

    out = {}
    for p in pieces:
        code = compile(_global_source(p, PIECES[p][1]), f"<{name}.{p}>", "exec")
        exec(code, m.__dict__)
        fn = m.__dict__[f"_run_{p}"]
        fn.__module__ = name
        out[p] = device_version(fn)
    return out


def _cpu_call(fn, ws, O, piece):
    """Call the CPU version of ``piece`` (``fn``) on row 0 of the NumPy workspaces."""
    from caspar_backend.compiled.kernels import slots as S

    Fb, Ib = ws.Fall[0], ws.Iall[0]
    args = []
    for a in PIECES[piece][1]:
        if a == "O":
            args.append(O)
        elif isinstance(a, str) and a.startswith("#"):
            args.append(getattr(S, a[1:]))
        elif isinstance(a, str):
            k = getattr(S, a)
            args.append(Fb[ws.FO[k]:ws.FO[k + 1]])
        else:
            args.append(float(a))
    return fn(Fb, ws.FO, Ib, ws.IO, *args)


def solved_workspace(problem_name: str):
    """(NumPy workspaces of one instance at its solution, option vector, the CPU
    solve's iterations)."""
    from benchmarks.bench_batch import ik_workload, vdp_workload
    from caspar_backend import from_casadi
    from caspar_backend.batch.inputs import batch_inputs
    from caspar_backend.compiled.cuda.group import group_layout
    from caspar_backend.compiled.kernels.record import HIST_COLUMNS, OUT_SIZE
    from caspar_backend.compiled.kernels.solve_many import solve_rows
    from caspar_backend.compiled.options import option_vector, resolve
    from caspar_backend.compiled.thread_workspaces import ThreadWorkspaces
    from types import SimpleNamespace

    work = vdp_workload(1) if problem_name == "vdp" else ik_workload(1)
    P = from_casadi(work.nlp, **work.args)
    sub = batch_inputs(P, 1, p=work.params)
    lay = group_layout(P, sub)
    O = option_vector(resolve({"print_level": 0})[0]).copy()
    ws = ThreadWorkspaces(lay, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg, 1)
    hist, outs = np.empty((0, HIST_COLUMNS)), np.empty((1, OUT_SIZE))
    code, iters, fval = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)
    solve_rows(*ws.args(slice(0, 1), O, hist, outs, code, iters, fval))
    # the instance's workspace: the calling thread's, as rows of one instance
    row = SimpleNamespace(Fall=ws.Fbuf[:1], Iall=ws.Ibuf[:1], FO=lay.FO, IO=lay.IO)
    return row, O, int(iters[0])


def _xp():
    """CuPy; NumPy under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``: the
    harness's own check on a machine without a GPU)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return np
    import cupy

    return cupy


class SolvedRow:
    """Final.  One instance's workspace at its solution: ``Fb`` float64 (LF,), ``Ib``
    int64 (LI,), the offsets ``FO``, ``IO``, the option vector ``O``, the CPU solve's
    ``iterations`` -- all a GPU run needs (saved by ``--save-workspace``, so a GPU
    machine need not compile the CPU kernels to make it)."""

    def __init__(self, Fb, Ib, FO, IO, O, iterations):
        self.Fb, self.Ib, self.FO, self.IO, self.O = Fb, Ib, FO, IO, O
        self.iterations = int(iterations)

    def save(self, path):
        np.savez(path, Fb=self.Fb, Ib=self.Ib, FO=self.FO, IO=self.IO, O=self.O,
                 iterations=self.iterations)

    @classmethod
    def load(cls, path):
        z = np.load(path)
        return cls(z["Fb"], z["Ib"], z["FO"], z["IO"], z["O"], z["iterations"])


def device_rows(row: SolvedRow, B: int):
    """B copies of the solved row in the batch launch's arrangement on the GPU (as
    :class:`~caspar_backend.compiled.cuda.workspaces.DeviceWorkspaces` with
    ``shared_structure``: ``Fall`` (B, LF), ``Ishared`` the structure, ``Iscratch`` (B,
    LI - LS))."""
    from types import SimpleNamespace

    from caspar_backend.compiled.kernels import slots as S

    cp = _xp()
    LS = int(row.IO[S.I_FIRST_SCRATCH])
    Fall = cp.tile(cp.asarray(row.Fb)[None, :], (B, 1))
    Isc = cp.tile(cp.asarray(row.Ib[LS:])[None, :], (B, 1))
    return SimpleNamespace(B=B, Fall=Fall, Iscratch=Isc, Ishared=cp.asarray(row.Ib[:LS]),
                           FO=cp.asarray(row.FO), IO=cp.asarray(row.IO))


def time_launch(kern, d, O, reps: int, tries: int = 3) -> float:
    """Best seconds of ``tries`` launches (one thread per block) on fresh copies."""
    from numba import cuda

    cp = _xp()
    F0, S0 = d.Fall.copy(), d.Iscratch.copy()
    out = cp.zeros(d.B)
    Od = cp.asarray(O)
    best = np.inf
    for _ in range(tries + 1):                          # the first: compile and warm
        d.Fall[...] = F0
        d.Iscratch[...] = S0
        cuda.synchronize()
        t = time.perf_counter()
        kern[d.B, 1](d.Fall, d.FO, d.Ishared, d.Iscratch, d.IO, Od, reps, out)
        cuda.synchronize()
        best = min(best, time.perf_counter() - t)
    return best


def cpu_us(fn, ws, O, piece, calls: int = 200) -> float:
    """Microseconds per call of the CPU kernel ``fn`` on the solved row (a copy)."""
    F0, I0 = ws.Fall.copy(), ws.Iall.copy()
    _cpu_call(fn, ws, O, piece)
    t = time.perf_counter()
    for _ in range(calls):
        _cpu_call(fn, ws, O, piece)
    us = 1e6 * (time.perf_counter() - t) / calls
    ws.Fall[...], ws.Iall[...] = F0, I0
    return us


def check_variant(piece, main_fn, var_fn, ws, O) -> bool:
    """The variant leaves the workspace and returns as the piece does, bit for bit."""
    F0, I0 = ws.Fall.copy(), ws.Iall.copy()
    r1 = _cpu_call(main_fn, ws, O, piece)
    F1, I1 = ws.Fall.copy(), ws.Iall.copy()
    ws.Fall[...], ws.Iall[...] = F0, I0
    r2 = _cpu_call(var_fn, ws, O, piece)
    same = (np.array_equal(F1.view(np.int64), ws.Fall.view(np.int64))
            and np.array_equal(I1, ws.Iall) and repr(r1) == repr(r2))
    ws.Fall[...], ws.Iall[...] = F0, I0
    return same


def load_variants(path: str) -> dict:
    spec = importlib.util.spec_from_file_location("_caspar_parts_variant_src", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return {p: getattr(mod, p) for p in PIECES if callable(getattr(mod, p, None))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/bench_kernel_parts_cuda.py")
    ap.add_argument("--problem", choices=("vdp", "ik"), default="vdp")
    ap.add_argument("--sizes", default="1,1000")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--pieces", default=",".join(PIECES))
    ap.add_argument("--variants", default=None)
    ap.add_argument("--modes", default="main,main_inline,variant,variant_inline",
                    help="main: the piece as the batch kernel calls it (out of line); "
                         "main_inline: inlined into the timing kernel; variant, "
                         "variant_inline: the variants' (with --variants)")
    ap.add_argument("--cpu-only", action="store_true",
                    help="the CPU timings and the variants' check, no GPU")
    ap.add_argument("--save-workspace", default=None,
                    help="write the solved row (.npz) and stop: for --workspace")
    ap.add_argument("--workspace", default=None,
                    help="time on this saved row: no CPU solve, no CPU timings or checks")
    a = ap.parse_args(argv)
    from numba import njit

    pieces = [p for p in a.pieces.split(",") if p]
    variants = load_variants(a.variants) if a.variants else {}
    if a.workspace:
        row = SolvedRow.load(a.workspace)
        return _time_all(a, pieces, variants, row, {})
    ws, O, iters = solved_workspace(a.problem)
    row = SolvedRow(ws.Fall[0].copy(), ws.Iall[0].copy(), ws.FO, ws.IO, O, iters)
    if a.save_workspace:
        row.save(a.save_workspace)
        return 0
    main_fns = {p: _piece(p) for p in pieces}
    cpu_var = {}
    for p, fn in variants.items():
        if p in pieces:
            # the kernels' flags (_jit.kernel) but no disk cache for a loaded file
            cpu_var[p] = njit(nogil=True, _nrt=False, error_model="numpy")(fn)
            same = check_variant(p, main_fns[p], cpu_var[p], ws, O)
            print(json.dumps({"variant_check": p, "bit_for_bit": same}), flush=True)
    cpu = {p: cpu_us(main_fns[p], ws, O, p) for p in pieces}
    cpu.update({("v", p): cpu_us(f, ws, O, p) for p, f in cpu_var.items()})
    if a.cpu_only:
        print(json.dumps({"problem": a.problem, "cpu_us": {str(k): round(v, 3)
                                                           for k, v in cpu.items()}}))
        return 0
    return _time_all(a, pieces, variants, row, cpu)


def _time_all(a, pieces, variants, row: SolvedRow, cpu: dict) -> int:
    """Each piece in each mode at each size: one JSON line (module doc)."""
    from caspar_backend.compiled.kernels import slots as S

    n_upd = int(row.Ib[row.IO[S.I_LDL_ROW_PTR]:row.IO[S.I_LDL_ROW_PTR + 1]][-1])
    modes = [m for m in a.modes.split(",") if m and (variants or not m.startswith("var"))]
    kernels = {m: _globals_for([p for p in pieces if not m.startswith("var")
                                or p in variants], m, variants) for m in modes}
    for B in (int(s) for s in a.sizes.split(",")):
        d = device_rows(row, B)
        for p in pieces:
            for mode in modes:
                k = kernels[mode].get(p)
                if k is None:
                    continue
                s = time_launch(k, d, row.O, a.reps)
                key = ("v", p) if mode.startswith("var") else p
                out = {"problem": a.problem, "piece": p, "B": B, "mode": mode,
                       "us_per_call": round(1e6 * s / a.reps, 2),
                       "cpu_us": round(cpu[key], 3) if key in cpu else None,
                       "solve_iterations": row.iterations}
                if p == "ldl_factor":
                    out["ns_per_update"] = round(1e9 * s / a.reps / max(n_upd, 1), 1)
                print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
