import os
import sys

# the harness helpers (contrib_suite, pyomo_cases) are plain modules next to the tests
sys.path.insert(0, os.path.dirname(__file__))
