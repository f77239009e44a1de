#!/usr/bin/env bash
# Session 61 call E: kkt_time.py (case9241's KKT with and without slack columns on cuDSS).
source .stage/x/env.sh
timeout 300 python .stage/x/kkt_time.py .stage/x/kkt9241.npz 2>&1 | tee $OUT/kkt_time.log | grep -v Warn
