"""Pure model transformations: ``model -> model'`` with a way back.

* :func:`parameters_as_variables` turns the parameters into extra variables,
  ``z = (x, p)``, so the same compiler derives derivatives with respect to the
  parameters: ``grad_p f``, ``dg/dp`` and the mixed Lagrangian Hessian
  ``d2L/dx dp`` are blocks of the augmented problem's gradient, Jacobian and
  Hessian (:func:`parametric_derivatives`).  That is what ``lam_p`` and the
  sensitivities ``dx*/dp`` of a solution need.
"""

from __future__ import annotations

import numpy as np

from .blocks import TemplateBlock
from .expr import Graph, Node
from .model import NLPModel
from .rebuild import rebuild


def parameters_as_variables(model: NLPModel) -> NLPModel:
    """The model over ``z = (x, p)``: parameter k becomes variable ``n + k``, fixed at
    its current value by its bounds (so the model is still a valid NLP)."""
    n = model.n
    g = Graph()

    def leaf(v: Node) -> Node:
        if v.op == "var":
            return g.var(v.attr)
        if v.op == "param":
            return g.var(n + v.attr)
        return g.const(v.attr)

    obj, *cons = rebuild([model.objective, *model.constraints], g, leaf)
    p = model.p
    return NLPModel(
        g, obj, cons,
        lbx=np.concatenate([model.lbx, p]), ubx=np.concatenate([model.ubx, p]),
        lbg=model.lbg, ubg=model.ubg, x0=np.concatenate([model.x0, p]), p=None,
        var_names=list(model.var_names) + list(model.param_names),
        con_names=list(model.con_names), sense=model.sense, source=model.source,
        constraint_blocks=[_block_params_as_vars(b, n) for b in model.constraint_blocks],
        objective_blocks=[_block_params_as_vars(b, n) for b in model.objective_blocks],
        constraint_rows=model.constraint_rows, n_rows=model.m)


def _block_params_as_vars(block, n: int):
    """The block with parameter slot j as variable slot k + j (global n + index)."""
    k = block.var_table.shape[0]
    t = Graph()
    images = {"var": lambda v: t.var(v.attr), "param": lambda v: t.var(k + v.attr),
              "data": lambda v: t.data(v.attr), "const": lambda v: t.const(v.attr)}
    (root,) = rebuild([block.root], t, lambda v: images[v.op](v))
    vt = np.vstack([block.var_table, block.param_table + n])
    return TemplateBlock(t, root, vt, None, block.data_table, block.rows, block.name)


def parametric_derivatives(augmented_problem, n: int, x, p, lam_g, obj_factor=1.0) -> dict:
    """Parameter blocks at ``(x, p)`` from a problem built on
    :func:`parameters_as_variables`:

    * ``grad_p``   (n_p,)        d f / d p
    * ``jac_p``    (m, n_p)      d g / d p            (scipy.sparse CSR)
    * ``hess_xp``  (n, n_p)      d2 L / dx dp         (scipy.sparse CSR)
    * ``lam_p``    (n_p,)        d L / d p = obj_factor grad_p + jac_p^T lam_g

    with ``L = obj_factor f + lam_g^T g``.
    """
    # an evaluator of its own: callers may run in several threads at once
    ev = augmented_problem.evaluator("cpu", p=augmented_problem.p)
    z = np.concatenate([np.asarray(x, float), np.asarray(p, float)])
    lam_g = np.asarray(lam_g, float)
    grad = ev.grad(z)
    jac = ev.jac(z).tocsc()
    hess = ev.hess(z, lam_g, obj_factor).tocsc()
    grad_p = grad[n:]
    jac_p = jac[:, n:].tocsr()
    lam_p = obj_factor * grad_p + jac_p.T @ lam_g
    return {"grad_p": grad_p, "jac_p": jac_p, "hess_xp": hess[:n, n:].tocsr(), "lam_p": lam_p}
