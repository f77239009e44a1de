#!/usr/bin/env bash
# session 47 call H (short budget, HEAD): Van der Pol collocation N=10000 and case1803_snem on the GPU general path, iteration logs
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
ROOT=$PWD
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
( CASPAR_CACHE_DIR=/tmp/cc_diag PYTHONPATH=$ROOT:$PYTHONPATH timeout 120 python .stage/run/acopf_diag.py case1803_snem cuda > $OUT/acopf_diag.log 2>&1 ) &
CASPAR_CACHE_DIR=/tmp/cc_diag2 PYTHONPATH=$ROOT:$PYTHONPATH timeout 120 python .stage/run/vdp_diag.py 10000 cuda > $OUT/vdp_diag.log 2>&1; echo "vdp diag rc $? at ${SECONDS}s"; grep -E "^(ipopt|cuda|cpu) " $OUT/vdp_diag.log
wait
tail -n 3 $OUT/acopf_diag.log
echo "done at ${SECONDS}s"
