"""Slot numbers of the two buffers the kernels read, option and size fields.

A solve's arrays live in two flat buffers (:class:`caspar_backend.compiled.layout.Layout`):

* ``Fb`` float64, with offsets ``FO``: model constants (tape constants, data), the scaled
  problem, the iterate, the KKT values and factors, the filter, scratch.  One per solve
  in flight (per thread).
* ``Ib`` int64, with offsets ``IO``: the structure (group table, tapes, index maps, the
  KKT pattern, QDLDL's permutation and row schedule) and three int scratch slots: the
  filter counters; ``STOP``, which the solve's caller may set to 1 while the kernel
  runs (Ctrl-C, :mod:`caspar_backend.compiled.solve`; read once per iteration: status 4);
  ``TEAM`` = (posted job, lanes), the threads sharing the solve (:mod:`.team`; 1 but in
  the CUDA kernel's team launch).

Float slot ``F_<NAME>`` is ``Fb[FO[F_<NAME>]:FO[F_<NAME> + 1]]``, int slot ``I_<NAME>``
likewise in ``Ib``/``IO``. The numbers are module constants, so Numba compiles them in;
``FLOAT_SLOTS``/``INT_SLOTS`` give the buffer order.
"""

#: float64 slots, in buffer order
FLOAT_SLOTS = (
    'TAPE_CONST', 'DATA_TABLE', 'REGISTERS', 'OBJ_TERMS', 'X', 'P', 'GRAD_BUF', 'CON_TERMS',
    'JAC_RAW', 'ROW_ACC', 'DAMP_L', 'DAMP_U', 'PRIV_NONE', 'G', 'OBJ_SCALE', 'CON_SCALE',
    'G_OFFSET', 'GRAD_F', 'JAC_VALS', 'JAC_SCALE', 'LAMBDA', 'W_LOWER', 'W_UPPER',
    'SLACK_SCALE', 'LBG', 'UBG', 'W', 'Y', 'ZL', 'ZU', 'F_CUR', 'H', 'GRAD_W', 'JV', 'HV',
    'DUAL_RES', 'SL', 'SU', 'SCRATCH', 'SL_TRIAL', 'SU_TRIAL', 'K_VALUES', 'K_STATIC',
    'K_SOURCE', 'EW', 'EC', 'COL_SQ', 'PRIV_SUM', 'KKT_RHS', 'KKT_SOL', 'KKT_RES',
    'KKT_CORR', 'KKT_KX', 'KKT_LOWER', 'C_VALUES', 'L_VALUES', 'LDL_D', 'LDL_DINV',
    'LDL_YVALS', 'LDL_T', 'DW', 'DY', 'DZL', 'DZU', 'GRAD_PHI', 'RHS_W', 'SIGMA', 'RHS_C',
    'W_TRIAL', 'H_TRIAL', 'C_SOC', 'IC_STATE', 'LS_STATE', 'DW_SOC', 'DY_SOC', 'H_SOC',
    'DZL_SOC', 'DZU_SOC', 'GRAD_W_NEW', 'JV_NEW', 'FILTER', 'HESS_RAW', 'LAM_X_FIXED',
    'WD_W', 'WD_Y', 'WD_ZL', 'WD_ZU', 'WD_DW', 'WD_DY', 'WD_DZL', 'WD_DZU', 'WD_GRAD_PHI',
    'WD_STATE', 'RESUME', 'ACCEPTABLE', 'LAM_G0', 'LAM_X0', 'SAVED_MULTS', 'BK_A', 'BK_PIV',
    'BK_MASS', 'TEAM_ARGS', 'TEAM_PARTIALS', 'BARRIER_TERMS',
)
#: int64 slots, in buffer order
INT_SLOTS = (
    'GROUPS', 'TAPE_OP', 'TAPE_ARG', 'TAPE_OUT', 'VAR_TABLE', 'PARAM_TABLE', 'CON_ROWS',
    'GRAD_IDX', 'TERM_ROWS', 'ACC_ROWS', 'JAC_MAP', 'EVAL_SIZES', 'SIZES', 'SLACK_ROWS',
    'EQ_MASK', 'LOWER_IDX', 'UPPER_IDX', 'DAMP_L_IDX', 'DAMP_U_IDX', 'JAC_ROWS', 'JAC_COLS',
    'KKT_MAP', 'HESS_OFFDIAG', 'COL_SQ_IDX', 'PRIV_ENTRY', 'PRIV_COL', 'PRIV_ROW',
    'K_INDPTR', 'K_INDICES', 'K_DIAG_POS', 'C_INDPTR', 'C_INDICES', 'C_MAP', 'PERM',
    'L_INDPTR', 'EQ_ROWS', 'UJAC_ROWS', 'FREE_IDX', 'FIXED_IDX', 'JAC_KEEP', 'HESS_KEEP',
    'EV_JAC_ROWS', 'EV_JAC_COLS', 'L_INDICES', 'LDL_ROW_PTR', 'LDL_ROW_COL', 'LDL_ROW_POS',
    'L_ROW_PTR', 'L_ROW_COL', 'L_ROW_POS', 'BK_MAP', 'K_ROW_PTR', 'K_ROW_COL', 'K_ROW_POS',
    'COL_SQ_PTR', 'COL_SQ_ORDER', 'JAC_ROW_PTR', 'JAC_ROW_ORDER', 'PRIV_ROW_PTR',
    'PRIV_ROW_ORDER', 'KKT_MAP_PTR', 'KKT_MAP_ORDER', 'JAC_COL_PTR', 'JAC_COL_ORDER',
    'FILTER_STATE', 'STOP', 'TEAM',
)
#: the option vector ``O``: the typed option behind each entry (derived: nlp_scaling_method
#: == 'gradient-based', AugmentedKKT.PRIVATE_PIVOT_FRACTION, a warm start's four pushes,
#: the static term of a K factorized with pivoting: kkt_static_regularization if given, else 0)
OPTION_NAMES = (
    'tol', 'dual_inf_tol', 'constr_viol_tol', 'compl_inf_tol', 'acceptable_tol',
    'acceptable_iter', 'mu_init', 'mu_linear_decrease_factor',
    'mu_superlinear_decrease_power', 'barrier_tol_factor', 'tau_min', 'kappa_d',
    'kappa_sigma', 'bound_push', 'bound_frac', 'slack_bound_push', 'slack_bound_frac',
    'bound_relax_factor', 'equality_relax_factor', 'constr_mult_init_max',
    'bound_mult_init_val', 'nlp_scaling_gradient_based', 'nlp_scaling_max_gradient',
    'nlp_scaling_min_value', 'obj_scaling_factor', 'max_refinement_steps',
    'residual_ratio_max', 'kkt_static_regularization', 'first_hessian_perturbation',
    'min_hessian_perturbation', 'max_hessian_perturbation', 'perturb_inc_fact_first',
    'perturb_inc_fact', 'perturb_dec_fact', 'jacobian_regularization_value',
    'jacobian_regularization_exponent', 'theta_max_fact', 'theta_min_fact',
    'alpha_red_factor', 'max_soc', 'kappa_soc', 'obj_max_inc', 'max_filter_resets',
    'filter_reset_trigger', 'watchdog_shortened_iter_trigger', 'slack_move',
    'refinement_contraction_max', 'max_iter', 'diverging_iterates_tol',
    'acceptable_obj_change_tol', 'acceptable_dual_inf_tol', 'acceptable_constr_viol_tol',
    'acceptable_compl_inf_tol', 'private_pivot_fraction', 'watchdog_trial_iter_max',
    'warm_start_init_point', 'warm_start_bound_push', 'warm_start_bound_frac',
    'warm_start_slack_bound_push', 'warm_start_slack_bound_frac',
    'warm_start_mult_bound_push', 'warm_start_mult_init_max', 'tiny_step_tol',
    'tiny_step_y_tol', 'kkt_static_regularization_pivoting',
)
#: the most instances of a group one pass over a tape evaluates (one dispatch per
#: instruction and pass; REGISTERS holds widest tape x EV_CHUNK registers, EV_CHUNK =
#: min(TAPE_CHUNK, largest group, compiled.tape.TAPE_REGISTERS // widest tape), a tape's
#: width the registers its liveness allocation needs)
TAPE_CHUNK = 32
#: fields of the I_SIZES slot
SIZE_FIELDS = (
    'n', 'm', 'nw', 'nx', 'ns', 'nL', 'nU', 'nj', 'nju', 'nh', 'nkkt', 'nnzK', 'nnzL',
    'neq', 'npriv', 'noff', 'nsrc', 'ncolsq', 'filter_cap', 'nfix', 'nje', 'nhe',
    'dense_bk',
)
#: fields of the I_EVAL_SIZES slot
EVAL_SIZE_FIELDS = ('n', 'm', 'nobj', 'ngroups', 'has_jac_map', 'chunk')

