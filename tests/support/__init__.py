"""Shared support of the test suite (imported as ``tests.support``; see tests/README.md).

* :mod:`.problems` -- the reference problems used by several catalogs (HS071, Rosenbrock),
  one definition each;
* :mod:`.problem_bank`, :mod:`.hs_extra` -- the solver banks (CasADi SX), with the
  published optima;
* :mod:`.solver_harness` -- run caspar and IPOPT on one bank problem (``solved`` caches
  the pair);
* :mod:`.ipopt` -- the one way the tests call IPOPT (``casadi.nlpsol``);
* :mod:`.assertions` -- ``close`` and ``assert_matches_ipopt``;
* :mod:`.casadi_corpus`, :mod:`.pyomo_corpus`, :mod:`.pyomo_nlp_models`,
  :mod:`.pyomo_ipopt_reference`, :mod:`.exprgen`, :mod:`.casadi_evaluator` -- the
  adapter corpora, random expressions and a CasADi-backed evaluator.
"""

from pathlib import Path

#: the repository root (pyproject.toml, kernels/, benchmarks/)
ROOT = Path(__file__).resolve().parents[2]
