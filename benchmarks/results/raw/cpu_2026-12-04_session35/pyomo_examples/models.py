"""Registry: model name -> (source path in Pyomo/pyomo, builder returning a ConcreteModel,
note).  Every builder builds a fresh model."""

from __future__ import annotations

import pyomo.environ as pyo

from loader import abstract_instance, capture, namespace

MODELS: dict[str, tuple[str, object, str]] = {}


def reg(name, path, note=""):
    def deco(fn):
        MODELS[name] = (path, fn, note)
        return fn
    return deco


# ------------------------------------------------------------ pyomobook
B = "pyomobook/"


@reg("book/deer", B + "nonlinear-ch/deer/DeerProblem.py", "AbstractModel + DeerProblem.dat")
def _():
    return capture(B + "nonlinear-ch/deer/DeerProblem.py")


@reg("book/disease_estimation", B + "nonlinear-ch/disease_est/disease_estimation.py",
     "AbstractModel + .dat")
def _():
    return capture(B + "nonlinear-ch/disease_est/disease_estimation.py")


@reg("book/multimodal_init1", B + "nonlinear-ch/multimodal/multimodal_init1.py")
def _():
    return capture(B + "nonlinear-ch/multimodal/multimodal_init1.py")


@reg("book/multimodal_init2", B + "nonlinear-ch/multimodal/multimodal_init2.py")
def _():
    return capture(B + "nonlinear-ch/multimodal/multimodal_init2.py")


@reg("book/ReactorDesign", B + "nonlinear-ch/react_design/ReactorDesign.py", "caf=10000")
def _():
    return capture(B + "nonlinear-ch/react_design/ReactorDesign.py")


@reg("book/ReactorDesignTable_caf1000", B + "nonlinear-ch/react_design/ReactorDesignTable.py",
     "first model of the loop (caf=1000)")
def _():
    return capture(B + "nonlinear-ch/react_design/ReactorDesignTable.py", nth=1)


@reg("book/rosenbrock", B + "nonlinear-ch/rosen/rosenbrock.py")
def _():
    return capture(B + "nonlinear-ch/rosen/rosenbrock.py")


@reg("book/dae_path_constraint", B + "dae-ch/run_path_constraint.py",
     "collocation nfe=7 ncp=6 Radau, u reduced to ncp=1")
def _():
    return capture(B + "dae-ch/run_path_constraint.py")


@reg("book/ConcreteH", B + "optimization-ch/ConcreteH.py", "IC_model with the __main__ data")
def _():
    ns = namespace(B + "optimization-ch/ConcreteH.py")
    A = ['I_C_Scoops', 'Peanuts']
    h = {'I_C_Scoops': 1, 'Peanuts': 0.1}
    d = {'I_C_Scoops': 5, 'Peanuts': 27}
    c = {'I_C_Scoops': 3.14, 'Peanuts': 0.2718}
    b = 12
    u = {'I_C_Scoops': 100, 'Peanuts': 40.6}
    return ns["IC_model"](A, h, d, c, b, u)


@reg("book/AbstractH", B + "abstract-ch/AbstractH.py", "AbstractH.dat")
def _():
    return abstract_instance(B + "abstract-ch/AbstractH.py", "AbstractH.dat")


@reg("book/var_obj_con_snippet", B + "overview-ch/var_obj_con_snippet.py", "QP")
def _():
    return namespace(B + "overview-ch/var_obj_con_snippet.py")["model"]


@reg("book/expr_declaration_decl4", B + "pyomo-components-ch/expr_declaration.py",
     "last model (decl4/decl5: e=(x-2)^2 after set_value, x=2.0 start)")
def _():
    return namespace(B + "pyomo-components-ch/expr_declaration.py")["model"]


@reg("book/persistent_model", B + "performance-ch/persistent.py", "QP, the @model block")
def _():
    return namespace(B + "performance-ch/persistent.py", until="# @creation:")["m"]


