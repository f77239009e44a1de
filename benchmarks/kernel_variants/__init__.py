"""Candidate rewrites of the compiled kernels' pieces, timed on the GPU beside the pieces
themselves by ``benchmarks/bench_kernel_parts_cuda.py --variants FILE`` (each checked
there to leave the workspace bit for bit as the piece does on the CPU).  A variant that
pays moves into ``caspar_backend/compiled/kernels``; one that does not is deleted with
its measurement in docs/compiled-ipm-cuda.md."""
