"""caspar's benchmark suite (issue 7): real models (:mod:`benchmarks.models`) and the
runner, ``python -m benchmarks`` (the same as ``caspar bench``, see
:mod:`caspar_backend.bench`)."""
