"""One-off source conversion: proto/{common,interp_eval,ipm_core}.py (tuples of arrays)
-> caspar_backend/compiled/*.py (one float64 workspace + one int64 array, named slots).

Kept for provenance: the package files were produced by this script and then edited by
hand (docstrings, module headers).  Not run by the product."""
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from proto.flatten import _rewrite_calls  # noqa: E402

HERE = __file__.rsplit("/", 1)[0] + "/proto/"
src = "".join(open(HERE + f).read() + "\n\n" for f in ("common.py", "interp_eval.py", "ipm_core.py"))

# (tuple, index) -> (slot name, kind, ncols); kind 'f' float workspace, 'i' int array
SLOTS = {
    # evaluator (E)
    ("E", 0): ("GROUPS", "i", 24), ("E", 1): ("TAPE_OP", "i", 0), ("E", 2): ("TAPE_ARG", "i", 3),
    ("E", 3): ("TAPE_CONST", "f", 0), ("E", 4): ("TAPE_OUT", "i", 0),
    ("E", 5): ("VAR_TABLE", "i", 0), ("E", 6): ("PARAM_TABLE", "i", 0),
    ("E", 7): ("DATA_TABLE", "f", 0), ("E", 8): ("CON_ROWS", "i", 0),
    ("E", 9): ("GRAD_IDX", "i", 0), ("E", 10): ("TERM_ROWS", "i", 0),
    ("E", 11): ("ACC_ROWS", "i", 0), ("E", 12): ("JAC_MAP", "i", 0),
    ("E", 13): ("EVAL_SIZES", "i", 0), ("E", 14): ("REGISTERS", "f", 0),
    ("E", 15): ("INST_X", "f", 0), ("E", 16): ("INST_P", "f", 0), ("E", 17): ("INST_D", "f", 0),
    ("E", 18): ("OBJ_TERMS", "f", 0), ("E", 19): ("X", "f", 0), ("E", 20): ("P", "f", 0),
    ("E", 21): ("GRAD_BUF", "f", 0), ("E", 22): ("CON_TERMS", "f", 0),
    ("E", 23): ("JAC_RAW", "f", 0), ("E", 24): ("ROW_ACC", "f", 0),
    # structure (S)
    ("S", 0): ("SIZES", "i", 0), ("S", 1): ("SLACK_ROWS", "i", 0), ("S", 2): ("EQ_MASK", "i", 0),
    ("S", 3): ("LOWER_IDX", "i", 0), ("S", 4): ("UPPER_IDX", "i", 0),
    ("S", 5): ("DAMP_L", "f", 0), ("S", 6): ("DAMP_U", "f", 0),
    ("S", 7): ("DAMP_L_IDX", "i", 0), ("S", 8): ("DAMP_U_IDX", "i", 0),
    ("S", 9): ("JAC_ROWS", "i", 0), ("S", 10): ("JAC_COLS", "i", 0),
    ("S", 11): ("HESS_ROWS", "i", 0), ("S", 12): ("HESS_COLS", "i", 0),
    ("S", 13): ("KKT_MAP", "i", 0), ("S", 14): ("HESS_OFFDIAG", "i", 0),
    ("S", 15): ("COL_SQ_IDX", "i", 0), ("S", 16): ("PRIV_ENTRY", "i", 0),
    ("S", 17): ("PRIV_COL", "i", 0), ("S", 18): ("PRIV_ROW", "i", 0),
    ("S", 19): ("PRIV_NONE", "f", 0), ("S", 20): ("K_INDPTR", "i", 0),
    ("S", 21): ("K_INDICES", "i", 0), ("S", 22): ("K_DIAG_POS", "i", 0),
    ("S", 23): ("C_INDPTR", "i", 0), ("S", 24): ("C_INDICES", "i", 0),
    ("S", 25): ("C_MAP", "i", 0), ("S", 26): ("PERM", "i", 0), ("S", 27): ("L_INDPTR", "i", 0),
    ("S", 28): ("ETREE", "i", 0), ("S", 29): ("L_COL_NNZ", "i", 0),
    ("S", 30): ("EQ_ROWS", "i", 0), ("S", 31): ("UJAC_ROWS", "i", 0),
    # scaled problem (V)
    ("V", 0): ("G", "f", 0), ("V", 1): ("OBJ_SCALE", "f", 0), ("V", 2): ("CON_SCALE", "f", 0),
    ("V", 3): ("G_OFFSET", "f", 0), ("V", 4): ("GRAD_F", "f", 0), ("V", 5): ("JAC_VALS", "f", 0),
    ("V", 6): ("JAC_SCALE", "f", 0), ("V", 7): ("LAMBDA", "f", 0), ("V", 8): ("W_LOWER", "f", 0),
    ("V", 9): ("W_UPPER", "f", 0), ("V", 10): ("SLACK_SCALE", "f", 0),
    ("V", 11): ("LBG", "f", 0), ("V", 12): ("UBG", "f", 0),
    # iterate (IT)
    ("IT", 0): ("W", "f", 0), ("IT", 1): ("Y", "f", 0), ("IT", 2): ("ZL", "f", 0),
    ("IT", 3): ("ZU", "f", 0), ("IT", 4): ("F_CUR", "f", 0), ("IT", 5): ("H", "f", 0),
    ("IT", 6): ("GRAD_W", "f", 0), ("IT", 7): ("JV", "f", 0), ("IT", 8): ("HV", "f", 0),
    # quantities scratch (Q)
    ("Q", 0): ("DUAL_RES", "f", 0), ("Q", 1): ("SL", "f", 0), ("Q", 2): ("SU", "f", 0),
    ("Q", 3): ("SCRATCH", "f", 0), ("Q", 4): ("SL_TRIAL", "f", 0), ("Q", 5): ("SU_TRIAL", "f", 0),
    # KKT (KT)
    ("KT", 0): ("K_VALUES", "f", 0), ("KT", 1): ("K_STATIC", "f", 0), ("KT", 2): ("K_SOURCE", "f", 0),
    ("KT", 3): ("EW", "f", 0), ("KT", 4): ("EC", "f", 0), ("KT", 5): ("COL_SQ", "f", 0),
    ("KT", 6): ("PRIV_SUM", "f", 0), ("KT", 7): ("KKT_RHS", "f", 0), ("KT", 8): ("KKT_SOL", "f", 0),
    ("KT", 9): ("KKT_RES", "f", 0), ("KT", 10): ("KKT_CORR", "f", 0), ("KT", 11): ("KKT_KX", "f", 0),
    ("KT", 12): ("KKT_LOWER", "f", 0),
    # LDL factors (L)
    ("L", 0): ("C_VALUES", "f", 0), ("L", 1): ("L_VALUES", "f", 0), ("L", 2): ("LDL_D", "f", 0),
    ("L", 3): ("LDL_DINV", "f", 0), ("L", 4): ("LDL_YVALS", "f", 0), ("L", 5): ("L_INDICES", "i", 0),
    ("L", 6): ("LDL_YMARK", "i", 0), ("L", 7): ("LDL_YIDX", "i", 0), ("L", 8): ("LDL_ELIM", "i", 0),
    ("L", 9): ("LDL_NEXT", "i", 0), ("L", 10): ("LDL_T", "f", 0),
    # direction, trial point, line search (DR)
    ("DR", 0): ("DW", "f", 0), ("DR", 1): ("DY", "f", 0), ("DR", 2): ("DZL", "f", 0),
    ("DR", 3): ("DZU", "f", 0), ("DR", 4): ("GRAD_PHI", "f", 0), ("DR", 5): ("RHS_W", "f", 0),
    ("DR", 6): ("SIGMA", "f", 0), ("DR", 7): ("RHS_C", "f", 0), ("DR", 8): ("W_TRIAL", "f", 0),
    ("DR", 9): ("H_TRIAL", "f", 0), ("DR", 10): ("C_SOC", "f", 0), ("DR", 11): ("UNUSED_DR11", "f", 0),
    ("DR", 12): ("IC_STATE", "f", 0), ("DR", 13): ("LS_STATE", "f", 0), ("DR", 14): ("DW_SOC", "f", 0),
    ("DR", 15): ("DY_SOC", "f", 0), ("DR", 16): ("H_SOC", "f", 0), ("DR", 17): ("DZL_SOC", "f", 0),
    ("DR", 18): ("DZU_SOC", "f", 0), ("DR", 19): ("GRAD_W_NEW", "f", 0), ("DR", 20): ("JV_NEW", "f", 0),
}
SIZES = ["n", "m", "nw", "nx", "ns", "nL", "nU", "nj", "nju", "nh", "nkkt", "nnzK", "nnzL", "neq",
         "npriv", "noff", "nsrc", "ncolsq", "filter_cap"]
