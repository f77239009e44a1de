"""Tests of the Pyomo and CasADi adapters and front ends."""
