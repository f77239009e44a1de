"""The CUDA batch kernel (rows) of one tree built into a cubin for sm_90 on a machine
without a GPU, so that a lease only loads and launches it (fake_kernel.py) instead of
compiling for minutes: Numba + NVVM to PTX (``cuda.compile_ptx``, the toolkit's
libdevice), then ``ptxas -O3`` (whole program, variant ``plain``).  Variant ``ext``: the
kernel whose QDLDL chains call externs (../straight/ext_kernel.py), ``ptxas -c``, linked
by ``nvlink`` with the stub (``ext_stub``) and with the pickle's generated code
(``ext_gen``).  Writes OUT/<name>.cubin and OUT/<name>.json (the entry's name, the
parameter count, the times).  argv: tree root, out folder, plain|ext, name prefix,
[pickle for ext].  Run with the tree's root as the working directory."""
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path


tree, out, variant, prefix = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), \
    sys.argv[3], sys.argv[4]
sys.path.insert(0, str(tree))
# this checkout's benchmarks/vm_cuda.py by path (the tree's own benchmarks may predate it)
_spec = importlib.util.spec_from_file_location(
    "vm_cuda", Path(__file__).resolve().parents[5] / "benchmarks" / "vm_cuda.py")
vm_cuda = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vm_cuda)

vm_cuda.setup()
root = vm_cuda.root()
from numba import cuda  # noqa: E402

CC = vm_cuda.CC
import caspar_backend  # noqa: E402
from caspar_backend.compiled.cuda import launch  # noqa: E402
from caspar_backend.compiled.cuda.retarget import device_version  # noqa: E402

assert Path(caspar_backend.__file__).resolve().is_relative_to(tree), caspar_backend.__file__
out.mkdir(parents=True, exist_ok=True)
t0 = time.time()
if variant == "plain":
    k = device_version(launch._solve_rows, cache=False)
else:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "straight"))
    import ext_kernel
    k = ext_kernel.dispatcher(cache=False)
ptx, _ = cuda.compile_ptx(k.py_func, launch.signature(), cc=CC)
t_ptx = time.time() - t0
entry = next(ln.split()[2].split("(")[0] for ln in ptx.splitlines()
             if ln.startswith(".visible .entry"))
nparams = sum(1 for ln in ptx.split(".visible .entry", 1)[1].split(")", 1)[0].splitlines()
              if ".param" in ln)
(out / f"{prefix}.ptx").write_text(ptx)


def run(*cmd):
    t = time.time()
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{cmd[0]}: {r.stderr[-600:]}")
    return round(time.time() - t, 1)


meta = dict(tree=str(tree), variant=variant, entry=entry, params=nparams,
            ptx_s=round(t_ptx, 1), ptx_lines=len(ptx.splitlines()))
if variant == "plain":
    meta["ptxas_s"] = run(root / "bin/ptxas", "-arch=sm_90", "-O3", out / f"{prefix}.ptx", "-o",
                          out / f"{prefix}.cubin")
    (out / f"{prefix}.json").write_text(json.dumps(meta))
    print(json.dumps(meta))
else:
    import lzma
    import pickle
    lay = pickle.loads(lzma.decompress(open(sys.argv[5], "rb").read()))["lay"]
    meta["ptxas_c_s"] = run(root / "bin/ptxas", "-arch=sm_90", "-O3", "-c",
                            out / f"{prefix}.ptx", "-o", out / f"{prefix}.o")
    for name, src in (("stub", ext_kernel.STUB), ("gen", ext_kernel.generated(lay))):
        (out / f"{prefix}_{name}.cu").write_text(src)
        m = dict(meta, nvcc_s=run(root / "bin/nvcc", "-arch=sm_90", "-rdc=true", "-cubin",
                                  "-O3", out / f"{prefix}_{name}.cu", "-o",
                                  out / f"{prefix}_{name}.o"))
        m["nvlink_s"] = run(root / "bin/nvlink", "-arch=sm_90", out / f"{prefix}.o",
                            out / f"{prefix}_{name}.o", "-o", out / f"{prefix}_{name}.cubin")
        (out / f"{prefix}_{name}.json").write_text(json.dumps(m))
        print(json.dumps(m))