EVAL_SIZES = ["n", "m", "nobj", "ngroups", "has_jac_map"]
sys.path.insert(0, "/work/wt_compiled/prototypes/compiled_ipm")
OPT_NAMES = None
exec(re.search(r"OPT_NAMES = \[.*?\]\n", open(HERE + "builder.py").read(), re.S).group(0))
OPT_NAMES = [n if n else ("nlp_scaling_gradient_based" if i == 21 else "private_pivot_fraction")
             for i, n in enumerate(OPT_NAMES)]

# ---- option indices and size fields
src = re.sub(r"\bO\[(\d+)\]", lambda m: f"O[OPT_{OPT_NAMES[int(m.group(1))].upper()}]", src)
src = re.sub(r"\bS\[0\]\[(\d+)\]", lambda m: f"SI[SZ_{SIZES[int(m.group(1))].upper()}]", src)
src = re.sub(r"\bSI\[(\d+)\]", lambda m: f"SI[SZ_{SIZES[int(m.group(1))].upper()}]", src)
src = re.sub(r"\bE\[13\]\[(\d+)\]", lambda m: f"_i(Ib, IO, I_EVAL_SIZES)[EV_{EVAL_SIZES[int(m.group(1))].upper()}]", src)
src = src.replace("SI = S[0]", "SI = _i(Ib, IO, I_SIZES)")
# FT/FI become slots of the buffers
names = set(re.findall(r"^def (\w+)\(", src, flags=re.M))
src = _rewrite_calls(src, names)


