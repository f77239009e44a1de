"""caspar's test suite (a package so that test modules and tests/support import by their
dotted names from the repository root; layout in tests/README.md)."""
