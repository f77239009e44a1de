"""batch/placement.py: the CPU kernel's threads on the cores the Python threads do not use.

Each split runs in a child process: the threading layer and the affinities are the
process's, set once."""
import ast
import os
import subprocess
import sys

import pytest

from caspar_backend.batch.placement import cores_of
from caspar_backend.errors import OptionError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: a child that splits its cores, then reports the layer, its own cores, the other
#: threads' cores, the service's default kernel threads and a batch's answers against
#: the single solves
CHILD = """
import glob, os, sys, threading
import numpy as np
sys.path.insert(0, {root!r})
from caspar_backend.batch.placement import split_cores, current_split
from caspar_backend.batch.service import default_kernel_threads
every = sorted(os.sched_getaffinity(0))
split = split_cores({{every[0]}})
assert current_split() is split
me = threading.get_native_id()
seen = {{}}
for st in glob.glob(f"/proc/{{os.getpid()}}/task/*/status"):
    tid = int(st.split("/")[-2])
    d = dict(l.split(":\\t", 1) for l in open(st).read().splitlines() if ":\\t" in l)
    seen[tid] = d["Cpus_allowed_list"].strip()
import numba
from tests.batch.problems import ik
P, sample = ik()
X, params = sample(np.random.default_rng(3), 12)
res = P.solve_batch(x0=X, p=params, print_level=0, threads=max(2, split.kernel_threads))
same = res.path[0] == "kernel" and all(
    P.solve(x0=X[b], p=params[b], print_level=0).iterations == res.iterations[b]
    and P.solve(x0=X[b], p=params[b], print_level=0).f == res.f[b] for b in range(12))
try:
    split_cores({{every[0]}})
    again = "none"
except Exception as e:
    again = type(e).__name__
print(numba.threading_layer(), seen[me], default_kernel_threads(), same, again,
      sorted(set(v for t, v in seen.items() if t != me)))
"""


def test_cores_of_forms():
    assert cores_of("0-1") == {0, 1}
    assert cores_of("3") == {3}
    assert cores_of("0-1,4,6-7") == {0, 1, 4, 6, 7}
    assert cores_of({2, 5}) == {2, 5}
    for bad in ("a", "3-1", "-1", [-2], None):
        with pytest.raises(OptionError):
            cores_of(bad)


def test_split_cores_refuses_all_or_foreign_cores():
    """Checked before anything is started (this process's layer stays unchosen)."""
    from caspar_backend.batch.placement import split_cores

    every = sorted(os.sched_getaffinity(0))
    with pytest.raises(OptionError, match="proper subset"):
        split_cores(every)
    with pytest.raises(OptionError, match="proper subset"):
        split_cores({max(every) + 1000})
    with pytest.raises(OptionError, match="proper subset"):
        split_cores(set())


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_split_cores_puts_the_pool_on_the_other_cores():
    every = sorted(os.sched_getaffinity(0))
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    layer, mine, threads, same, again, others = out.stdout.strip().split(" ", 5)
    assert layer == "workqueue"
    assert cores_of(mine) == {every[0]}
    assert int(threads) == len(every) - 1        # the service's default: the kernel cores
    assert same == "True"                         # the batch still equals single solves
    assert again == "CasparError"                 # the pool cannot move twice
    others = [cores_of(o) for o in ast.literal_eval(others)]   # taskset-style strings
    # the pool's threads on the other cores only (a thread started at import keeps the
    # process's first affinity); none on this thread's core alone
    assert set(every[1:]) in others
    assert {every[0]} not in others
