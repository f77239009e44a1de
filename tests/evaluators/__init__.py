"""Tests of the NumPy and CUDA evaluators."""
