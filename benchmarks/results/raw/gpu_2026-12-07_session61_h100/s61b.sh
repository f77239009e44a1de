#!/usr/bin/env bash
# Session 61 call B: issue 21 on this GPU: the runner on case9241_pegase (IPOPT beside, CUPTI
# counters), bench_e2e case9241 in a fresh process, the first solve's profile.
# Carry .stage/x .stage/cc.
source .stage/x/env.sh
P=$(python -m benchmarks.cuda_counters build 2>$OUT/counters_build.log); echo "counters: $P"
mkdir -p $OUT/acopf
LD_PRELOAD=$P timeout 300 python -m benchmarks --suite acopf --models case9241_pegase \
  --max-buses 100000 --device cuda --no-cpu --tol 1e-6 --out $OUT/acopf > $OUT/acopf.log 2>&1
echo "runner rc $? at ${SECONDS}s"; tail -n 8 $OUT/acopf.log | cut -c1-600
for k in 1 2; do
LD_PRELOAD=$P timeout 200 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 2 \
  2>$OUT/e2e_9241_$k.err | grep E2E | tee $OUT/e2e_9241_$k.log | cut -c1-1200
done
echo "e2e at ${SECONDS}s"
timeout $((570 - SECONDS)) python .stage/x/first_profile.py case9241_pegase $OUT 2>$OUT/first_profile.err
echo "profile rc $? at ${SECONDS}s"; head -n 60 $OUT/first_case9241_pegase.prof.txt | cut -c1-160
timeout $((585 - SECONDS)) python .stage/x/prepared.py case9241_pegase 2>$OUT/prepared_9241.err | tee $OUT/prepared_9241.log
echo "prepared at ${SECONDS}s"
