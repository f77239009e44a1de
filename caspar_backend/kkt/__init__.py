"""KKT systems of the interior-point method (see :mod:`.base`)."""

from .base import KKTSystem  # noqa: F401
from .augmented import AugmentedKKT  # noqa: F401
from .condensed import CondensedKKT  # noqa: F401

#: the values of the ``kkt_system`` option
KKT_SYSTEMS = ("augmented", "condensed")


def make_kkt_system(name, nlp, linear_solver, xp, n_lowrank=0, max_refinement_steps=10,
                    residual_ratio_max=1e-10, static_regularization=0.0) -> KKTSystem:
    """The KKT system ``name`` (option ``kkt_system``) for the barrier problem ``nlp``
    (:class:`~caspar_backend.solver.nlp.BarrierNLP`: sizes and COO structures).
    'condensed' needs every constraint row to have a slack (w = [x; s; elastic columns],
    see :mod:`.condensed`) and no low-rank block; its factorization needs no static
    regularization."""
    from ..errors import OptionError

    if name == "augmented":
        return AugmentedKKT(nlp.nw, nlp.m, nlp.hess_rows, nlp.hess_cols, nlp.jac_rows,
                            nlp.jac_cols, linear_solver, n_lowrank=n_lowrank, xp=xp,
                            max_refinement_steps=max_refinement_steps,
                            residual_ratio_max=residual_ratio_max,
                            static_regularization=static_regularization)
    if name == "condensed":
        if n_lowrank:
            raise OptionError("kkt_system='condensed' needs hessian_approximation='exact' "
                              "(the L-BFGS block makes the condensed matrix indefinite)")
        return CondensedKKT(nlp.nw, nlp.m, nlp.nx, nlp.hess_rows, nlp.hess_cols,
                            nlp.jac_rows, nlp.jac_cols, linear_solver, xp=xp,
                            max_refinement_steps=max_refinement_steps,
                            residual_ratio_max=residual_ratio_max)
    raise OptionError(f"unknown kkt_system {name!r}; available: {list(KKT_SYSTEMS)}")
