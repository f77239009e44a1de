"""Compilation info: what was generated for each template and what it cost.

``compilation_info(problem, device)`` -> :class:`CompilationInfo`:

* ``templates``: one :class:`TemplateInfo` per pattern group (objective groups, then
  constraint groups): instances, the template's local variables / parameters / data
  slots, its DAG nodes, gradient and Hessian entries, and the non-blank lines of
  generated code (NumPy functions, CUDA device functions);
* ``build_seconds``: building the device's evaluator (code generation, compilation,
  tables), measured when it was built;
* CUDA only: ``cache_hit`` (the module's cubin came from the NVRTC disk cache) and
  ``kernels``: per dispatch kernel its registers per thread, static shared, local and
  constant memory (bytes) and largest block -- one module holds every template
  (:mod:`caspar_backend.codegen_cuda`), so these are the figures of the launches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..expr import topo_order


@dataclass(frozen=True)
class TemplateInfo:
    """Final.  One pattern group (module doc)."""

    kind: str
    index: int
    instances: int
    local_vars: int
    params: int
    data_slots: int
    nodes: int
    grad_entries: int
    hess_entries: int
    numpy_lines: int
    cuda_lines: int


@dataclass(frozen=True)
class KernelInfo:
    """Final.  One CUDA dispatch kernel."""

    name: str
    registers: int
    shared_bytes: int
    local_bytes: int
    const_bytes: int
    max_threads_per_block: int


@dataclass(frozen=True)
class CompilationInfo:
    """Final.  See the module docstring."""

    device: str
    build_seconds: float
    templates: list = field(default_factory=list)
    cache_hit: bool | None = None
    kernels: list = field(default_factory=list)

    def __str__(self) -> str:
        head = (f"caspar compilation ({self.device}): {len(self.templates)} templates, "
                f"evaluator built in {self.build_seconds:.3f} s")
        if self.cache_hit is not None:
            head += ", CUDA module " + ("from the disk cache" if self.cache_hit else "compiled")
        cols = ("kind", "#", "instances", "vars", "params", "data", "nodes", "grad", "hess",
                "numpy lines", "cuda lines")
        rows = [(t.kind, t.index, t.instances, t.local_vars, t.params, t.data_slots, t.nodes,
                 t.grad_entries, t.hess_entries, t.numpy_lines, t.cuda_lines)
                for t in self.templates]
        out = [head, _table(cols, rows)]
        if self.kernels:
            kcols = ("kernel", "registers", "shared B", "local B", "const B", "max block")
            out.append(_table(kcols, [(k.name, k.registers, k.shared_bytes, k.local_bytes,
                                       k.const_bytes, k.max_threads_per_block)
                                      for k in self.kernels]))
        return "\n".join(out)


def _table(cols, rows) -> str:
    cells = [[str(c) for c in cols]] + [[f"{v:,}" if isinstance(v, int) else str(v)
                                         for v in r] for r in rows]
    w = [max(len(r[j]) for r in cells) for j in range(len(cols))]
    return "\n".join("  " + "  ".join(c.rjust(w[j]) if j else c.ljust(w[j])
                                      for j, c in enumerate(r)) for r in cells)


def _code_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def _templates(problem) -> list:
    from ..codegen_cuda import generate_group_source
    from ..codegen_numpy import generate_source

    out = []
    for kind, prefix, groups in (("objective", "o", problem.objective_groups),
                                 ("constraints", "c", problem.constraint_groups)):
        for k, g in enumerate(groups):
            roots = [g.root] + [e for _, e in g.grad] + [e for _, e in g.hess]
            out.append(TemplateInfo(
                kind=kind, index=k, instances=int(g.size), local_vars=int(g.var_table.shape[0]),
                params=int(g.param_table.shape[0]), data_slots=int(g.data_table.shape[0]),
                nodes=len(topo_order(roots)), grad_entries=len(g.grad),
                hess_entries=len(g.hess),
                numpy_lines=_code_lines(generate_source(g.root, g.grad, g.hess)),
                cuda_lines=_code_lines(generate_group_source(g.root, g.grad, g.hess,
                                                             f"{prefix}{k}"))))
    return out


def compilation_info(problem, device: str = "cpu") -> CompilationInfo:
    """Builds the device's evaluator if it was not built yet (that is what is
    measured)."""
    ev = problem.evaluator(device)
    kw = {}
    if ev.device == "cuda":
        kw = dict(cache_hit=bool(ev.compiled_from_cache),
                  kernels=[KernelInfo(**a) for a in ev.kernel_attributes()])
    return CompilationInfo(device=ev.device, build_seconds=float(ev.build_seconds),
                           templates=_templates(problem), **kw)