def sub(m):
    name, kind, c = SLOTS[(m.group(1), int(m.group(2)))]
    if kind == "f":
        return f"_f(Fb, FO, F_{name})"
    return f"_i2(Ib, IO, I_{name}, {c})" if c else f"_i(Ib, IO, I_{name})"


src = re.sub(r"\b(E|S|V|IT|Q|KT|L|DR)\[(\d+)\]", sub, src)
open("/tmp/compiled_meas/converted.py", "w").write(src)
# slot table for slots.py
fl = [(n, c) for (n, k, c) in SLOTS.values() if k == "f"]
il = [(n, c) for (n, k, c) in SLOTS.values() if k == "i"]
with open("/tmp/compiled_meas/slots_gen.py", "w") as f:
    f.write("FLOAT_SLOTS = (\n" + "".join(f"    {n!r},\n" for n, _ in fl) + ")\n")
    f.write("INT_SLOTS = (\n" + "".join(f"    {n!r},\n" for n, _ in il) + ")\n")
    f.write("OPTION_NAMES = (\n" + "".join(f"    {n!r},\n" for n in OPT_NAMES) + ")\n")
    f.write(f"SIZE_FIELDS = {tuple(SIZES)!r}\nEVAL_SIZE_FIELDS = {tuple(EVAL_SIZES)!r}\n")
print(len(fl), len(il))