@reg("book/mpec_ex1a", B + "mpec-ch/ex1a.py", "mpec.simple_nonlinear")
def _():
    m = namespace(B + "mpec-ch/ex1a.py")["model"]
    pyo.TransformationFactory("mpec.simple_nonlinear").apply_to(m)
    return m


@reg("book/mpec_ex2", B + "mpec-ch/ex2.py", "mpec.simple_nonlinear (create_using, as in file)")
def _():
    return namespace(B + "mpec-ch/ex2.py")["transformed"]


# ------------------------------------------------------------ examples/pyomo
P = "pyomo/"


@reg("pyomo/concrete_rosen", P + "concrete/rosen.py", "no start values (x=y=None)")
def _():
    return namespace(P + "concrete/rosen.py")["model"]


@reg("pyomo/sodacan", P + "concrete/sodacan.py", "no start values")
def _():
    return namespace(P + "concrete/sodacan.py")["M"]


@reg("pyomo/core_block1", P + "core/block1.py")
def _():
    return namespace(P + "core/block1.py")["model"]


@reg("pyomo/core_simple", P + "core/simple.py")
def _():
    return namespace(P + "core/simple.py")["model"]


@reg("pyomo/quadratic_example1", P + "quadratic/example1.py")
def _():
    return abstract_instance(P + "quadratic/example1.py")


@reg("pyomo/quadratic_example3", P + "quadratic/example3.py")
def _():
    return abstract_instance(P + "quadratic/example3.py")


@reg("pyomo/quadratic_example4", P + "quadratic/example4.py")
def _():
    return abstract_instance(P + "quadratic/example4.py")


@reg("pyomo/ipopt_scaling", P + "suffixes/ipopt_scaling.py", "scaling_factor suffix present")
def _():
    return capture(P + "suffixes/ipopt_scaling.py")


@reg("pyomo/ipopt_warmstart", P + "suffixes/ipopt_warmstart.py", "first (cold) solve")
def _():
    return capture(P + "suffixes/ipopt_warmstart.py")


@reg("pyomo/sipopt_hicks", P + "suffixes/sipopt_hicks.py", "sens suffixes present (unused)")
def _():
    return capture(P + "suffixes/sipopt_hicks.py")


@reg("pyomo/sipopt_parametric", P + "suffixes/sipopt_parametric.py")
def _():
    return capture(P + "suffixes/sipopt_parametric.py")


# ------------------------------------------------------------ examples/mpec
M = "mpec/"
for _n in ("bard1", "df", "scholtes4", "linear1"):
    def _mk(n=_n):
        ns = namespace(M + f"{n}.py")
        m = ns["model"]
        pyo.TransformationFactory("mpec.simple_nonlinear").apply_to(m)
        return m
    reg(f"mpec/{_n}", M + f"{_n}.py", "mpec.simple_nonlinear")(_mk)


# ------------------------------------------------------------ examples/performance
F = "performance/"


@reg("perf/clnlbeam_5000", F + "jump/clnlbeam.py", "clnlbeam-5000.dat (N=5000)")
def _():
    return abstract_instance(F + "jump/clnlbeam.py", "clnlbeam-5000.dat")


@reg("perf/lqcp_n100", F + "jump/lqcp.py", "n=m=100 instead of 1000 (1M vars too big)")
def _():
    return namespace(F + "jump/lqcp.py", replace=[("model.n = 1000", "model.n = 100"),
                                                  ("model.m = 1000", "model.m = 100")])["model"]


@reg("perf/opf_662bus", F + "jump/opf_662bus.py")
def _():
    return namespace(F + "jump/opf_662bus.py")["model"]


@reg("perf/opf_6620bus", F + "jump/opf_6620bus.py")
def _():
    return namespace(F + "jump/opf_6620bus.py")["model"]


@reg("perf/bilinear1_100", F + "misc/bilinear1_100.py")
def _():
    return namespace(F + "misc/bilinear1_100.py")["pyomo_create_model"]()


