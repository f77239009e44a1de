"""The batched evaluator and factorization the lockstep interior point runs on."""

from __future__ import annotations


def make_batch_evaluator(problem, batch_size: int, device: str):
    from .evaluator import BatchEvaluator

    return BatchEvaluator(problem, batch_size, device)


def make_batch_ldl(structure, batch_size: int, xp, perm=None, plan=None, dense=None):
    from .ldl import BatchLDL

    return BatchLDL(structure, batch_size, xp, perm=perm, plan=plan, dense=dense)
