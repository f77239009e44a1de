"""On the VM, for the next lease (branch straight-ldl): into CASPAR_CACHE_DIR, the kernels
prebuilt (``offline.prebuild``), the extern variant's kernel state and Van der Pol's
pattern cubin (``patterns.kernel_for`` under ``offline.target``), so that the device only
loads and launches.  argv: the Van der Pol pickle (session 54's make_vdp_pickle.py)."""
import lzma
import pickle
import sys
import time

from caspar_backend.compiled.cuda import offline, patterns

CC = offline.CC
d = pickle.loads(lzma.decompress(open(sys.argv[1], "rb").read()))
t = time.time()
for p in offline.prebuild(CC):
    print(p, flush=True)
print(f"prebuilt {time.time() - t:.0f} s", flush=True)
t = time.time()
with offline.target(CC):
    patterns.kernel_for(d["lay"], CC)
print(f"extern kernel + Van der Pol's pattern {time.time() - t:.0f} s")
