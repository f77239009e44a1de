"""Tests of batched solves: inputs and results, the batched KKT factorization, the
replicated evaluator, the lockstep interior point against single solves, the service."""
