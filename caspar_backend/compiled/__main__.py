"""``python -m caspar_backend.compiled [--cuda] [--lock FILE]``: compile the CPU kernels
into the cache, or with ``--cuda`` the CUDA batch kernel for this machine's GPU (what
``caspar warmup`` and the background compiles of :mod:`.dispatch` run); prints the
seconds it took.  ``--lock FILE`` is removed at the end, whatever happens."""
from __future__ import annotations

import argparse
import os
import time


def compile_cuda_kernel() -> float:
    """Compile (or load) the CUDA batch kernel ``solve_batch`` launches; seconds taken."""
    from .cuda.group import COLUMNS
    from .cuda.launch import kernel

    t0 = time.perf_counter()
    kernel(COLUMNS)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m caspar_backend.compiled")
    ap.add_argument("--cuda", action="store_true", help="the CUDA batch kernel")
    ap.add_argument("--lock", default=None)
    args = ap.parse_args(argv)
    try:
        if args.cuda:
            print(f"caspar: CUDA batch kernel ready ({compile_cuda_kernel():.1f} s)")
        else:
            from .solve import warmup

            print(f"caspar: compiled kernels ready ({warmup():.1f} s)")
        return 0
    finally:
        if args.lock:
            try:
                os.unlink(args.lock)
            except OSError:
                pass


if __name__ == "__main__":
    raise SystemExit(main())
