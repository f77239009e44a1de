"""The algorithm's constants, taken from the modules of the general path that define them
(one source of truth; ``compiled.cache.CONSTANT_SOURCES`` puts those files into the cache stamp,
since Numba compiles a global's value into the machine code)."""
from ...kkt.augmented import AugmentedKKT
from ...solver.inertia import (PIVOTING_SWITCH_DELTA_W, RESIDUAL_RATIO_SINGULAR,  # noqa: F401
                               SLOW_REFINEMENT_EPS_FLOOR)
from ...solver.perturbation import (DEGEN_ITERS_MAX, DEGENERATE, NO_TEST,  # noqa: F401
                                    NOT_DEGENERATE, NOT_YET_DETERMINED, TEST_C, TEST_CW,
                                    TEST_NONE, TEST_W)
from ...solver.linesearch import (ALPHA_MIN_FRAC, DELTA, ETA_PHI, G_PHI, G_THETA,  # noqa: F401
                                  S_PHI, S_THETA, TINY_STEP_MAX_THETA)

#: machine epsilon of float64 (np.finfo(float).eps, as solver/linesearch.py and
#: solver/quantities.py use it)
EPS = 2.220446049250313e-16
#: the smallest positive float64 (np.finfo(float).smallest_subnormal, as batch/linesearch.py)
TINY = 5e-324
#: the largest static regularization a zero pivot raises it to (increase_quality)
STATIC_REGULARIZATION_MAX = AugmentedKKT.STATIC_REGULARIZATION_MAX
#: a failed refinement's smaller static term: eps / DECREASE, not below MIN
STATIC_REGULARIZATION_MIN = AugmentedKKT.STATIC_REGULARIZATION_MIN
STATIC_REGULARIZATION_DECREASE = AugmentedKKT.STATIC_REGULARIZATION_DECREASE
#: the kernel's status code for Search_Direction_Becomes_Too_Small (compiled.solve's
#: STATUS_NAMES): a flagged tiny step found mu at its floor
STATUS_TINY_STEP = 7
