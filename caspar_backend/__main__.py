"""Command line: ``caspar demo``, ``caspar warmup``, ``caspar bench`` (also ``python -m
caspar_backend ...``), and ``caspar stub.nl -AMPL [option=value ...]``: caspar as an
AMPL solver (:mod:`caspar_backend.ampl.driver`; ``caspar -v`` prints the version).

* ``caspar warmup`` compiles the compiled interior point's kernels for this machine
  (:mod:`caspar_backend.compiled`; otherwise the first small solve starts it in the
  background), with casadi the bulk SX reader's loops (otherwise the first read of an
  SX program of 10^6 instructions or more compiles them, about 5 s), and where a GPU
  and numba-cuda are there the CUDA batch kernel too (minutes; otherwise the first
  ``solve_batch(device='cuda')`` starts it in the background and solves by the
  lockstep path meanwhile); ``caspar warmup --cuda-arch 90`` builds that kernel for a
  GPU of compute capability 9.0 on a machine without one (a container image's build).

* ``caspar demo`` runs :mod:`caspar_backend.adapters.casadi.demo`, imported only then
  (it needs casadi; the core imports neither casadi nor pyomo).
* ``caspar bench ARGS`` runs ``python -m benchmarks ARGS`` from the source checkout this
  package was imported from, in a child process with the checkout first on PYTHONPATH;
  its exit status is passed through.  The benchmark suite is not part of the installed
  package: without a checkout it prints why and exits with status 2.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Optional

NEEDS_CHECKOUT = ("caspar bench needs a source checkout of caspar: the benchmark runner and "
                  "models live in its benchmarks/ package, which the installed package does "
                  "not ship. Run it from a clone (e.g. `cd caspar && python -m benchmarks`).")


def _checkout() -> Optional[str]:
    """The source checkout holding this package, or None: the parent folder of the
    ``caspar_backend`` package when it also holds ``benchmarks/__main__.py``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return root if os.path.isfile(os.path.join(root, "benchmarks", "__main__.py")) else None


def bench(argv: list[str]) -> int:
    """``python -m benchmarks argv`` in the checkout's environment; its exit status."""
    root = _checkout()
    if root is None:
        print(f"caspar: {NEEDS_CHECKOUT}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in (env.get("PYTHONPATH"),) if p])
    return subprocess.call([sys.executable, "-m", "benchmarks", *argv], env=env)


def demo(N: int, tol: float, device: str, batch: int = 1000) -> int:
    from .errors import CasparError

    try:
        from caspar_backend.adapters.casadi.demo import run
    except ModuleNotFoundError as e:
        if e.name != "casadi":
            raise
        print("caspar: caspar demo needs casadi (pip install 'caspar-backend[casadi]')",
              file=sys.stderr)
        return 2
    try:
        return run(N=N, tol=tol, device=device, batch=batch)
    except CasparError as e:  # a user-facing problem (e.g. no GPU): no traceback
        print(f"caspar: {e}", file=sys.stderr)
        return 2


def warmup(cuda_arch: str | None = None) -> int:
    """``caspar warmup``: compile the kernels of :mod:`caspar_backend.compiled`, the
    least-squares loops, with casadi installed the bulk SX reader's loops and, with a
    usable GPU, the general GPU path's kernels (:mod:`caspar_backend.gpu_warmup`) and the
    CUDA batch kernel (with numba-cuda).  ``cuda_arch`` ('90'): also the CUDA batch
    kernels for that compute capability without a GPU (the CUDA toolkit's NVVM and
    ptxas; :mod:`caspar_backend.compiled.cuda.prebuilt`) -- a container image built
    where no GPU is then solves its first GPU batch without compiling."""
    import importlib.util

    from .compiled import available

    if not available():
        print("caspar: caspar warmup needs numba (pip install 'numba>=0.60,<0.70')",
              file=sys.stderr)
        return 2
    from .compiled.__main__ import main as compile_kernels

    rc = compile_kernels([])
    if rc == 0:
        from .lsq.warmup import compiled_loops

        print(f"caspar: the least-squares loops ready ({compiled_loops():.1f} s)")
    if rc == 0 and importlib.util.find_spec("casadi") is not None:
        from .adapters.casadi.warmup import bulk_reader

        print(f"caspar: the bulk SX reader's loops ready ({bulk_reader():.1f} s)")
    if rc == 0 and _gpu_usable(solver=True):
        from .errors import CasparError
        from .gpu_warmup import general_path

        try:
            print(f"caspar: the GPU interior point's kernels ready ({general_path():.1f} s)")
        except CasparError as e:    # the CPU parts are ready; say what the GPU's is
            print(f"caspar: the GPU interior point's kernels: {e}", file=sys.stderr)
            rc = 1
    if rc == 0 and cuda_arch:
        rc = compile_kernels(["--cuda-prebuild", cuda_arch])
    elif rc == 0 and _cuda_kernel_wanted():
        rc = compile_kernels(["--cuda"])
    return rc


def _gpu_usable(solver: bool = False) -> bool:
    """CuPy and a usable device, with ``solver`` also cuDSS
    (:func:`caspar_backend.device.gpu_problem`)."""
    from .device import gpu_problem

    return gpu_problem(solver) is None


def _cuda_kernel_wanted() -> bool:
    """A usable GPU (CuPy and a device) and numba-cuda: the CUDA batch kernel can run."""
    import importlib.util

    return importlib.util.find_spec("numba_cuda") is not None and _gpu_usable()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # the runner owns its options: everything after 'bench' goes to it unparsed
    if argv[:1] == ["bench"]:
        return bench(argv[1:])
    # an AMPL solver's calls (Pyomo's ASL interface runs `caspar -v`, then
    # `caspar stub.nl -AMPL option=value ...`): caspar_backend/ampl/driver.py
    if argv[:1] in (["-v"], ["--version"]):
        from .version import __version__

        print(f"caspar {__version__} (AMPL solver interface: caspar stub.nl -AMPL)")
        return 0
    from .ampl.driver import is_ampl_call

    if argv and is_ampl_call(argv):
        from .ampl.driver import main as ampl_main

        return ampl_main(argv)
    ap = argparse.ArgumentParser(prog="caspar", description="caspar: NLP compiler and solver")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="solve a built-in model with caspar and IPOPT, compare")
    d.add_argument("-N", type=int, default=2000, help="shooting intervals (default 2000)")
    d.add_argument("--tol", type=float, default=1e-8, help="IPOPT's tol for both solvers")
    d.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                   help="where caspar runs (auto: the GPU when usable)")
    d.add_argument("--batch", type=int, default=1000,
                   help="IK targets solved in one batch call (default 1000; 0: skip)")
    w = sub.add_parser("warmup", help="compile the compiled interior point's kernels for "
                                      "this machine now (about a minute, once; needs numba)")
    w.add_argument("--cuda-arch", metavar="CC", default=None,
                   help="also the CUDA batch kernels for compute capability CC (e.g. 90: "
                        "H100, H200) without a GPU; needs numba-cuda and the CUDA toolkit "
                        "(CUDA_HOME), about three minutes")
    sub.add_parser("bench", add_help=False,
                   help="benchmark caspar against IPOPT on real models (needs a source "
                        "checkout; `caspar bench --help` for its options)")
    args = ap.parse_args(argv)
    if args.cmd == "demo":
        return demo(args.N, args.tol, args.device, args.batch)
    if args.cmd == "warmup":
        return warmup(args.cuda_arch)
    return 2


if __name__ == "__main__":
    sys.exit(main())
