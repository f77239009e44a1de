"""``python -m benchmarks``: the benchmark runner, the same as ``caspar bench``.

    python -m benchmarks [--suite acopf|cops|ocp|lsq|all] [--min-buses 0] [--max-buses 500]
                         [--cops-scale 1|10|small] [--ocp-N 1000,10000]
                         [--lsq-sizes 1000,10000] [--models NAME,...]
                         [--device cpu|cuda|auto] [--tol 1e-6] [--out benchmarks/out]

See :mod:`caspar_backend.bench` for what is measured and written.
"""

import os
import sys

if __name__ == "__main__":
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:
        sys.path.insert(0, root)
    from caspar_backend.bench import main

    sys.exit(main(prog="python -m benchmarks"))
