"""CUDA source for a whole problem: every pattern group's template, five launches.

For a group named ``G`` (``o<k>`` for objective groups, ``c<k>`` for constraint
groups) with N instances, k local variables, q local parameters and r data slots, the
module defines three device functions of the instance index ``i``:

* ``G_val(x, p, vt, pt, dt, N, i, out, dst)``: ``out[dst[i]] = v_i`` (constraint rows,
  split-row terms, or the objective-term buffer);
* ``G_jac(x, p, vt, pt, dt, N, i, out, base)``:
  ``out[base + e*N + i] = d v_i / d x_{slot(e)}``;
* ``G_hess(x, p, vt, pt, dt, N, i, out, base, W)``: ``out[base + e*N + i] = W * h_{e,i}``.

Here ``x``/``p`` are the global variable/parameter vectors (float64),
``vt``/``pt`` the variable/parameter tables and ``dt`` the data table
(float64, slot-major: entry j of instance i at ``j*N + i``, so consecutive threads read
consecutive addresses).  The body is straight-line code over the template DAG with
shared subexpressions; op spellings come from the op table and the helpers in
``kernels/caspar_device.cuh``, which is spliced into the source.

Five dispatch kernels run every group of a kind in one launch over a group table
(``kernels/caspar_groups.cuh``, built by :mod:`.evaluators.group_table`): each block
finds its group by a binary search over the groups' first blocks, and a ``switch``
calls that group's function -- ``caspar_obj_val``/``caspar_obj_jac`` over the
objective groups, ``caspar_con_val`` (values to ``out`` or, for split rows, to the term
buffer)/``caspar_con_jac`` over the constraint groups, and ``caspar_hess`` over all
groups with ``W = obj_factor`` for objective groups and ``W = lam[dst[i]]`` for
constraint groups.  So an evaluation costs one launch per kind however many templates
the problem has, and the whole problem is one NVRTC compilation.
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
_ARGS = "x, p, g.vt, g.pt, g.dt, g.N, i"


def _device_function(name: str, extra_sig: str, roots: list[Node], stores) -> str:
    body: list[str] = []
    nm = _body(roots, body)
    out = [f"static __device__ void {name}({_SIG}, const int i, {extra_sig}) {{", *body]
    out += stores(nm)
    out.append("}")
    return "\n".join(out)


def generate_group_source(root: Node, grad: list, hess: list, name: str) -> str:
    """The three device functions of one template (module doc), thread index ``i``
    given by the caller."""
    val = _device_function(f"{name}_val", "double* __restrict__ out, const int* __restrict__ dst",
                           [root], lambda nm: [f"    out[dst[i]] = {nm[root.id]};"])
    jac = _device_function(f"{name}_jac", "double* __restrict__ out, const long long base",
                           [e for _, e in grad],
                           lambda nm: [f"    out[base + (long long){k} * N + i] = {nm[e.id]};"
                                       for k, (_, e) in enumerate(grad)])
    hess_f = _device_function(
        f"{name}_hess", "double* __restrict__ out, const long long base, const double W",
        [e for _, e in hess],
        lambda nm: [f"    out[base + (long long){k} * N + i] = W * {nm[e.id]};"
                    for k, (_, e) in enumerate(hess)])
    return "\n\n".join([f"// caspar template {name}", val, jac, hess_f])


def _dispatch(kernel: str, sig: str, head: list[str], cases: list[str]) -> str:
    out = [f'extern "C" __global__ void {kernel}(const double* __restrict__ x, '
           f'const double* __restrict__ p, const caspar_group* __restrict__ G, const int ng, '
           f'{sig}) {{',
           "    const int k = caspar_group_of(G, ng);",
           "    const caspar_group g = G[k];",
           "    const int i = (int)(blockIdx.x - g.block0) * (int)blockDim.x + (int)threadIdx.x;",
           "    if (i >= g.N) return;", *head, "    switch (k) {"]
    out += [f"    case {k}: {c}; break;" for k, c in enumerate(cases)]
    out += ["    }", "}"]
    return "\n".join(out)


def generate_cuda_source(objective_groups, constraint_groups) -> str:
    """CUDA source of a whole problem: the device helpers, the group table's type,
    three device functions per template and the five dispatch kernels (module doc)."""
    obj = [f"o{k}" for k in range(len(objective_groups))]
    con = [f"c{k}" for k in range(len(constraint_groups))]
    parts = ["// caspar generated: every template of one problem",
             kernel_file("caspar_device.cuh"), kernel_file("caspar_groups.cuh")]
    parts += [generate_group_source(g.root, g.grad, g.hess, name)
              for name, g in zip(obj + con, list(objective_groups) + list(constraint_groups))]
    parts.append(_dispatch("caspar_obj_val", "double* __restrict__ out", [],
                           [f"{n}_val({_ARGS}, out, g.dst)" for n in obj]))
    parts.append(_dispatch("caspar_obj_jac", "double* __restrict__ out", [],
                           [f"{n}_jac({_ARGS}, out, g.jac_base)" for n in obj]))
    parts.append(_dispatch(
        "caspar_con_val", "double* __restrict__ out, double* __restrict__ term",
        ["    double* const o = g.direct ? out : term;"],
        [f"{n}_val({_ARGS}, o, g.dst)" for n in con]))
    parts.append(_dispatch("caspar_con_jac", "double* __restrict__ out", [],
                           [f"{n}_jac({_ARGS}, out, g.jac_base)" for n in con]))
    parts.append(_dispatch(
        "caspar_hess", "double* __restrict__ out, const double* __restrict__ lam, "
        "const double obj_factor", [f"    const double W = k < {len(obj)} ? obj_factor "
                                    f": lam[g.dst[i]];"],
        [f"{n}_hess({_ARGS}, out, g.hess_base, W)" for n in obj + con]))
    return "\n\n".join(parts) + "\n"
