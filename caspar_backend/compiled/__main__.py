"""``python -m caspar_backend.compiled [--lock FILE]``: compile the kernels into the
cache (what ``caspar warmup`` and the background compile of :mod:`.dispatch` run); prints
the seconds it took.  ``--lock FILE`` is removed at the end, whatever happens."""
from __future__ import annotations

import argparse
import os


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m caspar_backend.compiled")
    ap.add_argument("--lock", default=None)
    args = ap.parse_args(argv)
    try:
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
