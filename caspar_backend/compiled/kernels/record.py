"""What a solve records besides its iterate: the iteration history and the final
statistics, in the two float64 arrays the caller passes to ``ipm.solve_instance``.

``Hist`` (R, HIST_COLUMNS): row k is iteration k's line of IPOPT's log, written when
k < R (R = 0 records nothing, as the GPU batch does), columns:

====================  ==============================================================
HIST_OBJECTIVE        f(x) unscaled (the model's sense aside), as the log prints it
HIST_INF_PR           the unscaled constraint violation (max-norm)
HIST_INF_DU           the scaled dual infeasibility (max-norm)
HIST_MU               the barrier parameter
HIST_D_NORM           max-norm of the step that led to this iterate (0 at iteration 0)
HIST_REGULARIZATION   delta_w of that step (0 when none)
HIST_ALPHA_DU         its dual step length
HIST_ALPHA_PR         its primal step length
HIST_LS               its number of line-search trials
HIST_TAG              its tag, an index into :data:`TAGS`
====================  ==============================================================

``Out`` (OUT_SIZE,): the evaluation counts (``OUT_N_OBJ`` .. ``OUT_N_HESS``, as the
general path's ``EvalCounter``) and the last iterate's errors (``OUT_S_*`` scaled,
``OUT_U_*`` unscaled, as ``SolveResult.final_errors``) and ``OUT_N_INVALID``, the number
of trial points where f or g was not finite (the general path logs each: "Cutting back
alpha due to evaluation error").
"""

HIST_OBJECTIVE = 0
HIST_INF_PR = 1
HIST_INF_DU = 2
HIST_MU = 3
HIST_D_NORM = 4
HIST_REGULARIZATION = 5
HIST_ALPHA_DU = 6
HIST_ALPHA_PR = 7
HIST_LS = 8
HIST_TAG = 9
HIST_COLUMNS = 10

#: step tags: none, filter ('f': Armijo under the switching condition, 'h': otherwise),
#: the same after a second-order correction, and the tiny step
TAGS = (" ", "f", "h", "F", "H", "T", "w")
TAG_NONE, TAG_F, TAG_H, TAG_SOC_F, TAG_SOC_H, TAG_TINY, TAG_WATCHDOG = range(7)

OUT_N_OBJ = 0
OUT_N_GRAD = 1
OUT_N_CONS = 2
OUT_N_JAC = 3
OUT_N_HESS = 4
OUT_S_OBJ = 5
OUT_S_DUAL = 6
OUT_S_CONSTR = 7
OUT_S_COMPL = 8
OUT_S_E0 = 9
OUT_U_DUAL = 10
OUT_U_CONSTR = 11
OUT_U_COMPL = 12
OUT_N_INVALID = 13
OUT_SIZE = 14

#: Out's counts, in the order of SolveResult.counts' keys
COUNT_KEYS = ("obj", "grad", "cons", "jac", "hess")
