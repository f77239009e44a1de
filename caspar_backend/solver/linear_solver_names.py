"""The linear solvers' names: caspar's, IPOPT's, and IPOPT's options of its linear solvers
(which caspar accepts: solver/options.py, solver/compat.py)."""

#: IPOPT's linear solver names: caspar runs 'pardisomkl' where MKL is installed and the
#: device's own solver in place of the others (compat.py)
IPOPT_LINEAR_SOLVERS = ("ma27", "ma57", "ma77", "ma86", "ma97", "pardiso", "pardisomkl",
                        "spral", "wsmp", "mumps", "custom")
CASPAR_LINEAR_SOLVERS = ("qdldl", "pardisomkl", "cudss")   #: linsolve.make_linear_solver
#: IPOPT's options of its linear solvers (``ma27_pivtol``, ``mumps_mem_percent``, ...),
#: their libraries and the linear system's scaling: caspar factorizes with its own
#: solver, so a script's setting of one is accepted and ignored with a warning
IPOPT_LINEAR_SOLVER_OPTION_PREFIXES = tuple(f"{s}_" for s in IPOPT_LINEAR_SOLVERS
                                            if s != "custom")
IPOPT_LINEAR_SOLVER_OPTIONS = ("hsllib", "pardisolib", "linear_system_scaling",
                               "linear_scaling_on_demand")
