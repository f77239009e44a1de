"""``python -m caspar_backend.compiled [--cuda | --cuda-prebuild CC] [--lock FILE]``:
compile the CPU kernels into the cache, or with ``--cuda`` the CUDA batch kernel for this
machine's GPU (what ``caspar warmup`` and the background compiles of :mod:`.dispatch`
run), or with ``--cuda-prebuild 90`` the CUDA batch kernels for compute capability 9.0 on
a machine without a GPU (the CUDA toolkit's NVVM and ptxas; :mod:`.cuda.prebuilt`: copy
the cache to the GPU machine); prints the seconds it took.  ``--lock FILE`` is removed at
the end, whatever happens."""
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


def _compute_capability(ap, text: str) -> tuple[int, int]:
    """'90' or '9.0' -> (9, 0); anything else is a usage error."""
    major, _, minor = text.partition(".") if "." in text else (text[:-1], "", text[-1:])
    if not (major.isdigit() and minor.isdigit()):
        ap.error(f"--cuda-prebuild: a compute capability such as 90 or 9.0, got {text!r}")
    return int(major), int(minor)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m caspar_backend.compiled")
    ap.add_argument("--cuda", action="store_true", help="the CUDA batch kernel")
    ap.add_argument("--cuda-prebuild", metavar="CC", default=None,
                    help="the CUDA batch kernels for compute capability CC (e.g. 90), "
                         "without a GPU")
    ap.add_argument("--cuda-pattern", metavar="FILE", default=None,
                    help="the CUDA batch kernel linked for the pickled layout FILE's "
                         "pattern (this machine's GPU)")
    ap.add_argument("--lock", default=None)
    args = ap.parse_args(argv)
    try:
        if args.cuda_pattern:
            from .cuda.cache import capability_pair
            from .cuda.patterns import build_from_file

            seconds = build_from_file(args.cuda_pattern, capability_pair())
            print(f"caspar: CUDA pattern kernel ready ({seconds:.1f} s)")
        elif args.cuda_prebuild:
            cc = _compute_capability(ap, args.cuda_prebuild)
            from .cuda.offline import prebuild

            t0 = time.perf_counter()
            for p in prebuild(cc):
                print(f"caspar: {p}")
            print(f"caspar: CUDA batch kernels for sm_{cc[0]}{cc[1]} prebuilt "
                  f"({time.perf_counter() - t0:.1f} s)")
        elif args.cuda:
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
