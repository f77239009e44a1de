"""benchmarks/bench_service.py's core split: the kernel's native threads on the cores the
Python threads do not use."""
import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = """
import glob, os, sys, threading
sys.path.insert(0, {root!r})
from benchmarks.bench_service import split_cores
every = sorted(os.sched_getaffinity(0))
split_cores({{every[0]}})
me = threading.get_native_id()
seen = {{}}
for st in glob.glob(f"/proc/{{os.getpid()}}/task/*/status"):
    tid = int(st.split("/")[-2])
    d = dict(l.split(":\\t", 1) for l in open(st).read().splitlines() if ":\\t" in l)
    seen[tid] = d["Cpus_allowed_list"].strip()
import numba
print(numba.threading_layer(), seen[me], sorted(set(v for t, v in seen.items() if t != me)))
"""


def test_cores_of():
    from benchmarks.bench_service import cores_of

    assert cores_of("0-1") == {0, 1}
    assert cores_of("3") == {3}
    assert cores_of("0-1,4,6-7") == {0, 1, 4, 6, 7}


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_split_cores_puts_the_pool_on_the_other_cores():
    every = sorted(os.sched_getaffinity(0))
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    from benchmarks.bench_service import cores_of

    layer, mine, others = out.stdout.split(" ", 2)
    assert layer == "workqueue"
    assert cores_of(mine) == {every[0]}
    others = [cores_of(o) for o in ast.literal_eval(others)]   # taskset-style strings
    # the pool's threads on the other cores only (a thread started at import keeps the
    # process's first affinity); none on this thread's core alone
    assert set(every[1:]) in others
    assert {every[0]} not in others
