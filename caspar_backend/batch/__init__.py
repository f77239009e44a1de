"""Batched solves: B instances of one compiled problem in one call.

Entry points: :meth:`caspar_backend.problem.Problem.solve_batch` and
:func:`.solve.solve_batch`; the result type :class:`.result.BatchResult`; the batched
linear algebra of the lockstep interior point: :class:`.ldl.BatchLDL` (B LDL^T
factorizations of one KKT pattern, with inertia); on a Dask cluster
(``solve_batch(..., client=...)``): :mod:`.distributed` (the caller's side) and
:mod:`.chunk` (the workers').
"""
