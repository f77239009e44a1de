"""CUDA C source for a pattern group's template: one thread per instance.

For a group named ``G`` with N instances, k local variables, q local
parameters and r data slots, the module defines three kernels.  All index
tables are int32 and slot-major (entry j of instance i at ``j*N + i``), so
consecutive threads read consecutive addresses:

* ``G_val(x, p, vt, pt, dt, N, out, dst)``:
  ``out[dst[i]] = v_i`` (constraint rows, or an objective buffer);
* ``G_jac(x, p, vt, pt, dt, N, out, base)``:
  ``out[base + e*N + i] = d v_i / d x_{slot(e)}``;
* ``G_hess(x, p, vt, pt, dt, N, out, base, w, widx, wscale, use_w)``:
  ``out[base + e*N + i] = W_i * h_{e,i}`` with ``W_i = w[widx[i]]`` if
  ``use_w`` else ``wscale``.

Here ``x``/``p`` are the global variable/parameter vectors (float64),
``vt``/``pt`` the variable/parameter tables and ``dt`` the data table
(float64, slot-major).  The body is straight-line code over the template
DAG with shared subexpressions; op spellings come from the op table and the
helpers in ``kernels/caspar_device.cuh``, which is spliced into the source.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from . import ops as _ops
from .expr import Node, topo_order


@lru_cache(maxsize=None)
def kernel_file(name: str) -> str:
    """Text of a CUDA file shipped in ``caspar_backend.kernels``."""
    return resources.files("caspar_backend.kernels").joinpath(name).read_text()


def _body(roots: list[Node], lines: list[str]) -> dict[int, str]:
    name: dict[int, str] = {}
    loads: dict[str, str] = {}
    for n in topo_order(roots):
        op = n.op
        if op == "const":
            name[n.id] = f"{float(n.attr)!r}"
        elif op in ("var", "param", "data"):
            sym = {"var": "X", "param": "P", "data": "D"}[op] + str(n.attr)
            src = {"var": f"x[vt[{n.attr} * N + i]]", "param": f"p[pt[{n.attr} * N + i]]",
                   "data": f"dt[(long long){n.attr} * N + i]"}[op]
            loads[sym] = src
            name[n.id] = sym
        else:
            text = _ops.OPS[op].cuda([name[a.id] for a in n.args], n.attr)
            lines.append(f"    const double t{n.id} = {text};")
            name[n.id] = f"t{n.id}"
    # leaf loads first, in slot order (coalesced reads)
    head = [f"    const double {s} = {src};" for s, src in sorted(loads.items())]
    lines[:0] = head
    return name


_SIG = ("const double* __restrict__ x, const double* __restrict__ p, "
        "const int* __restrict__ vt, const int* __restrict__ pt, "
        "const double* __restrict__ dt, const int N")
_PROLOGUE = ["    const int i = blockIdx.x * blockDim.x + threadIdx.x;",
             "    if (i >= N) return;"]


def _kernel(name: str, extra_sig: str, roots: list[Node], stores) -> str:
    body: list[str] = []
    nm = _body(roots, body)
    out = [f'extern "C" __global__ void {name}({_SIG}, {extra_sig}) {{', *_PROLOGUE, *body]
    out += stores(nm)
    out.append("}")
    return "\n".join(out)


def generate_cuda_source(root: Node, grad: list, hess: list, name: str) -> str:
    """CUDA source (device helpers + the three kernels) for one template."""
    val = _kernel(f"{name}_val", "double* __restrict__ out, const int* __restrict__ dst",
                  [root], lambda nm: [f"    out[dst[i]] = {nm[root.id]};"])
    jac = _kernel(f"{name}_jac", "double* __restrict__ out, const long long base",
                  [e for _, e in grad],
                  lambda nm: [f"    out[base + (long long){k} * N + i] = {nm[e.id]};"
                              for k, (_, e) in enumerate(grad)])
    hess_k = _kernel(
        f"{name}_hess",
        "double* __restrict__ out, const long long base, const double* __restrict__ w, "
        "const int* __restrict__ widx, const double wscale, const int use_w",
        [e for _, e in hess],
        lambda nm: ["    const double W = use_w ? w[widx[i]] : wscale;"]
        + [f"    out[base + (long long){k} * N + i] = W * {nm[e.id]};"
           for k, (_, e) in enumerate(hess)])
    return "\n\n".join([f"// caspar generated: {name}", kernel_file("caspar_device.cuh"),
                        val, jac, hess_k]) + "\n"
