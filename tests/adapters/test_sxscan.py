"""The compiled text decoder of the bulk SX reader (adapters/casadi/sxscan.py) on
hand-written program lines: fields, and each reason it stops."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("casadi")

from caspar_backend.adapters.casadi import sxscan  # noqa: E402

# op codes are arbitrary here: the table says what each form is
ADD, INPUT, OUTPUT = 1, 2, 3
FORMS = {"  w = (w+w);": (ADD, 3, 1, 2, -1, -1),
         "  w = argin_();": (INPUT, 3, -1, -1, 1, 2),
         "  argout_{} = w;": (OUTPUT, 3, 2, -1, 0, 1)}


def _decode(text: str, K: int, forms=FORMS):
    t = sxscan.FormTable.build(forms)
    buf = np.frombuffer(text.encode("ascii"), np.uint8)
    return sxscan.decode_lines(buf, K, t.slot_key, t.slot_form, t.op, t.runs, t.ia,
                               t.ib, t.ii, t.inz, OUTPUT)


def test_fields_of_each_form():
    text = "  w0 = argin_0(1);\n  w12 = argin_1(7);\n  w3 = (w0+w12);\n  argout_0{1} = w3;\n"
    status, _, op, w, a, b, idx, nz, starts = _decode(text, 4)
    assert status == sxscan.OK
    assert op.tolist() == [INPUT, INPUT, ADD, OUTPUT]
    assert w.tolist() == [0, 12, 3, -1]
    assert a.tolist() == [-1, -1, 0, 3] and b.tolist() == [-1, -1, 12, -1]
    assert idx.tolist() == [0, 1, -1, 0] and nz.tolist() == [0, 6, -1, 0]
    assert starts.tolist() == [0, 19, 39, 56]


@pytest.mark.parametrize("text, K, why", [
    ("  w0 = sin(w1);\n", 1, sxscan.UNKNOWN_FORM),
    ("  w0 = (w1+w);\n", 1, sxscan.RUN_COUNT),         # one run short
    ("  w0 = (w1+w2);\n", 2, sxscan.LINE_COUNT),
    ("  w0 = (w1+w2);\n  w1 = (w1+w2);\n", 1, sxscan.LINE_COUNT),
    ("  w0 = (w1+w2);", 1, sxscan.LINE_COUNT),         # no newline at the end
])
def test_stops_and_says_why(text, K, why):
    assert _decode(text, K)[0] == why


def test_run_count_is_checked():
    forms = dict(FORMS)
    forms["  w = (w+w);"] = (ADD, 4, 1, 2, -1, -1)     # a form expecting another count
    assert _decode("  w0 = (w1+w2);\n", 1, forms)[0] == sxscan.RUN_COUNT


def test_forms_read_differently_are_never_decoded():
    forms = dict(FORMS)
    forms["  w = (w+w);"] = None                       # printed alike, read differently
    assert _decode("  w0 = (w1+w2);\n", 1, forms)[0] == sxscan.UNKNOWN_FORM


def test_the_casadi_front_end_imports_no_numba():
    # the bulk reader's compiled loops load numba only when a large program is read:
    # a small model's setup does not pay numba's import
    import subprocess
    import sys

    code = ("import sys; import caspar_backend.adapters.casadi, caspar_backend.casadi; "
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
