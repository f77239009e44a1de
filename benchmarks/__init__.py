"""caspar's benchmark suite: real models (:mod:`benchmarks.models`), the runner
(``python -m benchmarks``, :mod:`benchmarks.runner`) and the report generator
(``python -m benchmarks report``, :mod:`benchmarks.report`).  Not part of the installed
package: it runs from a source checkout."""
