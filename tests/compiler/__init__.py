"""Tests of the compiler: expression graphs, the ops table, passes, patterns, blocks,
derivatives and split rows."""
