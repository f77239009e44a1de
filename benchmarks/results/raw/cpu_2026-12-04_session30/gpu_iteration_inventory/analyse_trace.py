"""Segments (launches between host reads) of a trace from trace_iteration.py.

    python analyse_trace.py trace_case118_ieee.json [--show IT]
"""

from __future__ import annotations

import argparse
import collections
import json

LAUNCH = {"cupy", "fused", "raw", "cudss", "eval"}
# real launches per evaluator call (caspar_backend/evaluators/cuda_eval.py), given the
# layout's split rows (term segment sum) and raw Jacobian (jac segment sum)


def eval_launches(name, layout):
    return {"obj": 2, "obj_unread": 2, "grad": 2,
            "cons": 1 + (layout.get("term_rows", 0) > 0),
            "jac_values": 1 + bool(layout.get("jac_map")),
            "hess_values": 1}[name]


def launches_of(e, layout):
    if e["kind"] == "eval":
        return eval_launches(e["name"], layout)
    if e["kind"] == "cudss":
        # copyto + library phase (+ x.copy() for solve): host-side launches of caspar's
        return 3 if "SOLVE" in e["name"] else 2
    return 1


def label(e):
    s = e["name"]
    if e["kind"] == "fused":
        s = "fused " + s
    elif e["kind"] == "eval":
        s = "eval." + s
    elif e["kind"] == "raw":
        s = "raw " + s
    elif e["kind"] == "cudss":
        s = "cuDSS " + s
    return s


def segments(events):
    segs, cur = [], []
    for e in events:
        if e["kind"] == "read":
            segs.append((cur, e))
            cur = []
        else:
            cur.append(e)
    segs.append((cur, None))
    return segs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--show", type=int, action="append", default=[])
    ap.add_argument("--detail", action="store_true")
    a = ap.parse_args()
    t = json.load(open(a.path))
    lay = t["layout"]
    its = [i for i in t["iters"] if not i.get("last")]
    print(f"# {t['problem']} {t['size']} n={t['n']} m={t['m']} {t['status']} "
          f"{t['iterations']} it; layout {lay}")
    # per iteration summary
    tot = collections.Counter()
    shapes = collections.Counter()
    for i in its[1:]:          # from the second iteration on (as count_device_ops)
        evs = i["events"]
        n_l = sum(launches_of(e, lay) for e in evs if e["kind"] in LAUNCH)
        n_ops = sum(1 for e in evs if e["kind"] in LAUNCH and e["kind"] != "eval")
        n_r = sum(1 for e in evs if e["kind"] == "read")
        n_a = sum(1 for e in evs if e["kind"] == "alloc" or e.get("alloc"))
        tot["it"] += 1
        tot["launch"] += n_l
        tot["ops"] += n_ops
        tot["read"] += n_r
        tot["alloc"] += n_a
        shape = tuple(e["site"] for e in evs if e["kind"] == "read")
        shapes[shape] += 1
        print(f"it {i['it']:3d} mu={i['mu']:.2e} launches={n_l:3d} reads={n_r:2d} "
              f"allocs={n_a:3d} ls={i['info'].get('ls')} tag={i['info'].get('tag')} "
              f"dw={i['info'].get('delta_w')}")
    n = max(1, tot["it"])
    print(f"\nper iteration (from the 2nd): launches {tot['launch']/n:.1f} (array ops "
          f"{tot['ops']/n:.1f}), reads {tot['read']/n:.2f}, allocations {tot['alloc']/n:.1f}")
    print("\n## read sequences (iteration shapes)")
    for s, c in shapes.most_common():
        print(c, " -> ".join(x.split("/")[-1] for x in s))
    # segment signatures keyed by (previous read site, read site)
    segsig = collections.defaultdict(collections.Counter)
    for i in its[1:]:
        prev = "top"
        for evs, r in segments(i["events"]):
            key = (prev, r["site"] + " " + r["name"] if r else "end")
            sig = tuple((label(e), e["site"]) for e in evs if e["kind"] in LAUNCH)
            segsig[key][sig] += 1
            prev = r["site"] if r else "end"
    print("\n## segments: (after read, ending read) -> distinct launch sequences")
    for key, c in segsig.items():
        print(f"\n### {key[0]} -> {key[1]}: {sum(c.values())} occurrences, "
              f"{len(c)} distinct sequences; launches {[sum(1 for _ in s) for s in c]}")
    for it in a.show:
        i = next(x for x in its if x["it"] == it)
        print(f"\n## iteration {it} (mu {i['mu']}) in order")
        k = 0
        for e in i["events"]:
            if e["kind"] == "read":
                print(f"  ==== READ {e['name']} n={e.get('n')} @ {e['site']}")
                continue
            k += 1
            extra = ""
            if e.get("scalars"):
                extra += f" scalars={e['scalars']}"
            if e.get("alloc"):
                extra += " ALLOC"
            if a.detail and e.get("args"):
                extra += f" args={e['args']}"
            print(f"  {k:3d} {e['kind']:6s} {label(e):40s} @ {e['site']}{extra}")


if __name__ == "__main__":
    main()
