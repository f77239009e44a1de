"""Tests of the benchmark runner."""