# the constants the kernels use (one line each so that grep finds them)
F_TAPE_CONST = 0
F_DATA_TABLE = 1
F_REGISTERS = 2
F_OBJ_TERMS = 3
F_X = 4
F_P = 5
F_GRAD_BUF = 6
F_CON_TERMS = 7
F_JAC_RAW = 8
F_ROW_ACC = 9
F_DAMP_L = 10
F_DAMP_U = 11
F_PRIV_NONE = 12
F_G = 13
F_OBJ_SCALE = 14
F_CON_SCALE = 15
F_G_OFFSET = 16
F_GRAD_F = 17
F_JAC_VALS = 18
F_JAC_SCALE = 19
F_LAMBDA = 20
F_W_LOWER = 21
F_W_UPPER = 22
F_SLACK_SCALE = 23
F_LBG = 24
F_UBG = 25
F_W = 26
F_Y = 27
F_ZL = 28
F_ZU = 29
F_F_CUR = 30
F_H = 31
F_GRAD_W = 32
F_JV = 33
F_HV = 34
F_DUAL_RES = 35
F_SL = 36
F_SU = 37
F_SCRATCH = 38
F_SL_TRIAL = 39
F_SU_TRIAL = 40
F_K_VALUES = 41
F_K_STATIC = 42
F_K_SOURCE = 43
F_EW = 44
F_EC = 45
F_COL_SQ = 46
F_PRIV_SUM = 47
F_KKT_RHS = 48
F_KKT_SOL = 49
F_KKT_RES = 50
F_KKT_CORR = 51
F_KKT_KX = 52
F_KKT_LOWER = 53
F_C_VALUES = 54
F_L_VALUES = 55
F_LDL_D = 56
F_LDL_DINV = 57
F_LDL_YVALS = 58
F_LDL_T = 59
F_DW = 60
F_DY = 61
F_DZL = 62
F_DZU = 63
F_GRAD_PHI = 64
F_RHS_W = 65
F_SIGMA = 66
F_RHS_C = 67
F_W_TRIAL = 68
F_H_TRIAL = 69
F_C_SOC = 70
F_IC_STATE = 71
F_LS_STATE = 72
F_DW_SOC = 73
F_DY_SOC = 74
F_H_SOC = 75
F_DZL_SOC = 76
F_DZU_SOC = 77
F_GRAD_W_NEW = 78
F_JV_NEW = 79
F_FILTER = 80
F_HESS_RAW = 81
F_LAM_X_FIXED = 82
F_WD_W = 83
F_WD_Y = 84
F_WD_ZL = 85
F_WD_ZU = 86
F_WD_DW = 87
F_WD_DY = 88
F_WD_DZL = 89
F_WD_DZU = 90
F_WD_GRAD_PHI = 91
F_WD_STATE = 92
F_RESUME = 93
F_ACCEPTABLE = 94
F_LAM_G0 = 95
F_LAM_X0 = 96
F_SAVED_MULTS = 97
F_BK_A = 98
F_BK_PIV = 99
F_BK_MASS = 100
F_TEAM_ARGS = 101
F_TEAM_PARTIALS = 102
F_BARRIER_TERMS = 103
I_GROUPS = 0
I_TAPE_OP = 1
I_TAPE_ARG = 2
I_TAPE_OUT = 3
I_VAR_TABLE = 4
I_PARAM_TABLE = 5
I_CON_ROWS = 6
I_GRAD_IDX = 7
I_TERM_ROWS = 8
I_ACC_ROWS = 9
I_JAC_MAP = 10
I_EVAL_SIZES = 11
I_SIZES = 12
I_SLACK_ROWS = 13
I_EQ_MASK = 14
I_LOWER_IDX = 15
I_UPPER_IDX = 16
I_DAMP_L_IDX = 17
I_DAMP_U_IDX = 18
I_JAC_ROWS = 19
I_JAC_COLS = 20
I_KKT_MAP = 21
I_HESS_OFFDIAG = 22
I_COL_SQ_IDX = 23
I_PRIV_ENTRY = 24
I_PRIV_COL = 25
I_PRIV_ROW = 26
I_K_INDPTR = 27
I_K_INDICES = 28
I_K_DIAG_POS = 29
I_C_INDPTR = 30
I_C_INDICES = 31
I_C_MAP = 32
I_PERM = 33
I_L_INDPTR = 34
I_EQ_ROWS = 35
I_UJAC_ROWS = 36
I_FREE_IDX = 37
I_FIXED_IDX = 38
I_JAC_KEEP = 39
I_HESS_KEEP = 40
I_EV_JAC_ROWS = 41
I_EV_JAC_COLS = 42
I_L_INDICES = 43
I_LDL_ROW_PTR = 44
I_LDL_ROW_COL = 45
I_LDL_ROW_POS = 46
I_L_ROW_PTR = 47
I_L_ROW_COL = 48
I_L_ROW_POS = 49
I_BK_MAP = 50
I_K_ROW_PTR = 51
I_K_ROW_COL = 52
I_K_ROW_POS = 53
I_COL_SQ_PTR = 54
I_COL_SQ_ORDER = 55
I_JAC_ROW_PTR = 56
I_JAC_ROW_ORDER = 57
I_PRIV_ROW_PTR = 58
I_PRIV_ROW_ORDER = 59
I_KKT_MAP_PTR = 60
I_KKT_MAP_ORDER = 61
I_JAC_COL_PTR = 62
I_JAC_COL_ORDER = 63
I_FILTER_STATE = 64
I_STOP = 65
I_TEAM = 66
#: the first int slot a solve writes (the filter counters, the stop request): every slot
#: before it is structure, read-only, the same for every instance of a layout (the CUDA
#: batch keeps one shared copy of it, cuda/workspaces.py)
I_FIRST_SCRATCH = I_FILTER_STATE
OPT_TOL = 0
OPT_DUAL_INF_TOL = 1
OPT_CONSTR_VIOL_TOL = 2
OPT_COMPL_INF_TOL = 3
OPT_ACCEPTABLE_TOL = 4
OPT_ACCEPTABLE_ITER = 5
OPT_MU_INIT = 6
OPT_MU_LINEAR_DECREASE_FACTOR = 7
OPT_MU_SUPERLINEAR_DECREASE_POWER = 8
OPT_BARRIER_TOL_FACTOR = 9
OPT_TAU_MIN = 10
OPT_KAPPA_D = 11
OPT_KAPPA_SIGMA = 12
OPT_BOUND_PUSH = 13
OPT_BOUND_FRAC = 14
OPT_SLACK_BOUND_PUSH = 15
OPT_SLACK_BOUND_FRAC = 16
OPT_BOUND_RELAX_FACTOR = 17
OPT_EQUALITY_RELAX_FACTOR = 18
OPT_CONSTR_MULT_INIT_MAX = 19
OPT_BOUND_MULT_INIT_VAL = 20
OPT_NLP_SCALING_GRADIENT_BASED = 21
OPT_NLP_SCALING_MAX_GRADIENT = 22
OPT_NLP_SCALING_MIN_VALUE = 23
OPT_OBJ_SCALING_FACTOR = 24
OPT_MAX_REFINEMENT_STEPS = 25
OPT_RESIDUAL_RATIO_MAX = 26
OPT_KKT_STATIC_REGULARIZATION = 27
OPT_FIRST_HESSIAN_PERTURBATION = 28
OPT_MIN_HESSIAN_PERTURBATION = 29
OPT_MAX_HESSIAN_PERTURBATION = 30
OPT_PERTURB_INC_FACT_FIRST = 31
OPT_PERTURB_INC_FACT = 32
OPT_PERTURB_DEC_FACT = 33
OPT_JACOBIAN_REGULARIZATION_VALUE = 34
OPT_JACOBIAN_REGULARIZATION_EXPONENT = 35
OPT_THETA_MAX_FACT = 36
OPT_THETA_MIN_FACT = 37
OPT_ALPHA_RED_FACTOR = 38
OPT_MAX_SOC = 39
OPT_KAPPA_SOC = 40
OPT_OBJ_MAX_INC = 41
OPT_MAX_FILTER_RESETS = 42
OPT_FILTER_RESET_TRIGGER = 43
OPT_WATCHDOG_SHORTENED_ITER_TRIGGER = 44
OPT_SLACK_MOVE = 45
OPT_REFINEMENT_CONTRACTION_MAX = 46
OPT_MAX_ITER = 47
OPT_DIVERGING_ITERATES_TOL = 48
OPT_ACCEPTABLE_OBJ_CHANGE_TOL = 49
OPT_ACCEPTABLE_DUAL_INF_TOL = 50
OPT_ACCEPTABLE_CONSTR_VIOL_TOL = 51
OPT_ACCEPTABLE_COMPL_INF_TOL = 52
OPT_PRIVATE_PIVOT_FRACTION = 53
OPT_WATCHDOG_TRIAL_ITER_MAX = 54
OPT_WARM_START_INIT_POINT = 55
OPT_WARM_START_BOUND_PUSH = 56
OPT_WARM_START_BOUND_FRAC = 57
OPT_WARM_START_SLACK_BOUND_PUSH = 58
OPT_WARM_START_SLACK_BOUND_FRAC = 59
OPT_WARM_START_MULT_BOUND_PUSH = 60
OPT_WARM_START_MULT_INIT_MAX = 61
OPT_TINY_STEP_TOL = 62
OPT_TINY_STEP_Y_TOL = 63
OPT_KKT_STATIC_REGULARIZATION_PIVOTING = 64
SZ_N = 0
SZ_M = 1
SZ_NW = 2
SZ_NX = 3
SZ_NS = 4
SZ_NL = 5
SZ_NU = 6
SZ_NJ = 7
SZ_NJU = 8
SZ_NH = 9
SZ_NKKT = 10
SZ_NNZK = 11
SZ_NNZL = 12
SZ_NEQ = 13
SZ_NPRIV = 14
SZ_NOFF = 15
SZ_NSRC = 16
SZ_NCOLSQ = 17
SZ_FILTER_CAP = 18
SZ_NFIX = 19
SZ_NJE = 20
SZ_NHE = 21
SZ_DENSE_BK = 22
EV_N = 0
EV_M = 1
EV_NOBJ = 2
EV_NGROUPS = 3
EV_HAS_JAC_MAP = 4
EV_CHUNK = 5

# the entries of the state slots F_IC_STATE and F_WD_STATE
from .state_fields import *  # noqa: E402,F401,F403
