"""Tests of the benchmark models (COPS, chain, bundle adjustment, ACOPF)."""
