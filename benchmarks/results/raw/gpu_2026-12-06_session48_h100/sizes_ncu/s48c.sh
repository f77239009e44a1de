#!/usr/bin/env bash
# IK 10^4 on the CUDA kernel: HEAD (slow since 9af6051) against b0c3f53 (fast): sizes, L1 carveout, columns, ncu counters
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
ROOT=$PWD
B0=$ROOT/.stage/bis/b0c3f53
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
which ncu nsys | tee $OUT/tools.txt; ls /usr/local/cuda*/bin 2>/dev/null | grep -E "ncu|nsys|compute" | tee -a $OUT/tools.txt
( CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
( CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1 ) &
( CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH python -c "from caspar_backend.compiled.cuda.launch import kernel; kernel(True)" > $OUT/cuda_cols_compile.log 2>&1 ) &
( cd $B0 && CASPAR_CACHE_DIR=/tmp/cb PYTHONPATH=$B0:$PYTHONPATH python -m caspar_backend.compiled > $OUT/b0_cpu_compile.log 2>&1 ) &
( cd $B0 && CASPAR_CACHE_DIR=/tmp/cb PYTHONPATH=$B0:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/b0_cuda_compile.log 2>&1 ) &
wait
echo "compiled at ${SECONDS}s"; tail -q -n 1 $OUT/*compile.log
CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH timeout 100 python .stage/run/s48c_l1.py ik 1000,2500,5000,7500,10000,20000 rows,columns_10000 2>&1 | tee $OUT/l1.txt
CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH timeout 60 python .stage/run/s48c_l1.py ik 10000 rows_l1 2>&1 | tee -a $OUT/l1.txt
( cd $B0 && CASPAR_CACHE_DIR=/tmp/cb PYTHONPATH=$B0:$PYTHONPATH timeout 60 python s48c_l1.py ik 2500,5000,10000,20000 rows 2>&1 | sed 's/^/b0c3f53 /' | tee -a $OUT/l1.txt )
echo "timed at ${SECONDS}s"
M=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
if which ncu >/dev/null 2>&1; then
  CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH timeout 90 ncu --metrics $M -k regex:solve -c 1 python .stage/run/s48c_l1.py ik 10000 rows1 > $OUT/ncu_head.txt 2>&1; tail -n 20 $OUT/ncu_head.txt
  ( cd $B0 && CASPAR_CACHE_DIR=/tmp/cb PYTHONPATH=$B0:$PYTHONPATH timeout 90 ncu --metrics $M -k regex:solve -c 1 python s48c_l1.py ik 10000 rows1 > $OUT/ncu_b0.txt 2>&1; tail -n 20 $OUT/ncu_b0.txt )
fi
echo "done at ${SECONDS}s"
tar -C /tmp -czf $OUT/cc.tgz cc 2>/dev/null; ls -la $OUT/cc.tgz
