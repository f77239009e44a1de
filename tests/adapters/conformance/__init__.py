"""The suites of the front ends' own projects run with caspar: Pyomo's solver tests
(contrib and legacy drivers) and CasADi's nlpsol conformance problems."""
