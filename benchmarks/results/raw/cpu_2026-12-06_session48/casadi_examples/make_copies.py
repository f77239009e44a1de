import re, shutil, difflib
SRC = "/tmp/casadi_sweep/src/docs/examples/python/"
KEEP = """biegler_10_1 dae_collocation dae_multiple_shooting dae_single_shooting direct_collocation
direct_multiple_shooting direct_single_shooting ipopt_nl mhe_spring_damper race_car rocket rosenbrock
simple_nlp sysid vdp_collocation vdp_collocation2""".split()
MA27 = {"dae_collocation", "dae_multiple_shooting", "dae_single_shooting", "vdp_collocation", "vdp_collocation2"}
out = open("/tmp/casadi_sweep/changes.diff", "w")
for n in KEEP:
    s = open(SRC + n + ".py").read()
    shutil.copy(SRC + n + ".py", f"ex/ipopt/{n}.py")
    if n in MA27:
        # IPOPT baseline without HSL (ma27 is not in this casadi build): drop the linear_solver line
        m = re.sub(r'^opts\["ipopt\.linear_solver"\] = .ma27.\n', '', s, flags=re.M)
        m = re.sub(r"opts = \{'ipopt\.linear_solver':'ma27'\}", "opts = {}", m)
        m = re.sub(r'opts = \{"ipopt\.linear_solver":"ma27"\}', "opts = {}", m)
        assert m != s, n
        open(f"ex/ipopt/{n}_mumps.py", "w").write(m)
        out.writelines(difflib.unified_diff(s.splitlines(1), m.splitlines(1), f"orig/{n}.py", f"ipopt/{n}_mumps.py"))
    lines = s.splitlines(1)
    last = max(i for i, l in enumerate(lines) if re.match(r"(import casadi|from casadi)", l))
    lines.insert(last + 1, "from caspar_backend.casadi import nlpsol, Opti\n")
    c = "".join(lines)
    c = c.replace("ca.nlpsol(", "nlpsol(").replace("ca.Opti(", "Opti(")
    c = c.replace('"ipopt.', '"caspar.').replace("'ipopt.", "'caspar.")
    c = c.replace('"ipopt"', '"caspar"').replace("'ipopt'", "'caspar'")
    open(f"ex/caspar/{n}.py", "w").write(c)
    out.writelines(difflib.unified_diff(s.splitlines(1), c.splitlines(1), f"orig/{n}.py", f"caspar/{n}.py"))
