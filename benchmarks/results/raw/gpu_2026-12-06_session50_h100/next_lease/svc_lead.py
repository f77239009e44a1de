"""python svc_lead.py [kernel threads] [workers] [LEAD]: svc_breakdown.py (beside it in
.stage/run/) with batch/answer.py's LEAD -- the blocked clients an answered batch wakes at
once, 2, tuned on the 2-core VM -- set to the third argument: whether a 16-core host wants
more wake-ups in flight (each woken client wakes the next as it leaves; a wake-up across
cores is slower).  Prints svc_breakdown's line after "lead L"."""
import os
import runpy
import sys

sys.path.insert(0, os.getcwd())
import caspar_backend.batch.answer as answer  # noqa: E402

if len(sys.argv) > 3:
    answer.LEAD = int(sys.argv.pop(3))
print(f"lead {answer.LEAD} ", end="")
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "svc_breakdown.py"),
               run_name="__main__")
