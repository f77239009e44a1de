export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/site:$PWD
mkdir -p ~/.cache && tar -xzf .gpurun/cache.tgz -C ~/.cache
timeout 120 python .gpurun/kt.py distinct 3 1 8 33 66 132 264 1000 2>&1 | grep "^kt" | tee $OUT/kt.txt
timeout 120 python .gpurun/kt.py same 3 1 8 33 66 132 264 1000 2>&1 | grep "^kt" | tee -a $OUT/kt.txt
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
for B in 1 132; do timeout 150 /usr/local/cuda/bin/ncu $S -k regex:_solve_rows -c 1 python .gpurun/kt.py same 1 $B > $OUT/ncu_same_$B.txt 2>&1; done
grep -h -E "Duration|Elapsed Cycles|SM Active Cycles|L1/TEX Hit|L2 Hit|DRAM Through|Memory Throughput|Executed Ipc A|Issue Slots Busy|Registers Per|Local Memory|Stack Size|Warp Cycles Per Issued|No Eligible|Achieved Occ" $OUT/ncu_same_*.txt
