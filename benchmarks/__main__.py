"""``python -m benchmarks``: the benchmark runner (also ``caspar bench`` from a checkout).

    python -m benchmarks [--suite acopf|cops|ocp|lsq|all] [--min-buses 0] [--max-buses 500]
                         [--cops-scale 1|10|small] [--ocp-N 1000,10000]
                         [--lsq-sizes 1000,10000] [--models NAME,...]
                         [--device cpu|cuda|auto] [--tol 1e-6] [--out benchmarks/out]
    python -m benchmarks report [--results benchmarks/results] [--out benchmarks/RESULTS.md]

The first form runs the suites (:mod:`benchmarks.runner`); ``report`` writes
``benchmarks/RESULTS.md`` from the CSVs under ``benchmarks/results/``
(:mod:`benchmarks.report`).
"""

import sys


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["report"]:
        from benchmarks.report import main as report

        return report(argv[1:])
    from benchmarks.runner import main as run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
