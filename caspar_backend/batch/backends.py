"""The batched evaluator and factorization the lockstep interior point runs on."""

from __future__ import annotations


def make_batch_evaluator(problem, batch_size: int, device: str):
    try:
        from .evaluator import BatchEvaluator
    except ImportError:
        from .evaluator_loop import LoopBatchEvaluator as BatchEvaluator
    return BatchEvaluator(problem, batch_size, device)


def make_batch_ldl(structure, batch_size: int, xp):
    try:
        from .ldl import BatchLDL
    except ImportError:
        from .ldl_dense import DenseBatchLDL as BatchLDL
    return BatchLDL(structure, batch_size, xp)
