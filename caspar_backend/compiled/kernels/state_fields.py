"""The entries of two state slots of a solve's float workspace (:mod:`.slots`): the
inertia correction's (F_IC_STATE) and the line-search watchdog's (F_WD_STATE); compile-time
constants of the kernels, re-exported by :mod:`.slots`."""

#: entries of slot F_IC_STATE, the inertia correction's state of one solve
#: (kernels/kkt.py; solver/inertia.py's InertiaCorrector attributes in brackets; the
#: degeneracy test's codes are solver/perturbation.py's, all 0 at a solve's start)
IC_DW_LAST = 0          # the last nonzero delta_w [delta_w_last]
IC_DW = 1               # delta_w of the current factorization (0: none)
IC_EPS = 2              # the static regularization now [kkt.static_regularization]
IC_EPS_RESTORE = 3      # eps to restore next iteration, -1: none [eps_restore]
IC_JAC_DEG = 4          # the Jacobian's degeneracy state [degeneracy.jac]
IC_EPS_BEFORE_SLOW = 5  # eps before a slow refinement lowered it, -1: none [eps_before_slow]
IC_SLOW_OFF = 6         # 1: no more lowering for slowness [slow_rule_off]
IC_DC = 7               # delta_c of the current factorization
IC_HESS_DEG = 8         # the Hessian's degeneracy state [degeneracy.hess]
IC_DEGEN_ITERS = 9      # test iterations that needed a perturbation [degeneracy.iters]
IC_TEST = 10            # the current matrix's degeneracy test [degeneracy.test]
IC_STATE_SIZE = 11

#: entries of slot F_WD_STATE, the line-search watchdog's state (solver/watchdog.py's
#: Watchdog; its stored iterate and direction are the slots F_WD_*)
WD_ACTIVE = 0           # 1 while the watchdog runs
WD_TRIALS = 1           # its unchecked steps so far
WD_THETA = 2            # the stored iterate's reference values (theta, phi, gphi^T dw)
WD_PHI = 3
WD_GBD = 4
WD_STATE_SIZE = 5
