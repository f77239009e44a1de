"""Where the time went: the setup phases of a compiled problem and the phases of a solve.

``solve_profile(problem, result=None)`` -> :class:`Profile`; ``str()`` prints

    setup    group + derive                 (Problem construction: ``compile_time``)
             evaluator <device>             (code generation + compilation + tables, per
                                             device built: ``Evaluator.build_seconds``)
    solve    the phases of ``result.timings`` (function evaluations, KKT assembly,
             factorization, solve, other; the solve's own setup) in seconds, share of
             the solve and milliseconds per iteration, and the evaluation counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: the solver's timer names in the order they are printed (the rest follow by name)
_ORDER = ("setup", "function_evaluations", "kkt_assembly", "kkt_factorization", "kkt_solve",
          "other")


@dataclass(frozen=True)
class Profile:
    """Final.  ``setup``: [(phase, seconds)]; ``solve``: [(phase, seconds)] or empty;
    ``iterations`` and ``counts`` of the solve (0 / {} without one)."""

    setup: list = field(default_factory=list)
    solve: list = field(default_factory=list)
    total: float = 0.0
    iterations: int = 0
    counts: dict = field(default_factory=dict)

    def __str__(self) -> str:
        out = ["caspar profile", "  setup"]
        out += [f"    {name:<28} {sec:10.4f} s" for name, sec in self.setup]
        if self.solve:
            it = max(1, self.iterations)
            out.append(f"  solve ({self.iterations} iterations, {self.total:.4f} s)")
            # the solve's own setup happens once, not per iteration
            out += [f"    {name:<28} {sec:10.4f} s  {100 * sec / max(self.total, 1e-300):5.1f} %"
                    + ("" if name == "setup" else f"  {1e3 * sec / it:9.3f} ms/it")
                    for name, sec in self.solve]
            if self.counts:
                out.append("    evaluations: " + ", ".join(f"{k} {v}" for k, v in
                                                          self.counts.items()))
        return "\n".join(out)


def solve_profile(problem, result=None) -> Profile:
    setup = [("group + derive", float(problem.compile_time))]
    setup += [(f"evaluator {dev}", float(ev.build_seconds))
              for dev, ev in sorted(problem._evaluators.items())]
    if result is None:
        return Profile(setup=setup)
    t = dict(result.timings)
    total = float(t.pop("total", sum(t.values())))
    names = [k for k in _ORDER if k in t] + sorted(k for k in t if k not in _ORDER)
    return Profile(setup=setup, solve=[(k, float(t[k])) for k in names], total=total,
                   iterations=int(result.iterations), counts=dict(result.counts))