@reg("perf/bilinear1_100000", F + "misc/bilinear1_100000.py")
def _():
    return namespace(F + "misc/bilinear1_100000.py")["pyomo_create_model"]()


@reg("perf/stochpdegas1", F + "dae/run_stochpdegas1_automatic.py",
     "stochpdegas_automatic.dat, FD nfe=1 x 47")
def _():
    return capture(F + "dae/run_stochpdegas1_automatic.py")


# ------------------------------------------------------------ examples/dae
D = "dae/"


@reg("dae/Optimal_Control", D + "run_Optimal_Control.py", "Radau nfe=20 ncp=3, u ncp=1")
def _():
    return capture(D + "run_Optimal_Control.py")


@reg("dae/Parameter_Estimation", D + "run_Parameter_Estimation.py", "data_set2.dat, nfe=8 ncp=5")
def _():
    return capture(D + "run_Parameter_Estimation.py")


@reg("dae/Path_Constraint", D + "run_Path_Constraint.py", "Radau nfe=7 ncp=6")
def _():
    return capture(D + "run_Path_Constraint.py")


@reg("dae/car_example", D + "car_example.py", "BACKWARD nfe=15")
def _():
    return capture(D + "car_example.py")


@reg("dae/laplace_BVP", D + "laplace_BVP.py", "constant objective (square system)")
def _():
    return capture(D + "laplace_BVP.py")


@reg("dae/PDE_example", D + "PDE_example.py", "constant objective; FD x + colloc t")
def _():
    return capture(D + "PDE_example.py")


@reg("dae/disease", D + "run_disease.py", "disease.dat, colloc nfe=520 ncp=3")
def _():
    return capture(D + "run_disease.py")


@reg("dae/distill", D + "run_distill.py", "distill.dat, BACKWARD nfe=50")
def _():
    return capture(D + "run_distill.py")


@reg("dae/stochpdegas", D + "run_stochpdegas_automatic.py", "stochpdegas_automatic.dat")
def _():
    return capture(D + "run_stochpdegas_automatic.py")


@reg("dae/ReactionKinetics_sim", D + "ReactionKinetics.py",
     "simple_simulation_model: no objective (square)")
def _():
    return capture(D + "ReactionKinetics.py", main=False, call="simple_simulation_model")


@reg("dae/ReactionKinetics_opt", D + "ReactionKinetics.py", "simple_optimization_model")
def _():
    return capture(D + "ReactionKinetics.py", main=False, call="simple_optimization_model")


@reg("dae/ReactionKinetics_regr", D + "ReactionKinetics.py",
     "regression_model, first solve (colloc nfe=100 ncp=3)")
def _():
    return capture(D + "ReactionKinetics.py", main=False, call="regression_model")


# ------------------------------------------------------------ examples/kernel (pyomo.kernel)
K = "kernel/mosek/"


@reg("kernel/geometric1", K + "geometric1.py", "pyomo.kernel block; solve_nonlinear(200,50,2,10,2,10)")
def _():
    return capture(K + "geometric1.py", main=False, call="solve_nonlinear",
                   call_args=(200.0, 50.0, 2.0, 10.0, 2.0, 10.0))


@reg("kernel/geometric2", K + "geometric2.py", "pyomo.kernel block; solve_nonlinear()")
def _():
    return capture(K + "geometric2.py", main=False, call="solve_nonlinear")


@reg("kernel/power1", K + "power1.py", "pyomo.kernel block; x**0.2 at lb=0")
def _():
    return capture(K + "power1.py", main=False, call="solve_nonlinear")


# ------------------------------------------------------------ examples/doc
S = "doc/samples/case_studies/"


@reg("doc/DiseaseEstimation", S + "disease_est/DiseaseEstimation.py", "AbstractModel + .dat")
def _():
    return abstract_instance(S + "disease_est/DiseaseEstimation.py", "DiseaseEstimation.dat")


@reg("doc/Rosenbrock", S + "rosen/Rosenbrock.py", "AbstractModel, no data")
def _():
    return abstract_instance(S + "rosen/Rosenbrock.py")
