"""Batched solves: B instances of one compiled problem in one call.

Entry points: :meth:`caspar_backend.problem.Problem.solve_batch` and
:func:`.solve.solve_batch`; the result type :class:`.result.BatchResult`.
"""
