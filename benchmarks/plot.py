"""Figures of the runner's rows (matplotlib, optional: each function returns a note
instead of failing when it is missing).

* :func:`plot` -- solve time against variables n, log-log, one marker per suite;
* :func:`performance_profile` -- the Dolan-More profile of solve times: for solver s and
  factor tau >= 1, rho_s(tau) = |{p : t_{p,s} <= tau min_s' t_{p,s'}}| / |P|, drawn
  against log2 tau; a problem a solver did not solve counts as t = inf for it.
"""

from __future__ import annotations

import math
import os

from benchmarks.cases import SUITES

COLORS = {"ipopt": "tab:blue", "cpu": "tab:orange", "cuda": "tab:green"}
LABELS = {"ipopt": "IPOPT", "cpu": "caspar CPU", "cuda": "caspar GPU"}
NO_MATPLOTLIB = "plot skipped: matplotlib is not installed (pip install 'caspar-backend[bench]')"


def _pyplot():
    """matplotlib's pyplot on the Agg backend, or None."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _save_loglog(plt, fig, ax, path, xlabel, ylabel, title) -> str:
    """Log-log axes, labels, grid and legend; the figure saved to ``path`` and closed;
    the markdown note."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"plot: {os.path.basename(path)}"


def plot(rows, path, title) -> str:
    """Log-log solve time against n; returns a note for the markdown."""
    plt = _pyplot()
    if plt is None:
        return NO_MATPLOTLIB
    fig, ax = plt.subplots(figsize=(7, 5))
    markers = {"acopf": "o", "cops": "s", "ocp": "^", "lsq": "D"}
    colors, labels = COLORS, LABELS
    drawn = 0
    for suite in SUITES:
        sr = sorted((r for r in rows if r["suite"] == suite), key=lambda r: r["n"])
        for who in ("ipopt", "cpu", "cuda"):
            pts = [(r["n"], r[f"{who}_solve_s"]) for r in sr
                   if isinstance(r.get(f"{who}_solve_s"), float)
                   and math.isfinite(r[f"{who}_solve_s"]) and r[f"{who}_solve_s"] > 0]
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker=markers[suite], color=colors[who],
                    linestyle="-" if suite in ("ocp", "lsq") else "none",
                    label=f"{suite}: {labels[who]}")
            drawn += 1
    if not drawn:
        plt.close(fig)
        return "plot skipped: no finite solve times"
    return _save_loglog(plt, fig, ax, path, "variables n", "solve time (s)", title)


def profile_ratios(times: dict[str, list[float]]) -> dict[str, list[float]]:
    """Performance ratios r_{p,s} = t_{p,s} / min_s' t_{p,s'} per solver, sorted.

    ``times[s][p]``: solver s's time on problem p, ``inf`` (or nan) where s did not solve
    p.  A problem no solver solved is left out; an unsolved entry has ratio inf.
    """
    solvers = list(times)
    n = len(next(iter(times.values()), []))
    out: dict[str, list[float]] = {s: [] for s in solvers}
    for p in range(n):
        ts = [times[s][p] if math.isfinite(times[s][p]) and times[s][p] > 0 else math.inf
              for s in solvers]
        best = min(ts)
        if not math.isfinite(best):
            continue
        for s, t in zip(solvers, ts):
            out[s].append(t / best)
    return {s: sorted(r) for s, r in out.items()}


def performance_profile(panels: list[tuple[str, dict[str, list[float]]]], path: str) -> str:
    """Draw one Dolan-More profile per ``(title, times)`` panel (``times`` as in
    :func:`profile_ratios`, keys 'ipopt', 'cpu', 'cuda') side by side into ``path``;
    returns a note for the markdown."""
    panels = [(t, profile_ratios(times)) for t, times in panels]
    panels = [(t, r) for t, r in panels if any(r.values())]
    if not panels:
        return "profile skipped: no solved problems"
    plt = _pyplot()
    if plt is None:
        return NO_MATPLOTLIB
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (title, ratios) in zip(axes[0], panels):
        finite = [r for rs in ratios.values() for r in rs if math.isfinite(r)]
        top = max(1.0, math.log2(max(finite))) * 1.05
        for who, rs in ratios.items():
            n = len(rs)
            xs = [0.0] + [math.log2(r) for r in rs if math.isfinite(r)] + [top]
            ys = [0.0] + [(k + 1) / n for k in range(len(xs) - 2)]
            ys.append(ys[-1])
            ax.step(xs, ys, where="post", color=COLORS.get(who), label=LABELS.get(who, who))
        ax.set_xlim(0.0, top)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel("log2 tau (solve time within a factor tau of the fastest)")
        ax.set_ylabel("fraction of problems")
        ax.set_title(title, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return f"profile: {os.path.basename(path)}"


def time_vs_size(series: dict[str, list[tuple[float, float]]], path: str, xlabel: str,
                 title: str) -> str:
    """Log-log wall time against a size, one line per ``series`` entry (label ->
    ``[(size, seconds), ...]``); returns a note for the markdown."""
    plt = _pyplot()
    if plt is None:
        return NO_MATPLOTLIB
    fig, ax = plt.subplots(figsize=(7, 5))
    drawn = 0
    for label, pts in series.items():
        pts = sorted((x, y) for x, y in pts if math.isfinite(y) and y > 0)
        if pts:
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker="o", label=label)
            drawn += 1
    if not drawn:
        plt.close(fig)
        return "plot skipped: no finite times"
    return _save_loglog(plt, fig, ax, path, xlabel, "wall time, end to end (s)", title)
