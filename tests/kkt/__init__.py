"""Tests of the KKT systems, refinement, static regularization and the linear solvers."""
