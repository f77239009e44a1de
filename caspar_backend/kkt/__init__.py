"""KKT systems of the interior-point method (see :mod:`.base`)."""

from .base import KKTSystem  # noqa: F401
from .augmented import AugmentedKKT  # noqa: F401
from .condensed import CondensedKKT  # noqa: F401
from .elastic import ElasticKKT  # noqa: F401
from .pattern import AugmentedPattern, CondensedPattern

#: the values of the ``kkt_system`` option
KKT_SYSTEMS = ("augmented", "condensed")


def make_kkt_system(name, nlp, linear_solver, xp, n_lowrank=0, max_refinement_steps=10,
                    residual_ratio_max=1e-10, static_regularization=0.0) -> KKTSystem:
    """The KKT system ``name`` (option ``kkt_system``) for the barrier problem ``nlp``
    (:class:`~caspar_backend.solver.nlp.BarrierNLP`: sizes and COO structures).
    'condensed' needs every constraint row to have a slack (w = [x; s; elastic columns],
    see :mod:`.condensed`) and no low-rank block; its factorization needs no static
    regularization.

    The system's pattern (:mod:`.pattern`) and the linear solver's symbolic analysis of
    its structure come from ``nlp.structure`` under the keys ``('kkt', name,
    n_lowrank)`` and ``('linear_solver', name, n_lowrank, solver name)``: functions of
    the problem's structure and of those keys alone, kept for later solves of the
    compiled problem.

    A problem whose last 2m columns are an elastic pair per constraint row
    (``nlp.elastic_pairs``: the restoration phase's) gets the 'augmented' system with
    the pair eliminated (:class:`~.elastic.ElasticKKT`), under the key
    'augmented-elastic' for the original rows and columns alone; 'condensed' condenses
    the pair with the slacks."""
    from ..errors import OptionError

    def symbolic(pattern, key=name):
        return nlp.structure(("linear_solver", key, n_lowrank, linear_solver.name),
                             lambda: linear_solver.symbolic(pattern.structure))

    if name == "augmented" and nlp.elastic_pairs:
        m = nlp.m
        nw, nj = nlp.nw - 2 * m, len(nlp.jac_rows) - 2 * m
        jr, jc = nlp.jac_rows[:nj], nlp.jac_cols[:nj]
        key = "augmented-elastic"
        pattern = nlp.structure(("kkt", key, n_lowrank), lambda: AugmentedPattern(
            nw, m, nlp.hess_rows, nlp.hess_cols, jr, jc, n_lowrank, xp,
            singletons_private=False))
        return ElasticKKT(nw, m, nlp.hess_rows, nlp.hess_cols, jr, jc, linear_solver,
                          n_lowrank=n_lowrank, xp=xp,
                          max_refinement_steps=max_refinement_steps,
                          residual_ratio_max=residual_ratio_max,
                          static_regularization=static_regularization,
                          pattern=pattern, symbolic=symbolic(pattern, key))
    if name == "augmented":
        pattern = nlp.structure(("kkt", name, n_lowrank), lambda: AugmentedPattern(
            nlp.nw, nlp.m, nlp.hess_rows, nlp.hess_cols, nlp.jac_rows, nlp.jac_cols,
            n_lowrank, xp))
        return AugmentedKKT(nlp.nw, nlp.m, nlp.hess_rows, nlp.hess_cols, nlp.jac_rows,
                            nlp.jac_cols, linear_solver, n_lowrank=n_lowrank, xp=xp,
                            max_refinement_steps=max_refinement_steps,
                            residual_ratio_max=residual_ratio_max,
                            static_regularization=static_regularization,
                            pattern=pattern, symbolic=symbolic(pattern))
    if name == "condensed":
        if n_lowrank:
            raise OptionError("kkt_system='condensed' needs hessian_approximation='exact' "
                              "(the L-BFGS block makes the condensed matrix indefinite)")
        pattern = nlp.structure(("kkt", name, 0), lambda: CondensedPattern(
            nlp.nw, nlp.m, nlp.nx, nlp.hess_rows, nlp.hess_cols, nlp.jac_rows,
            nlp.jac_cols, xp))
        return CondensedKKT(nlp.nw, nlp.m, nlp.nx, nlp.hess_rows, nlp.hess_cols,
                            nlp.jac_rows, nlp.jac_cols, linear_solver, xp=xp,
                            max_refinement_steps=max_refinement_steps,
                            residual_ratio_max=residual_ratio_max,
                            pattern=pattern, symbolic=symbolic(pattern))
    raise OptionError(f"unknown kkt_system {name!r}; available: {list(KKT_SYSTEMS)}")
