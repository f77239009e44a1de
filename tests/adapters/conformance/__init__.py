"""Pyomo's own solver-test suites with caspar registered as a solver."""
