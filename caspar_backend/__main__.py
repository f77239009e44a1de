"""Command line: ``caspar demo``, ``caspar bench`` (also ``python -m caspar_backend ...``)."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="caspar", description="caspar: NLP compiler and solver")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="solve a built-in model with caspar and IPOPT, compare")
    d.add_argument("-N", type=int, default=2000, help="shooting intervals (default 2000)")
    d.add_argument("--tol", type=float, default=1e-8, help="IPOPT's tol for both solvers")
    d.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                   help="where caspar runs (auto: the GPU when usable)")
    b = sub.add_parser("bench", help="benchmark caspar against IPOPT on real models "
                       "(needs a source checkout)")
    from .bench import add_arguments

    add_arguments(b)
    args = ap.parse_args(argv)
    if args.cmd == "bench":
        from .bench import cli

        return cli(args)
    if args.cmd == "demo":
        from .demo import run
        from .errors import CasparError

        try:
            return run(N=args.N, tol=args.tol, device=args.device)
        except CasparError as e:  # a user-facing problem (e.g. no GPU): no traceback
            print(f"caspar: {e}", file=sys.stderr)
            return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
